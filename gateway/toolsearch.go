package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/registry/search"
)

const toolSearchName = "ToolSearch"

// toolSearchBudget bounds ToolSearch's description: it tells the model what
// exists without listing every tool, and must not grow with the catalogue.
const toolSearchBudget = 2000

const toolSearchIntro = `Search the tools of the MCP servers behind this gateway and activate the best matches for this session. ` +
	`query: keywords or a sentence describing the task, or "select:name1,name2" for exact tool names. ` +
	`Activated tools are added to your tool list with their full schemas and can then be called directly.`

const toolSearchSchema = `{"type":"object","required":["query"],"properties":{` +
	`"query":{"type":"string","description":"Keywords, a task description, or select:name1,name2"},` +
	`"max_results":{"type":"integer","description":"How many tools to activate (default 5)"},` +
	`"offset":{"type":"integer","description":"Skip this many best matches, to see further ones (the answer gives nextOffset)"}}}`

// toolSearchTool builds ToolSearch for the catalogue: the servers it can
// reach, with tool counts and, when they fit, short summaries. The text
// depends only on the configuration and the listings (sorted), so it is
// byte-identical across restarts with the same config and cache, which
// keeps clients' prompt caches warm.
func toolSearchTool(v *registry.View) *mcp.Tool {
	return &mcp.Tool{
		Name:        toolSearchName,
		Description: toolSearchDescription(v),
		InputSchema: json.RawMessage(toolSearchSchema),
	}
}

func toolSearchDescription(v *registry.View) string {
	type entry struct{ name, summary string }
	var entries []entry
	for _, sv := range v.Servers {
		if !sv.Server.Enabled {
			continue
		}
		e := entry{name: sv.Server.Name}
		if sv.Listing != nil {
			e.name += fmt.Sprintf(" (%d)", len(sv.Tools))
		}
		e.summary = serverSummary(sv)
		entries = append(entries, e)
	}
	head := toolSearchIntro
	if len(entries) == 0 {
		return head + "\nNo servers are configured yet."
	}
	if names := withInstructions(v); len(names) > 0 {
		if line := "\nServers with usage instructions (given with their first activated tools): " + strings.Join(names, ", ") + "."; len(head)+len(line) < toolSearchBudget/2 {
			head += line
		}
	}
	head += "\nServers (tool count):"
	render := func(withSummary bool, n int) string {
		var b strings.Builder
		b.WriteString(head)
		for i, e := range entries[:n] {
			if withSummary {
				b.WriteString("\n- " + e.name)
				if e.summary != "" {
					b.WriteString(": " + e.summary)
				}
				continue
			}
			if i == 0 {
				b.WriteString(" ")
			} else {
				b.WriteString(", ")
			}
			b.WriteString(e.name)
		}
		if n < len(entries) {
			fmt.Fprintf(&b, ", and %d more", len(entries)-n)
		}
		return b.String()
	}
	if s := render(true, len(entries)); len(s) <= toolSearchBudget {
		return s
	}
	for n := len(entries); n > 0; n-- {
		if s := render(false, n); len(s) <= toolSearchBudget {
			return s
		}
	}
	return render(false, 0)
}

// serverSummary is a few words about a server: its configured description,
// else the names of its first tools.
func serverSummary(sv *registry.ServerView) string {
	if d := strings.TrimSpace(sv.Server.Description); d != "" {
		return shorten(d, 60)
	}
	if len(sv.Tools) == 0 {
		return ""
	}
	var names []string
	n := 0
	for _, t := range sv.Tools {
		if n+len(t.Original) > 50 {
			break
		}
		names = append(names, t.Original)
		n += len(t.Original) + 2
	}
	if len(names) == 0 {
		return ""
	}
	s := strings.Join(names, ", ")
	if len(names) < len(sv.Tools) {
		s += ", …"
	}
	return s
}

// maxActivate bounds one search's activations: past a couple of dozen
// schemas the session would be back where the gateway started.
const maxActivate = 25

type toolSearchArgs struct {
	Query      string `json:"query"`
	MaxResults int    `json:"max_results"`
	Offset     int    `json:"offset"`
}

func (ss *session) handleToolSearch(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a toolSearchArgs
	if raw := req.Params.Arguments; len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return errorResult("Invalid arguments for ToolSearch: %v. Use ToolSearch({query:\"words\"}).", err), nil
		}
	}
	a.Query = strings.TrimSpace(a.Query)
	if a.Query == "" {
		return errorResult(`ToolSearch needs a query: keywords, a task description, or "select:name1,name2".`), nil
	}
	limit := a.MaxResults
	switch {
	case limit <= 0:
		limit = 5
	case limit > maxActivate:
		limit = maxActivate
	}
	v := ss.gw.awaitDiscovery(ctx, ss.overlay.Load())
	note := ss.gw.discoveryNote(v)
	naming := ss.naming()
	var found []*registry.Tool
	var b strings.Builder
	next := 0 // the offset of further matches, if any
	if rest, ok := strings.CutPrefix(a.Query, "select:"); ok {
		var unknown []string
		for _, name := range strings.Split(rest, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			t, ok := naming.lookup(v, name)
			if !ok || t.AppOnly() {
				unknown = append(unknown, name)
				continue
			}
			found = append(found, t)
		}
		for _, name := range unknown {
			fmt.Fprintf(&b, "Unknown tool %q.", name)
			if sugg := v.Suggest(name, 5); len(sugg) > 0 {
				fmt.Fprintf(&b, " Did you mean: %s?", strings.Join(naming.names(sugg), ", "))
			}
			b.WriteString("\n")
		}
	} else {
		offset := max(a.Offset, 0)
		hits, err := v.Search(a.Query, search.Options{Limit: offset + limit + 1})
		if err != nil {
			return errorResult("ToolSearch %q: %v", a.Query, err), nil
		}
		if len(hits) > offset+limit {
			next = offset + limit
			hits = hits[:next]
		}
		found = hits[min(offset, len(hits)):]
	}
	if len(found) == 0 {
		if b.Len() == 0 {
			fmt.Fprintf(&b, "No tools match %q.", a.Query)
			if len(v.Tools) == 0 && note == "" {
				b.WriteString(" No tools are known yet.")
			}
		}
		r := textResult(strings.TrimRight(b.String(), "\n") + note)
		r.IsError = strings.HasPrefix(a.Query, "select:")
		return r, nil
	}
	mark := ss.relistMark()
	if ss.activate(found, v) {
		waited := ss.holdForRelist(ctx, mark)
		ss.gw.metrics.relistHold(waited)
	}
	var head strings.Builder
	fmt.Fprintf(&head, "Activated %d tool%s for this session; call %s directly:\n", len(found), plural(len(found)), them(len(found)))
	for _, t := range found {
		fmt.Fprintf(&head, "- %s - %s\n", naming.name(t.Name), shorten(t.Description(), 120))
	}
	if next > 0 {
		fmt.Fprintf(&head, "More match: ToolSearch({query: %q, offset: %d}) (nextOffset: %d).\n", a.Query, next, next)
	}
	for _, server := range ss.firstInstructed(found) {
		sv, _ := v.Server(server)
		fmt.Fprintf(&head, "Instructions from %s:\n%s\n", server, instructionsOf(sv))
	}
	return textResult(strings.TrimRight(head.String()+b.String(), "\n") + note), nil
}

// firstInstructed returns the servers of tools that have instructions the
// session has not been given yet, in order, and notes them as given.
func (ss *session) firstInstructed(tools []*registry.Tool) []string {
	v := ss.view()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []string
	for _, t := range tools {
		if ss.instructed[t.Server] {
			continue
		}
		if sv, ok := v.Server(t.Server); !ok || instructionsOf(sv) == "" {
			continue
		}
		if ss.instructed == nil {
			ss.instructed = make(map[string]bool)
		}
		ss.instructed[t.Server] = true
		out = append(out, t.Server)
	}
	return out
}

// activate adds tools to the session's list; it reports whether any was
// not listed before (and so list_changed was sent).
func (ss *session) activate(tools []*registry.Tool, v *registry.View) bool {
	ss.mu.Lock()
	added := false
	for _, t := range tools {
		if !ss.activated[t.Name] {
			ss.activated[t.Name] = true
			added = true
		}
	}
	ss.mu.Unlock()
	ss.syncTools(v)
	ss.gw.saveSessionState(ss)
	return added
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func them(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
