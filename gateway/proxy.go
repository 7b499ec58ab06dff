package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
)

// The mcp tool's handler: it reads the arguments, acts (calls through the
// dispatcher, connects, runs a script, reads a saved result, gets a
// prompt) and answers with package surface's texts.

// handleProxy serves the mcp tool.
func (ss *session) handleProxy(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a surface.MCPArgs
	if raw := req.Params.Arguments; len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if err := json.Unmarshal(raw, &a); err != nil {
			return surface.Errorf("Invalid arguments for mcp: %v. Use mcp({}) for status or mcp({tool:\"name\",args:{...}}) to call a tool.", err), nil
		}
	}
	gw := ss.gw
	switch {
	case a.Tool != "":
		return gw.calls.Result(ctx, ss.sdkToolCall(ctx, req, a.Tool, a.Args, dispatch.ViaProxy)), nil
	case a.Script != "":
		return gw.runScript(ctx, ss, req, a.Script, a.TimeoutMs), nil
	case a.Read != "":
		return gw.readResult(ss, a.Read, a.Offset, a.Limit), nil
	case a.Prompt != "":
		v := gw.awaitDiscovery(ctx, ss.overlay.Load())
		return ss.getPromptText(ctx, v, a.Prompt, a.Args), nil
	case len(a.Args) > 0 && !surface.IsEmptyJSON(a.Args):
		return surface.Errorf("args given without tool: say which tool to call, e.g. mcp({tool:\"server_tool\",args:{...}}). Find tools with mcp({search:\"words\"})."), nil
	case a.Connect != "":
		return gw.connect(ctx, ss.View(), a.Connect), nil
	}
	if unknown := surface.UnknownKeys(req.Params.Arguments); len(unknown) > 0 && a.Describe == "" && a.Search == "" && a.Server == "" && !a.Prompts {
		return surface.Errorf("Unknown argument(s) %s for mcp. It takes tool+args, search, describe, server, connect, prompts, prompt+args, script or read; mcp({}) shows status.", strings.Join(unknown, ", ")), nil
	}
	// Answers about tools wait, bounded, for servers still being
	// discovered, and say which ones are still missing.
	v := gw.awaitDiscovery(ctx, ss.overlay.Load())
	var res *mcp.CallToolResult
	switch {
	case a.Prompts:
		res = surface.Prompts(v, a.Server)
	case a.Describe != "":
		res = surface.Describe(v, ss.ResolveName(v, a.Describe))
	case a.Search != "":
		res = surface.Search(v, a)
	case a.Server != "":
		res = gw.listServer(ctx, v, a.Server)
	default:
		res = surface.Text(surface.Status(v, gw.serverState, gw.reloadInfo()))
	}
	if note := gw.discoveryNote(gw.catalog.ViewFor(v.Config)); note != "" && (a.Server == "" || a.Prompts) {
		surface.AppendText(res, note)
	}
	return res, nil
}

// connect answers mcp({connect}): the server reconnected, and its tools.
func (s *Server) connect(ctx context.Context, v *registry.View, name string) *mcp.CallToolResult {
	sv, ok := v.Server(name)
	if !ok {
		return surface.UnknownServer(v, name)
	}
	if !sv.Server.Enabled {
		return surface.Errorf("Server %q is disabled in %s.", name, sv.Server.Source)
	}
	if _, err := s.pool.Upstream(sv.Server).Reconnect(ctx); err != nil {
		return surface.Errorf("Connecting %s: %v", name, err)
	}
	return s.listServer(ctx, s.catalog.ViewFor(v.Config), name)
}

// listServer answers mcp({server}), connecting the server first when
// nothing is known of its tools.
func (s *Server) listServer(ctx context.Context, v *registry.View, name string) *mcp.CallToolResult {
	sv, ok := v.Server(name)
	if !ok {
		return surface.UnknownServer(v, name)
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
	return surface.ServerTools(sv, s.serverState(sv), b.String())
}

// getPromptText answers mcp({prompt, args}): the prompt's messages, each
// under its role, images kept, other content as text.
func (ss *session) getPromptText(ctx context.Context, v *registry.View, name string, rawArgs json.RawMessage) *mcp.CallToolResult {
	p, ok := v.Prompt(name)
	if !ok {
		msg := fmt.Sprintf("Unknown prompt %q.", name)
		var names []string
		for _, q := range v.Prompts {
			if strings.Contains(q.Name, name) || strings.Contains(name, q.Original) {
				names = append(names, q.Name)
			}
		}
		if len(names) > 0 {
			msg += " Did you mean: " + strings.Join(names, ", ") + "?"
		}
		return surface.Errorf("%s List prompts with mcp({prompts:true}).", msg)
	}
	args := map[string]string{}
	if len(rawArgs) > 0 && !surface.IsEmptyJSON(rawArgs) {
		var raw map[string]any
		if err := json.Unmarshal(rawArgs, &raw); err != nil {
			return surface.Errorf("Invalid args for prompt %s: %v (want an object of strings).", name, err)
		}
		for k, val := range raw {
			if s, ok := val.(string); ok {
				args[k] = s
			} else {
				data, _ := json.Marshal(val)
				args[k] = string(data)
			}
		}
	}
	res, err := ss.promptGet(ctx, v, p.Name, args, nil)
	if err != nil {
		return surface.Errorf("Getting prompt %s: %v", name, err)
	}
	out := &mcp.CallToolResult{}
	if res.Description != "" {
		out.Content = append(out.Content, &mcp.TextContent{Text: res.Description})
	}
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		c := content.ForModelContent(m.Content)
		if t, ok := c.(*mcp.TextContent); ok {
			c = &mcp.TextContent{Text: fmt.Sprintf("[%s] %s", m.Role, t.Text)}
		} else {
			out.Content = append(out.Content, &mcp.TextContent{Text: fmt.Sprintf("[%s]", m.Role)})
		}
		out.Content = append(out.Content, c)
	}
	if len(out.Content) == 0 {
		out.Content = []mcp.Content{&mcp.TextContent{Text: "(the prompt has no messages)"}}
	}
	return out
}
