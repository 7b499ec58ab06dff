package gateway

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// session is one downstream MCP session: its own go-sdk Server (tools are
// per Server in the SDK, and what a session sees can differ from another's).
type session struct {
	gw     *Server
	opts   SessionOptions
	server *mcp.Server

	mu sync.Mutex
	ss *mcp.ServerSession
}

func (s *Server) newSession(opts SessionOptions) *session {
	ss := &session{gw: s, opts: opts}
	ss.server = mcp.NewServer(&mcp.Implementation{Name: "mcpgw", Version: s.version}, &mcp.ServerOptions{
		Instructions: "Tools of many MCP servers are reachable through the `mcp` tool: search them, describe one, then call it.",
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			s.register(ss, req.Session)
		},
		HasTools: true,
	})
	ss.server.AddTool(proxyTool(), ss.handleProxy)
	return ss
}

// register tracks an initialised session until it ends.
func (s *Server) register(ss *session, sess *mcp.ServerSession) {
	ss.mu.Lock()
	already := ss.ss != nil
	ss.ss = sess
	ss.mu.Unlock()
	if already {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sess.Close()
		return
	}
	s.sessions[ss] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	s.metrics.sessions.Inc()
	go func() {
		defer s.wg.Done()
		_ = sess.Wait()
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
		s.metrics.sessions.Dec()
	}()
}

func (ss *session) close() {
	ss.mu.Lock()
	sess := ss.ss
	ss.mu.Unlock()
	if sess != nil {
		sess.Close()
	}
}

// catalogChanged is called after the catalogue changed. In proxy mode the
// session's tool list (just `mcp`) never changes, so there is nothing to
// announce.
func (ss *session) catalogChanged(before, after *registry.View) {}
