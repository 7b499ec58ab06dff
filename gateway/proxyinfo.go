package gateway

// The `mcp` tool's answers about servers and tools: status, lists,
// search, descriptions.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/tsshape"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/registry/search"
)

func (s *Server) unknownTool(v *registry.View, name string) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Unknown tool %q.", name)
	if sugg := v.Suggest(name, 5); len(sugg) > 0 {
		fmt.Fprintf(&b, " Did you mean: %s?", strings.Join(sugg, ", "))
	} else if hits, err := v.Search(name, search.Options{Limit: 5}); err == nil && len(hits) > 0 {
		names := make([]string, len(hits))
		for i, h := range hits {
			names[i] = h.Name
		}
		fmt.Fprintf(&b, " Did you mean: %s?", strings.Join(names, ", "))
	}
	b.WriteString(" Use mcp({search:\"words\"}) to find tools.")
	if len(v.Tools) == 0 {
		b.WriteString(" No tools are known yet: mcp({}) shows the servers, mcp({connect:\"server\"}) lists one's tools.")
	}
	return errorResult("%s", b.String())
}

func (s *Server) connect(ctx context.Context, v *registry.View, name string) *mcp.CallToolResult {
	sv, ok := v.Server(name)
	if !ok {
		return s.unknownServer(v, name)
	}
	if !sv.Server.Enabled {
		return errorResult("Server %q is disabled in %s.", name, sv.Server.Source)
	}
	if _, err := s.pool.Upstream(sv.Server).Reconnect(ctx); err != nil {
		return errorResult("Connecting %s: %v", name, err)
	}
	return s.listServer(ctx, s.catalog.ViewFor(v.Config), name)
}

func (s *Server) unknownServer(v *registry.View, name string) *mcp.CallToolResult {
	names := make([]string, len(v.Servers))
	for i, sv := range v.Servers {
		names[i] = sv.Server.Name
	}
	if len(names) == 0 {
		return errorResult("Unknown server %q: no servers are configured.", name)
	}
	return errorResult("Unknown server %q. Servers: %s.", name, strings.Join(names, ", "))
}

func (s *Server) listServer(ctx context.Context, v *registry.View, name string) *mcp.CallToolResult {
	sv, ok := v.Server(name)
	if !ok {
		return s.unknownServer(v, name)
	}
	var b strings.Builder
	if sv.Listing == nil && sv.Server.Enabled {
		// Nothing known about its tools: listing them needs a connection.
		if err := s.connectNow(ctx, sv.Server); err != nil {
			fmt.Fprintf(&b, "Connecting %s to list its tools: %v\n", name, err)
		}
		v = s.catalog.ViewFor(v.Config)
		sv, _ = v.Server(name)
	}
	fmt.Fprintf(&b, "%s: %s, %s\n", name, s.serverState(sv), count(len(sv.Tools), "tool", "tools"))
	if text := instructionsOf(sv); text != "" {
		fmt.Fprintf(&b, "Instructions from %s:\n%s\n\nTools:\n", name, text)
	}
	for _, t := range sv.Tools {
		if !t.AppOnly() {
			fmt.Fprintf(&b, "%s - %s\n", t.Name, shorten(t.Description(), 100))
		}
	}
	return textResult(strings.TrimRight(b.String(), "\n"))
}

// A search answer shows defaultSearchPage tools unless the caller asks
// for another limit, at most maxSearchPage; offset pages on.
const (
	defaultSearchPage = 20
	maxSearchPage     = 100
)

func (s *Server) search(v *registry.View, a proxyArgs) *mcp.CallToolResult {
	if a.Server != "" {
		if _, ok := v.Server(a.Server); !ok {
			return s.unknownServer(v, a.Server)
		}
	}
	hits, err := v.Search(a.Search, search.Options{Regex: a.Regex, Server: a.Server})
	if err != nil {
		return errorResult("Search %q: %v", a.Search, err)
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
		fmt.Fprintf(&b, "No tools match %q.", a.Search)
		if len(v.Tools) == 0 {
			b.WriteString(" No tools are known yet: mcp({}) shows the servers.")
		}
		return textResult(b.String())
	case offset >= total:
		return textResult(fmt.Sprintf("%s %q; offset %d is past the last.", count(total, "tool matches", "tools match"), a.Search, offset))
	}
	hits = hits[offset:min(total, offset+limit)]
	switch {
	case offset == 0 && len(hits) == total:
		fmt.Fprintf(&b, "%s %q:\n", count(total, "tool matches", "tools match"), a.Search)
	default:
		fmt.Fprintf(&b, "%d tools match %q (%d–%d shown", total, a.Search, offset+1, offset+len(hits))
		if next := offset + len(hits); next < total {
			fmt.Fprintf(&b, "; nextOffset: %d", next)
		}
		b.WriteString("):\n")
	}
	for _, t := range hits {
		fmt.Fprintf(&b, "%s - %s\n", t.Name, shorten(t.Description(), 120))
		if a.IncludeSchemas {
			b.WriteString(indent(paramsBody(t), "    "))
		}
	}
	return textResult(strings.TrimRight(b.String(), "\n"))
}

func (s *Server) describe(v *registry.View, name string) *mcp.CallToolResult {
	t, ok := v.Lookup(name)
	if !ok || t.AppOnly() {
		return s.unknownTool(v, name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (server %s, tool %s)\n", t.Name, t.Server, t.Original)
	if d := strings.TrimSpace(t.Description()); d != "" {
		b.WriteString(d)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	b.WriteString(paramsText(t))
	return textResult(strings.TrimRight(b.String(), "\n"))
}

// statusText renders mcp({}).
func (s *Server) statusText(v *registry.View) string {
	enabled, connected := 0, 0
	var lines []string
	for _, sv := range v.Servers {
		if sv.Server.Enabled {
			enabled++
		}
		state := s.serverState(sv)
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
	if rl := s.reloadInfo(); rl != nil && !rl.OK {
		head += "\nConfig reload failed " + ago(rl.At) + " (still running the last good config): " + rl.Error
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

// serverState is the state shown in status and lists, with the reason
// and next retry for failures.
func (s *Server) serverState(sv *registry.ServerView) string {
	sr := s.serverReport(sv)
	switch sr.State {
	case "failed":
		state := "failed " + ago(sr.Since)
		if !sr.NextRetry.IsZero() {
			if d := time.Until(sr.NextRetry); d > 0 {
				state += ", retry in " + roundDur(d)
			}
		}
		if sr.LastError != "" {
			state += ": " + shorten(firstLine(sr.LastError), 160)
		}
		return state
	case "untrusted":
		return "untrusted (from " + sv.Server.Source + "; `mcpgw trust` the project to use it)"
	case "needs-auth":
		if sr.LastError != "" {
			return "needs-auth: " + shorten(firstLine(sr.LastError), 160)
		}
	}
	return sr.State
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "just now"
	}
	return roundDur(time.Since(t)) + " ago"
}

func roundDur(d time.Duration) string {
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

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// shorten cuts s to at most n runes, at a word boundary when one is near.
func shorten(s string, n int) string {
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

// paramsText renders a tool's parameters for the model, as a TypeScript
// shape (nested objects, enums, unions, required and optional fields,
// each top-level field's description), and its declared output.
func paramsText(t *registry.Tool) string {
	body := paramsBody(t)
	if body == "" {
		return fmt.Sprintf("Parameters of %s: none.", t.Name)
	}
	return fmt.Sprintf("Parameters of %s: %s", t.Name, strings.TrimRight(body, "\n"))
}

// paramsBody is the parameters' shape and, where declared, the output's;
// "" for a tool that takes nothing and declares no output.
func paramsBody(t *registry.Tool) string {
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
