package surface

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/mcpgw/mcpgw/registry"
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

func MCPTool() *mcp.Tool {
	return &mcp.Tool{Name: "mcp", Description: proxyDescription, InputSchema: json.RawMessage(proxySchema)}
}

// MCPArgs are the `mcp` tool's arguments. Args stays raw: it may be an
// object or a JSON string holding one.
type MCPArgs struct {
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

// AppendText adds text to a result's last text block (or a new one).
func AppendText(res *mcp.CallToolResult, text string) {
	if n := len(res.Content); n > 0 {
		if tc, ok := res.Content[n-1].(*mcp.TextContent); ok {
			tc.Text += text
			return
		}
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: strings.TrimLeft(text, "\n")})
}

// UnknownKeys lists argument names the mcp tool does not take.
func UnknownKeys(raw json.RawMessage) []string {
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

func IsEmptyJSON(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	return s == "" || s == "null" || s == "{}" || s == `""`
}

// InvalidMCPArgs says the mcp tool's arguments do not decode, and how to
// call it.
func InvalidMCPArgs(err error) *mcp.CallToolResult {
	return Errorf("Invalid arguments for mcp: %v. Use mcp({}) for status or mcp({tool:\"name\",args:{...}}) to call a tool.", err)
}

// ArgsWithoutTool says the mcp tool was given args but no tool to call.
func ArgsWithoutTool() *mcp.CallToolResult {
	return Errorf("args given without tool: say which tool to call, e.g. mcp({tool:\"server_tool\",args:{...}}). Find tools with mcp({search:\"words\"}).")
}

// UnknownMCPArgs says the mcp tool was given arguments it does not take,
// and lists those it does.
func UnknownMCPArgs(unknown []string) *mcp.CallToolResult {
	return Errorf("Unknown argument(s) %s for mcp. It takes tool+args, search, describe, server, connect, prompts, prompt+args, script or read; mcp({}) shows status.", strings.Join(unknown, ", "))
}

// ServerDisabled says a server is disabled, in the file source.
func ServerDisabled(name, source string) *mcp.CallToolResult {
	return Errorf("Server %q is disabled in %s.", name, source)
}

// ConnectFailed answers mcp({connect}) when the connection failed.
func ConnectFailed(name string, err error) *mcp.CallToolResult {
	return Errorf("Connecting %s: %v", name, err)
}

// ListConnectFailed is the line mcp({server}) starts with when the
// connection that would list a server's tools failed.
func ListConnectFailed(name string, err error) string {
	return fmt.Sprintf("Connecting %s to list its tools: %v\n", name, err)
}

func Text(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func Errorf(format string, a ...any) *mcp.CallToolResult {
	r := Text(fmt.Sprintf(format, a...))
	r.IsError = true
	return r
}

// gatewayKeys are the `mcp` tool's own argument names; finding them inside
// args usually means the model nested a gateway call by mistake.
var gatewayKeys = []string{"tool", "args", "search", "describe", "connect", "server"}

// DecodeArgs turns the args value (object, JSON string holding an object,
// or absent) into the arguments forwarded upstream, kept as raw JSON (the
// upstream gets the bytes the client sent), and those of the object's
// top-level members that are the mcp tool's own argument names.
func DecodeArgs(raw json.RawMessage) (json.RawMessage, map[string]json.RawMessage, error) {
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

// Shape is what the client gets of a tool's result: passed through
// for a tool it sees itself (exposed), but for content its protocol does
// not know; made readable by any model for the mcp tool; cut to limit;
// and with the tool's parameters after an error.
func Shape(res *mcp.CallToolResult, t *registry.Tool, protocol string, exposed bool, limit int, save content.Saver) *mcp.CallToolResult {
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
		res.Content = append(res.Content, &mcp.TextContent{Text: Params(t)})
	}
	return res
}

// CheckArgs checks a call's arguments: a JSON object (or nothing), and
// not the mcp tool's own arguments nested by mistake. problem, if not
// empty, says what is wrong, for the model.
func CheckArgs(t *registry.Tool, rawArgs json.RawMessage) (args json.RawMessage, problem string) {
	args, keys, err := DecodeArgs(rawArgs)
	if err != nil {
		return nil, fmt.Sprintf("Invalid args for %s: %v", t.Name, err)
	}
	if nested := nestedGatewayKeys(t, keys); len(nested) > 0 {
		return nil, fmt.Sprintf("args for %s contain %s, which are arguments of the mcp tool itself, not of %s. Pass the tool's own arguments directly: mcp({tool:%q,args:{...}}).",
			t.Name, strings.Join(nested, ", "), t.Name, t.Name)
	}
	return args, ""
}

// OutputLimit resolves settings.maxOutputBytes.
func OutputLimit(setting int) int {
	if setting == 0 {
		return registry.DefaultMaxOutputBytes
	}
	return setting
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
