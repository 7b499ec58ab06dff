package surface

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/registry/search"
)

const ToolSearchName = "ToolSearch"

// ToolSearchBudget bounds ToolSearch's description: it tells the model what
// exists without listing every tool, and must not grow with the catalogue.
const ToolSearchBudget = 2000

const toolSearchIntro = `Search the tools of the MCP servers behind this gateway and activate the best matches for this session. ` +
	`query: keywords or a sentence describing the task, or "select:name1,name2" for exact tool names. ` +
	`Activated tools are added to your tool list with their full schemas and can then be called directly.`

const toolSearchSchema = `{"type":"object","required":["query"],"properties":{` +
	`"query":{"type":"string","description":"Keywords, a task description, or select:name1,name2"},` +
	`"max_results":{"type":"integer","description":"How many tools to activate (default 5)"},` +
	`"offset":{"type":"integer","description":"Skip this many best matches, to see further ones (the answer gives nextOffset)"}}}`

// InvalidToolSearchArgs says ToolSearch's arguments do not decode, and
// how to call it.
func InvalidToolSearchArgs(err error) *mcp.CallToolResult {
	return Errorf("Invalid arguments for ToolSearch: %v. Use ToolSearch({query:\"words\"}).", err)
}

// NoQuery says ToolSearch was called without a query, and what one is.
func NoQuery() *mcp.CallToolResult {
	return Errorf(`ToolSearch needs a query: keywords, a task description, or "select:name1,name2".`)
}

// ToolSearchFailed says a search failed, and why.
func ToolSearchFailed(query string, err error) *mcp.CallToolResult {
	return Errorf("ToolSearch %s: %v", Quote(query), err)
}

// NoToolsMatch says no tool matches query; unknown adds that no tools are
// known at all yet.
func NoToolsMatch(query string, unknown bool) string {
	text := "No tools match " + Quote(query) + "."
	if unknown {
		text += " No tools are known yet."
	}
	return text
}

// InstructionsFrom introduces a server's instructions, given with the
// first of its tools a session activates.
func InstructionsFrom(server, instructions string) string {
	return fmt.Sprintf("Instructions from %s:\n%s\n", server, instructions)
}

// ToolSearchTool builds ToolSearch for the catalogue: the servers it can
// reach, with tool counts and, when they fit, short summaries. The text
// depends only on the configuration and the listings (sorted), so it is
// byte-identical across restarts with the same config and cache, which
// keeps clients' prompt caches warm.
func ToolSearchTool(v *registry.View) *mcp.Tool {
	return &mcp.Tool{
		Name:        ToolSearchName,
		Description: ToolSearchDescription(v),
		InputSchema: json.RawMessage(toolSearchSchema),
	}
}

func ToolSearchDescription(v *registry.View) string {
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
	if names := WithInstructions(v); len(names) > 0 {
		if line := "\nServers with usage instructions (given with their first activated tools): " + strings.Join(names, ", ") + "."; len(head)+len(line) < ToolSearchBudget/2 {
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
	if s := render(true, len(entries)); len(s) <= ToolSearchBudget {
		return s
	}
	for n := len(entries); n > 0; n-- {
		if s := render(false, n); len(s) <= ToolSearchBudget {
			return s
		}
	}
	return render(false, 0)
}

// serverSummary is a few words about a server: its configured description,
// else the names of its first tools.
func serverSummary(sv *registry.ServerView) string {
	if d := strings.TrimSpace(sv.Server.Description); d != "" {
		return Shorten(d, 60)
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

// MaxActivate bounds one search's activations: past a couple of dozen
// schemas the session would be back where the gateway started.
const MaxActivate = 25

type ToolSearchArgs struct {
	Query      string `json:"query"`
	MaxResults int    `json:"max_results"`
	Offset     int    `json:"offset"`
}

// Activated is ToolSearch's answer for the tools it activated, under the
// names the client knows them by; next, if not 0, is the offset of further
// matches of query.
func Activated(found []*registry.Tool, naming Naming, query string, next int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Activated %d tool%s for this session; call %s directly:\n", len(found), plural(len(found)), them(len(found)))
	for _, t := range found {
		fmt.Fprintf(&b, "- %s - %s\n", naming.Name(t.Name), Shorten(t.Description(), 120))
	}
	if next > 0 {
		// The query searched: its first search.MaxQueryBytes.
		fmt.Fprintf(&b, "More match: ToolSearch({query: %q, offset: %d}) (nextOffset: %d).\n", search.CapQuery(query), next, next)
	}
	return b.String()
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
