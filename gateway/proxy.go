package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// The `mcp` tool replaces every upstream schema the model would otherwise
// see, so its name, description and schema together are kept well under
// 1,000 bytes (TestProxyToolSize).
const proxyDescription = `MCP gateway: tools of many servers. mcp({}) status; mcp({server}) list its tools; mcp({search:"words",offset,limit}) find tools; mcp({describe:"tool"}) parameters; mcp({tool:"name",args:{...}}) call; mcp({connect:"server"}) (re)connect; mcp({prompts:true}); mcp({prompt:"name",args}); ` +
	`mcp({script:"js"}) many calls in one: an async body, await tools.call(name,args) → {ok,data|error}, tools.search(q), tools.describe(name); return the answer.`

const proxySchema = `{"type":"object","properties":{` +
	`"tool":{"type":"string"},` +
	`"args":{"type":"object"},` +
	`"search":{"type":"string"},` +
	`"regex":{"type":"boolean"},` +
	`"includeSchemas":{"type":"boolean"},` +
	`"describe":{"type":"string"},` +
	`"server":{"type":"string"},` +
	`"offset":{"type":"integer"},` +
	`"limit":{"type":"integer"},` +
	`"connect":{"type":"string"},` +
	`"prompts":{"type":"boolean"},` +
	`"prompt":{"type":"string"},` +
	`"read":{"type":"string"},` +
	`"script":{"type":"string","description":"Sandboxed JavaScript"},` +
	`"timeoutMs":{"type":"integer"}}}`

func proxyTool() *mcp.Tool {
	return &mcp.Tool{Name: "mcp", Description: proxyDescription, InputSchema: json.RawMessage(proxySchema)}
}

// proxyArgs are the `mcp` tool's arguments. Args stays raw: it may be an
// object or a JSON string holding one.
type proxyArgs struct {
	Tool           string          `json:"tool"`
	Args           json.RawMessage `json:"args"`
	Search         string          `json:"search"`
	Regex          bool            `json:"regex"`
	IncludeSchemas bool            `json:"includeSchemas"`
	Describe       string          `json:"describe"`
	Server         string          `json:"server"`
	Connect        string          `json:"connect"`
	Prompts        bool            `json:"prompts"`
	Prompt         string          `json:"prompt"`
	Offset         int             `json:"offset"`
	Limit          int             `json:"limit"`
	Read           string          `json:"read"`
	Script         string          `json:"script"`
	TimeoutMs      int64           `json:"timeoutMs"`
}

func (ss *session) handleProxy(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a proxyArgs
	if raw := req.Params.Arguments; len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &a); err != nil {
			return errorResult("Invalid arguments for mcp: %v. Use mcp({}) for status or mcp({tool:\"name\",args:{...}}) to call a tool.", err), nil
		}
	}
	gw := ss.gw
	switch {
	case a.Tool != "":
		return gw.callResult(ctx, ss.sdkToolCall(ctx, req, a.Tool, a.Args, viaProxy)), nil
	case a.Script != "":
		return gw.runScript(ctx, ss, req, a.Script, a.TimeoutMs), nil
	case a.Read != "":
		return gw.readResult(ss.view(), a.Read, a.Offset, a.Limit), nil
	case a.Prompt != "":
		v := gw.awaitDiscovery(ctx, ss.overlay.Load())
		return ss.getPromptText(ctx, v, a.Prompt, a.Args), nil
	case len(a.Args) > 0 && !isEmptyJSON(a.Args):
		return errorResult("args given without tool: say which tool to call, e.g. mcp({tool:\"server_tool\",args:{...}}). Find tools with mcp({search:\"words\"})."), nil
	case a.Connect != "":
		return gw.connect(ctx, ss.view(), a.Connect), nil
	}
	if unknown := unknownKeys(req.Params.Arguments); len(unknown) > 0 && a.Describe == "" && a.Search == "" && a.Server == "" && !a.Prompts {
		return errorResult("Unknown argument(s) %s for mcp. It takes tool+args, search, describe, server, connect, prompts, prompt+args, script or read; mcp({}) shows status.", strings.Join(unknown, ", ")), nil
	}
	// Answers about tools wait, bounded, for servers still being
	// discovered, and say which ones are still missing.
	v := gw.awaitDiscovery(ctx, ss.overlay.Load())
	var res *mcp.CallToolResult
	switch {
	case a.Prompts:
		res = gw.listPrompts(v, a.Server)
	case a.Describe != "":
		res = gw.describe(v, ss.resolveName(v, a.Describe))
	case a.Search != "":
		res = gw.search(v, a)
	case a.Server != "":
		res = gw.listServer(ctx, v, a.Server)
	default:
		res = textResult(gw.statusText(v))
	}
	if note := gw.discoveryNote(gw.catalog.ViewFor(v.Config)); note != "" && (a.Server == "" || a.Prompts) {
		appendText(res, note)
	}
	return res, nil
}

// appendText adds text to a result's last text block (or a new one).
func appendText(res *mcp.CallToolResult, text string) {
	if n := len(res.Content); n > 0 {
		if tc, ok := res.Content[n-1].(*mcp.TextContent); ok {
			tc.Text += text
			return
		}
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: strings.TrimLeft(text, "\n")})
}

// unknownKeys lists argument names the mcp tool does not take.
func unknownKeys(raw json.RawMessage) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []string
	for k := range m {
		switch k {
		case "tool", "args", "search", "regex", "includeSchemas", "describe", "server", "connect", "prompts", "prompt", "script", "timeoutMs", "offset", "limit", "read":
		default:
			out = append(out, strconv.Quote(k))
		}
	}
	slices.Sort(out)
	return out
}

func isEmptyJSON(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	return s == "" || s == "null" || s == "{}" || s == `""`
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func errorResult(format string, a ...any) *mcp.CallToolResult {
	r := textResult(fmt.Sprintf(format, a...))
	r.IsError = true
	return r
}

// gatewayKeys are the `mcp` tool's own argument names; finding them inside
// args usually means the model nested a gateway call by mistake.
var gatewayKeys = []string{"tool", "args", "search", "describe", "connect", "server"}

// decodeArgs turns the args value (object, JSON string holding an object,
// or absent) into the arguments forwarded upstream, kept as raw JSON (the
// upstream gets the bytes the client sent), and those of the object's
// top-level members that are the mcp tool's own argument names.
func decodeArgs(raw json.RawMessage) (json.RawMessage, map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage("{}"), nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, nil, err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			return json.RawMessage("{}"), nil, nil
		}
		raw = []byte(s)
	}
	if raw[0] == '{' && json.Valid(raw) {
		// The usual case, read without decoding the values: only the
		// mcp tool's own argument names matter (nestedGatewayKeys).
		var m map[string]json.RawMessage
		jsonwire.Members(raw, func(k, v []byte) bool {
			if slices.Contains(gatewayKeys, string(k)) {
				if m == nil {
					m = make(map[string]json.RawMessage)
				}
				m[string(k)] = v
			}
			return true
		})
		return json.RawMessage(raw), m, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("args must be a JSON object: %v", err)
	}
	if m == nil {
		return json.RawMessage("{}"), nil, nil
	}
	return json.RawMessage(raw), m, nil
}

// findTool looks up the tool behind a gateway name, waiting for servers
// being discovered and connecting those whose tools are not known yet if
// it has to; failed is the answer when there is no such tool.
func (s *Server) findTool(ctx context.Context, v *registry.View, name string) (t *registry.Tool, _ *registry.View, failed *mcp.CallToolResult) {
	t, ok := v.Lookup(name)
	if !ok {
		// Servers being discovered may have it.
		v = s.awaitDiscovery(ctx, v.Config)
		t, ok = v.Lookup(name)
	}
	if !ok {
		// The tool may belong to a server whose tools are not known yet
		// (never connected, nothing cached): connect it, as the call needs it.
		cands, untrusted := serversFor(v, name)
		if len(cands) == 0 && untrusted != nil {
			return nil, v, errorResult("%v", untrustedError(untrusted))
		}
		if len(cands) > 0 {
			s.connectAll(ctx, cands, name)
			v = s.catalog.ViewFor(v.Config)
			t, ok = v.Lookup(name)
		}
	}
	if !ok {
		return nil, v, s.unknownTool(v, name)
	}
	return t, v, nil
}

// callOutcome is a call's outcome label on the call metric.
func callOutcome(ctx context.Context, res *mcp.CallToolResult, err error) string {
	var te *upstream.TimeoutError
	switch {
	case err != nil && ctx.Err() != nil:
		return "canceled"
	case errors.As(err, &te):
		return "timeout"
	case err != nil:
		return "error"
	case res != nil && res.IsError:
		return "tool_error"
	}
	return "ok"
}

// shapeResult is what the client gets of a tool's result: passed through
// for a tool it sees itself (exposed), but for content its protocol does
// not know; made readable by any model for the mcp tool; cut to limit;
// and with the tool's parameters after an error.
func shapeResult(res *mcp.CallToolResult, t *registry.Tool, protocol string, exposed bool, limit int, save content.Saver) *mcp.CallToolResult {
	structured := res.StructuredContent
	if exposed {
		res = content.Guard(content.PassThrough(res, protocol), limit, save)
	} else {
		res = content.Guard(content.ForModel(res, protocol, save), limit, save)
	}
	if exposed && t.Def.OutputSchema != nil {
		res.StructuredContent = structured
	}
	if res.IsError {
		res.Content = append(res.Content, &mcp.TextContent{Text: paramsText(t)})
	}
	return res
}

// checkArgs checks a call's arguments: a JSON object (or nothing), and
// not the mcp tool's own arguments nested by mistake. problem, if not
// empty, says what is wrong, for the model.
func checkArgs(t *registry.Tool, rawArgs json.RawMessage) (args json.RawMessage, problem string) {
	args, keys, err := decodeArgs(rawArgs)
	if err != nil {
		return nil, fmt.Sprintf("Invalid args for %s: %v", t.Name, err)
	}
	if nested := nestedGatewayKeys(t, keys); len(nested) > 0 {
		return nil, fmt.Sprintf("args for %s contain %s, which are arguments of the mcp tool itself, not of %s. Pass the tool's own arguments directly: mcp({tool:%q,args:{...}}).",
			t.Name, strings.Join(nested, ", "), t.Name, t.Name)
	}
	return args, ""
}

// outputLimit resolves settings.maxOutputBytes.
func outputLimit(setting int) int {
	if setting == 0 {
		return registry.DefaultMaxOutputBytes
	}
	return setting
}

// progressTo forwards the upstream's progress for a call to the client,
// under the client's own progress token, when it asked for progress.
func progressTo(ctx context.Context, req *mcp.CallToolRequest) *upstream.CallOptions {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	opts := &upstream.CallOptions{Meta: req.Params.Meta}
	token := req.Params.GetProgressToken()
	if token == nil {
		return opts
	}
	opts.OnProgress = func(_ context.Context, p *mcp.ProgressNotificationParams) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token, Progress: p.Progress, Total: p.Total, Message: p.Message,
		})
	}
	return opts
}

// connectNow connects srv (bypassing any backoff). What it lists is in
// the catalogue when it returns (through onUpdate, the one way listings
// arrive), so the caller's next lookup sees it.
func (s *Server) connectNow(ctx context.Context, srv *registry.Server) error {
	_, err := s.pool.Upstream(srv).Connect(ctx)
	return err
}

// serversFor returns the enabled servers with no known tools whose tool
// prefix fits name, and an untrusted server whose prefix fits, if any.
func serversFor(v *registry.View, name string) (cands []*registry.Server, untrusted *registry.Server) {
	for _, sv := range v.Servers {
		if sv.Listing != nil {
			continue
		}
		p := strings.TrimSuffix(registry.ToolName(v.Config.Settings.PrefixOf(sv.Server), sv.Server.Name, "x"), "x")
		if !strings.HasPrefix(name, p) && !strings.HasPrefix(name, sv.Server.Name+"/") {
			continue
		}
		switch {
		case sv.Server.Untrusted:
			untrusted = sv.Server
		case sv.Server.Enabled:
			cands = append(cands, sv.Server)
		}
	}
	return cands, untrusted
}

// connectAll connects servers at once, for a call of tool that needs one
// of them.
func (s *Server) connectAll(ctx context.Context, servers []*registry.Server, tool string) {
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.connectNow(ctx, srv); err != nil {
				s.log.Debug("connecting for an unknown tool", "server", srv.Name, "tool", tool, "err", err)
			}
		}()
	}
	wg.Wait()
}

// nestedGatewayKeys reports gateway argument names found in args that the
// target tool does not itself accept.
func nestedGatewayKeys(t *registry.Tool, args map[string]json.RawMessage) []string {
	if len(args) == 0 {
		return nil
	}
	found := false
	for _, k := range gatewayKeys {
		if _, ok := args[k]; ok {
			found = true
		}
	}
	if !found {
		return nil
	}
	props := schemaProps(t.Def.InputSchema)
	var out []string
	for _, k := range gatewayKeys {
		if _, ok := args[k]; !ok {
			continue
		}
		if _, own := props[k]; own {
			continue
		}
		out = append(out, k)
	}
	// "tool" alone next to real arguments is not proof enough; "tool" with
	// "args", or "args" alone, is.
	if len(out) == 1 && out[0] != "args" {
		return nil
	}
	return out
}
