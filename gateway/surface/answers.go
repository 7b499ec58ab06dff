package surface

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/tsshape"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/registry/search"
)

// UnknownTool is the answer for a tool name v does not know: names like
// it, and how to find tools.
func UnknownTool(v *registry.View, name string) *mcp.CallToolResult {
	like := v.Suggest(name, 5)
	if len(like) == 0 && len(name) <= registry.SuggestLimit {
		if hits, err := v.Search(name, search.Options{Limit: 5}); err == nil {
			for _, h := range hits {
				like = append(like, h.Name)
			}
		}
	}
	var b strings.Builder
	b.WriteString(UnknownToolText(name, like))
	b.WriteString(" Use mcp({search:\"words\"}) to find tools.")
	if len(v.Tools) == 0 {
		b.WriteString(" No tools are known yet: mcp({}) shows the servers, mcp({connect:\"server\"}) lists one's tools.")
	}
	return Errorf("%s", b.String())
}

// UnknownToolText says name is no tool the caller has, with the names
// like it, as the caller knows them.
func UnknownToolText(name string, like []string) string {
	text := "Unknown tool " + Quote(name) + "."
	if len(like) > 0 {
		text += " Did you mean: " + strings.Join(like, ", ") + "?"
	}
	return text
}

// quoted is the most of a caller's string (a name, a search) an answer
// quotes back: more than any tool's name (the protocol asks for at most
// 128 characters), and than a search of a few words.
const quoted = 256

// Quote is s quoted as %q does, for an answer to the caller that sent it:
// past quoted bytes, its start and its length, so that a model is not
// sent back all it sent.
func Quote(s string) string {
	if len(s) <= quoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(Truncate(s, quoted)) + " (" + strconv.Itoa(len(s)) + " bytes)"
}

// UnknownToolFor says name is no tool of v, with up to five names like
// it as naming shows them to the caller: what every path that meets an
// unknown name says of it, ToolSearch's select included.
func UnknownToolFor(v *registry.View, name string, naming Naming) string {
	return UnknownToolText(name, naming.Names(v.Suggest(name, 5)))
}

// ServerWait is a server whose tools are not known yet, being connected
// for For.
type ServerWait struct {
	Server string
	For    time.Duration
}

// ServerFailure is a server whose tools are not known, and why.
type ServerFailure struct {
	Server, Reason string
}

// DiscoveryNote is what ends an answer about tools while servers' tools
// are not known (still starting, failed or waiting for a login), so that
// the model knows the answer may be incomplete; "" when none is missing.
func DiscoveryNote(starting []ServerWait, failed []ServerFailure) string {
	var b strings.Builder
	if len(starting) > 0 {
		parts := make([]string, len(starting))
		for i, w := range starting {
			parts[i] = fmt.Sprintf("%s (for %s)", w.Server, RoundDur(w.For))
		}
		fmt.Fprintf(&b, "\nStill starting, tools not known yet: %s. Ask again shortly.", strings.Join(parts, ", "))
	}
	if len(failed) > 0 {
		parts := make([]string, len(failed))
		for i, f := range failed {
			parts[i] = f.Server + ": " + f.Reason
		}
		fmt.Fprintf(&b, "\nNot available: %s.", strings.Join(parts, "; "))
	}
	return b.String()
}

// FailureReason is an upstream's last error in one line, with the last
// line it wrote to stderr when the error does not already carry it: that
// is where a server says what it is missing (a token, a binary, a flag).
func FailureReason(lastErr, stderr string) string {
	reason := Shorten(FirstLine(lastErr), 200)
	if l := strings.TrimSpace(stderr); l != "" && !strings.Contains(reason, l) {
		reason += " (stderr: " + Shorten(l, 160) + ")"
	}
	return reason
}

// NotActivated says a ToolSearch session called tool (gateway name
// gwName) before activating it.
func NotActivated(name, gwName string) string {
	return fmt.Sprintf("Tool %q is not active in this session. Activate it first: ToolSearch({query:\"select:%s\"}).", name, gwName)
}

// ThroughMCPTool says a proxy-mode session called tool (gateway name
// gwName) by name, where the mcp tool reaches it.
func ThroughMCPTool(name, gwName string) string {
	return fmt.Sprintf("Tool %q is reached through the mcp tool: mcp({tool:%q,args:{...}}).", name, gwName)
}

// UnknownServer is the answer for a server name v does not know.
func UnknownServer(v *registry.View, name string) *mcp.CallToolResult {
	names := make([]string, len(v.Servers))
	for i, sv := range v.Servers {
		names[i] = sv.Server.Name
	}
	if len(names) == 0 {
		return Errorf("Unknown server %s: no servers are configured.", Quote(name))
	}
	return Errorf("Unknown server %s. Servers: %s.", Quote(name), strings.Join(names, ", "))
}

// A search answer shows defaultSearchPage tools unless the caller asks
// for another limit, at most maxSearchPage; offset pages on.
const (
	defaultSearchPage = 20
	maxSearchPage     = 100
)

// Search answers mcp({search}): a page of the best matches.
func Search(v *registry.View, a MCPArgs) *mcp.CallToolResult {
	if a.Server != "" {
		if _, ok := v.Server(a.Server); !ok {
			return UnknownServer(v, a.Server)
		}
	}
	hits, err := v.Search(a.Search, search.Options{Regex: a.Regex, Server: a.Server})
	if err != nil {
		return Errorf("Search %s: %v", Quote(a.Search), err)
	}
	limit := a.Limit
	switch {
	case limit <= 0:
		limit = defaultSearchPage
	case limit > maxSearchPage:
		limit = maxSearchPage
	}
	offset := max(a.Offset, 0)
	var b strings.Builder
	total := len(hits)
	switch {
	case total == 0:
		fmt.Fprintf(&b, "No tools match %s.", Quote(a.Search))
		if len(v.Tools) == 0 {
			b.WriteString(" No tools are known yet: mcp({}) shows the servers.")
		}
		return Text(b.String())
	case offset >= total:
		return Text(fmt.Sprintf("%s %s; offset %d is past the last.", count(total, "tool matches", "tools match"), Quote(a.Search), offset))
	}
	hits = hits[offset:min(total, offset+limit)]
	switch {
	case offset == 0 && len(hits) == total:
		fmt.Fprintf(&b, "%s %s:\n", count(total, "tool matches", "tools match"), Quote(a.Search))
	default:
		fmt.Fprintf(&b, "%d tools match %s (%d–%d shown", total, Quote(a.Search), offset+1, offset+len(hits))
		if next := offset + len(hits); next < total {
			fmt.Fprintf(&b, "; nextOffset: %d", next)
		}
		b.WriteString("):\n")
	}
	for _, t := range hits {
		fmt.Fprintf(&b, "%s - %s\n", t.Name, Shorten(t.Description(), 120))
		if a.IncludeSchemas {
			b.WriteString(indent(ParamsBody(t), "    "))
		}
	}
	return Text(strings.TrimRight(b.String(), "\n"))
}

// ServerTools answers mcp({server}): the server's state, instructions and
// tools, after a note (what went wrong connecting it), if any.
func ServerTools(sv *registry.ServerView, state, note string) *mcp.CallToolResult {
	var b strings.Builder
	b.WriteString(note)
	fmt.Fprintf(&b, "%s: %s, %s\n", sv.Server.Name, state, count(len(sv.Tools), "tool", "tools"))
	if text := Instructions(sv); text != "" {
		fmt.Fprintf(&b, "Instructions from %s:\n%s\n\nTools:\n", sv.Server.Name, text)
	}
	for _, t := range sv.Tools {
		if !t.AppOnly() {
			fmt.Fprintf(&b, "%s - %s\n", t.Name, Shorten(t.Description(), 100))
		}
	}
	return Text(strings.TrimRight(b.String(), "\n"))
}

// Describe answers mcp({describe}): a tool, its description and
// parameters.
func Describe(v *registry.View, name string) *mcp.CallToolResult {
	t, ok := v.Lookup(name)
	if !ok || t.AppOnly() {
		return UnknownTool(v, name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (server %s, tool %s)\n", t.Name, t.Server, t.Original)
	if d := strings.TrimSpace(t.Description()); d != "" {
		b.WriteString(d)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	b.WriteString(Params(t))
	return Text(strings.TrimRight(b.String(), "\n"))
}

// Status renders mcp({}): each server with its state (as state says) and
// tool count, and a failed reload.
func Status(v *registry.View, state func(*registry.ServerView) string, reload *api.ReloadInfo) string {
	enabled, connected := 0, 0
	var lines []string
	for _, sv := range v.Servers {
		if sv.Server.Enabled {
			enabled++
		}
		state := state(sv)
		if state == "connected" {
			connected++
		}
		line := fmt.Sprintf("- %s: %s", sv.Server.Name, state)
		if sv.Server.Enabled && sv.Listing != nil {
			line += ", " + count(len(sv.Tools), "tool", "tools")
		}
		lines = append(lines, line)
	}
	head := fmt.Sprintf("MCP: %d/%d servers, %s", connected, enabled, count(len(v.Tools), "tool", "tools"))
	switch rl := reload; {
	case rl != nil && rl.NoConfig:
		head += "\nThe config does not load, so no servers run until it is fixed: " + rl.Error
	case rl != nil && !rl.OK:
		head += "\nConfig reload failed " + ago(rl.At) + " (still running the last good config): " + rl.Error
	}
	if len(lines) == 0 && reload != nil && reload.NoConfig {
		return head
	}
	if len(lines) == 0 {
		path := v.Config.Path
		if path == "" {
			path = "the config file"
		}
		return head + "\nNo servers configured: add them under \"mcpServers\" in " + path + "."
	}
	return head + "\n" + strings.Join(lines, "\n")
}

// ServerState is the state shown in status and lists, with the reason
// and next retry for failures; sr is the server's report.
func ServerState(sv *registry.ServerView, sr api.ServerReport) string {
	switch sr.State {
	case "failed":
		state := "failed " + ago(sr.Since)
		if !sr.NextRetry.IsZero() {
			if d := time.Until(sr.NextRetry); d > 0 {
				state += ", retry in " + RoundDur(d)
			}
		}
		if sr.LastError != "" {
			state += ": " + Shorten(FirstLine(sr.LastError), 160)
		}
		return state
	case "untrusted":
		return "untrusted (from " + sv.Server.Source + "; `mcpgw trust` the project to use it)"
	case "needs-auth":
		if sr.LastError != "" {
			return "needs-auth: " + Shorten(FirstLine(sr.LastError), 160)
		}
	}
	return sr.State
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "just now"
	}
	return RoundDur(time.Since(t)) + " ago"
}

func RoundDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

func FirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Shorten cuts s to at most n runes, at a word boundary when one is near.
func Shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n-1])
	if i := strings.LastIndexByte(cut, ' '); i > n*2/3 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:") + "…"
}

func indent(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// schemaProps returns the properties object of a JSON schema in any of the
// shapes the SDK hands us (map, json.RawMessage, *jsonschema.Schema...).
func schemaProps(schema any) map[string]any {
	m := registry.SchemaMap(schema)
	props, _ := m["properties"].(map[string]any)
	return props
}

// Params renders a tool's parameters for the model, as a TypeScript
// shape (nested objects, enums, unions, required and optional fields,
// each top-level field's description), and its declared output.
func Params(t *registry.Tool) string {
	body := ParamsBody(t)
	if body == "" {
		return fmt.Sprintf("Parameters of %s: none.", t.Name)
	}
	return fmt.Sprintf("Parameters of %s: %s", t.Name, strings.TrimRight(body, "\n"))
}

// ParamsBody is the parameters' shape and, where declared, the output's;
// "" for a tool that takes nothing and declares no output.
func ParamsBody(t *registry.Tool) string {
	in := registry.SchemaMap(t.Def.InputSchema)
	var b strings.Builder
	if props, _ := in["properties"].(map[string]any); len(props) > 0 {
		b.WriteString(tsshape.Fields(in))
		b.WriteString("\n")
	}
	if out := registry.SchemaMap(t.Def.OutputSchema); len(out) > 0 {
		if b.Len() == 0 {
			b.WriteString("{}\n")
		}
		b.WriteString("Returns (structured): " + tsshape.Type(out) + "\n")
	}
	return b.String()
}

// count is "1 tool" or "3 tools".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Prompts answers mcp({prompts:true}), or with server, that server's
// prompts: one line each, with its arguments.
func Prompts(v *registry.View, server string) *mcp.CallToolResult {
	var b strings.Builder
	n := 0
	for _, p := range v.Prompts {
		if server != "" && p.Server != server {
			continue
		}
		n++
		fmt.Fprintf(&b, "- %s", p.Name)
		if p.Def != nil {
			var args []string
			for _, a := range p.Def.Arguments {
				if a == nil {
					continue
				}
				arg := a.Name
				if a.Required {
					arg += " (required)"
				}
				args = append(args, arg)
			}
			if len(args) > 0 {
				fmt.Fprintf(&b, "(%s)", strings.Join(args, ", "))
			}
			if d := FirstLine(p.Def.Description); d != "" {
				b.WriteString(": " + Shorten(d, 160))
			}
		}
		b.WriteByte('\n')
	}
	if n == 0 {
		if server != "" {
			return Text(fmt.Sprintf("Server %s has no prompts.", server))
		}
		return Text("No server offers prompts.")
	}
	return Text(fmt.Sprintf("%d prompt(s); get one with mcp({prompt:\"name\",args:{...}}):\n%s", n, b.String()))
}

// ParamsLine lists a tool's parameters on one line: "owner*, repo*, page".
func ParamsLine(t *registry.Tool) string {
	m := registry.SchemaMap(t.Def.InputSchema)
	props, _ := m["properties"].(map[string]any)
	req := map[string]bool{}
	if list, ok := m["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		if req[n] {
			n += "*"
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// UntrustedServer says why a server of a project the user has not
// trusted is never started, and how to allow it.
func UntrustedServer(name, source string) string {
	return fmt.Sprintf("Server %q comes from %s, in a project you have not trusted; it is never started. Run `mcpgw trust DIR` on the project directory to allow it.", name, source)
}

// EncodingFailed is the answer when a call's result could not be written
// as JSON.
func EncodingFailed(err error) *mcp.CallToolResult {
	return Errorf("encoding the result: %v", err)
}
