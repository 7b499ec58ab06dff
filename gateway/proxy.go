package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
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
		return gw.callResult(ctx, ss.sdkToolCall(ctx, req, a.Tool, a.Args, viaProxy)), nil
	case a.Script != "":
		return gw.runScript(ctx, ss, req, a.Script, a.TimeoutMs), nil
	case a.Read != "":
		return gw.readResult(ss.view(), a.Read, a.Offset, a.Limit), nil
	case a.Prompt != "":
		v := gw.awaitDiscovery(ctx, ss.overlay.Load())
		return ss.getPromptText(ctx, v, a.Prompt, a.Args), nil
	case len(a.Args) > 0 && !surface.IsEmptyJSON(a.Args):
		return surface.Errorf("args given without tool: say which tool to call, e.g. mcp({tool:\"server_tool\",args:{...}}). Find tools with mcp({search:\"words\"})."), nil
	case a.Connect != "":
		return gw.connect(ctx, ss.view(), a.Connect), nil
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
		res = surface.Describe(v, ss.resolveName(v, a.Describe))
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
			return nil, v, surface.Errorf("%v", untrustedError(untrusted))
		}
		if len(cands) > 0 {
			s.connectAll(ctx, cands, name)
			v = s.catalog.ViewFor(v.Config)
			t, ok = v.Lookup(name)
		}
	}
	if !ok {
		return nil, v, surface.UnknownTool(v, name)
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
