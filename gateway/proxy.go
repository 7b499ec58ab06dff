package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/surface"
)

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
		return gw.readResult(ss.View(), a.Read, a.Offset, a.Limit), nil
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
