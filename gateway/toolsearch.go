package gateway

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/registry/search"
)

func (ss *session) handleToolSearch(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a surface.ToolSearchArgs
	if raw := req.Params.Arguments; len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return surface.InvalidToolSearchArgs(err), nil
		}
	}
	a.Query = strings.TrimSpace(a.Query)
	if a.Query == "" {
		return surface.NoQuery(), nil
	}
	limit := a.MaxResults
	switch {
	case limit <= 0:
		limit = 5
	case limit > surface.MaxActivate:
		limit = surface.MaxActivate
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
			t, ok := naming.Lookup(v, name)
			if !ok || t.AppOnly() {
				unknown = append(unknown, name)
				continue
			}
			found = append(found, t)
		}
		for _, name := range unknown {
			b.WriteString(surface.UnknownToolFor(v, name, naming))
			b.WriteString("\n")
		}
	} else {
		offset := max(a.Offset, 0)
		hits, err := v.Search(a.Query, search.Options{Limit: offset + limit + 1})
		if err != nil {
			return surface.ToolSearchFailed(a.Query, err), nil
		}
		if len(hits) > offset+limit {
			next = offset + limit
			hits = hits[:next]
		}
		found = hits[min(offset, len(hits)):]
	}
	if len(found) == 0 {
		if b.Len() == 0 {
			b.WriteString(surface.NoToolsMatch(a.Query, len(v.Tools) == 0 && note == ""))
		}
		r := surface.Text(strings.TrimRight(b.String(), "\n") + note)
		r.IsError = strings.HasPrefix(a.Query, "select:")
		return r, nil
	}
	mark := ss.relistMark()
	if ss.activate(found, v) {
		waited := ss.holdForRelist(ctx, mark)
		ss.gw.metrics.relistHold(waited)
	}
	var head strings.Builder
	head.WriteString(surface.Activated(found, naming, a.Query, next))
	for _, server := range ss.firstInstructed(found) {
		sv, _ := v.Server(server)
		head.WriteString(surface.InstructionsFrom(server, surface.Instructions(sv)))
	}
	return surface.Text(strings.TrimRight(head.String()+b.String(), "\n") + note), nil
}

// firstInstructed returns the servers of tools that have instructions the
// session has not been given yet, in order, and notes them as given.
func (ss *session) firstInstructed(tools []*registry.Tool) []string {
	v := ss.View()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []string
	for _, t := range tools {
		if ss.instructed[t.Server] {
			continue
		}
		if sv, ok := v.Server(t.Server); !ok || surface.Instructions(sv) == "" {
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
