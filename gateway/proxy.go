package gateway

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// The mcp tool's handler: it reads the arguments, acts (calls through the
// dispatcher, connects, runs a script, reads a saved result, gets a
// prompt) and answers with package surface's texts.

// decodeMCPArgs decodes the mcp tool's arguments; none, or null, are the
// zero MCPArgs.
func decodeMCPArgs(raw []byte) (surface.MCPArgs, error) {
	var a surface.MCPArgs
	if len(raw) == 0 || string(raw) == "null" {
		return a, nil
	}
	err := json.Unmarshal(raw, &a)
	return a, err
}

// handleProxy serves the mcp tool.
func (ss *session) handleProxy(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, err := decodeMCPArgs(req.Params.Arguments)
	if err != nil {
		return surface.InvalidMCPArgs(err), nil
	}
	gw := ss.gw
	switch {
	case a.Tool != "":
		c := ss.sdkToolCall(ctx, req, a.Tool, a.Args, dispatch.ViaProxy)
		res := gw.calls.Result(ctx, c)
		if c.ProtocolErr != nil {
			return nil, c.ProtocolErr // an upstream's refusal of a relayed round
		}
		return res, nil
	case a.Script != "":
		return gw.runScript(ctx, ss, req, a.Script, a.TimeoutMs), nil
	case a.Read != "":
		return gw.readResult(ss, a.Read, a.Offset, a.Limit), nil
	case a.Prompt != "":
		v := gw.awaitDiscovery(ctx, ss.overlay.Load())
		return ss.getPromptText(ctx, v, a.Prompt, a.Args, clientRound(req, req.Params.InputResponses, req.Params.RequestState)), nil
	case len(a.Args) > 0 && !surface.IsEmptyJSON(a.Args):
		return surface.ArgsWithoutTool(), nil
	case a.Connect != "":
		return gw.connect(ctx, ss.View(), a.Connect), nil
	}
	if unknown := surface.UnknownKeys(req.Params.Arguments); len(unknown) > 0 && a.Describe == "" && a.Search == "" && a.Server == "" && !a.Prompts {
		return surface.UnknownMCPArgs(unknown), nil
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
func (s *Hub) connect(ctx context.Context, v *registry.View, name string) *mcp.CallToolResult {
	sv, ok := v.Server(name)
	if !ok {
		return surface.UnknownServer(v, name)
	}
	if !sv.Server.Enabled {
		return surface.ServerDisabled(name, sv.Server.Source)
	}
	up, err := s.connectable(ctx, sv.Server)
	if err == nil {
		_, err = up.Reconnect(ctx)
	}
	if err != nil {
		return surface.ConnectFailed(name, err)
	}
	return s.listServer(ctx, s.catalog.ViewFor(v.Config), name)
}

// listServer answers mcp({server}), connecting the server first when
// nothing is known of its tools.
func (s *Hub) listServer(ctx context.Context, v *registry.View, name string) *mcp.CallToolResult {
	sv, ok := v.Server(name)
	if !ok {
		return surface.UnknownServer(v, name)
	}
	var note string
	if sv.Listing == nil && sv.Server.Enabled {
		// Nothing known about its tools: listing them needs a connection.
		if err := s.connectNow(ctx, sv.Server); err != nil {
			note = surface.ListConnectFailed(name, err)
		}
		v = s.catalog.ViewFor(v.Config)
		sv, _ = v.Server(name)
	}
	return surface.ServerTools(sv, s.serverState(sv), note)
}

// getPromptText answers mcp({prompt, args}): the prompt's messages, each
// under its role, images kept, other content as text. in is the caller's
// round of the input_required exchange, if it answers input requests
// itself: an upstream's request for input is then the mcp tool's answer,
// as the upstream wrote it, and the caller's retry of the same mcp call
// brings the answers back.
func (ss *session) getPromptText(ctx context.Context, v *registry.View, name string, rawArgs json.RawMessage, in *upstream.InputRound) *mcp.CallToolResult {
	p, ok := v.Prompt(name)
	if !ok {
		return surface.UnknownPrompt(v, name)
	}
	args := map[string]string{}
	if len(rawArgs) > 0 && !surface.IsEmptyJSON(rawArgs) {
		var raw map[string]any
		if err := json.Unmarshal(rawArgs, &raw); err != nil {
			return surface.InvalidPromptArgs(name, err)
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
	res, err := ss.promptGet(ctx, v, p.Name, args, in)
	if err != nil {
		return surface.PromptFailed(name, err)
	}
	if res.NeedsInput() {
		return &mcp.CallToolResult{InputRequests: res.InputRequests, RequestState: res.RequestState}
	}
	return surface.PromptMessages(res)
}
