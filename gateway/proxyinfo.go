package gateway

// The `mcp` tool's answers about servers and tools: status, lists,
// search, descriptions.

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
)

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

// serverState is the state shown in status and lists.
func (s *Server) serverState(sv *registry.ServerView) string {
	return surface.ServerState(sv, s.serverReport(sv))
}
