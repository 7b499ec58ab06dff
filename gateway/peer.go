//lint:file-ignore SA1019 sampling and roots are deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; a gateway forwards them.

package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// A session is the upstream.Peer of the calls it makes: the sampling,
// elicitation and roots requests those calls cause reach its client, and
// only its client.

var _ upstream.Peer = (*session)(nil)

// sessionKeys numbers sessions for their private upstreams.
var sessionKeys atomic.Int64

// client returns the session's downstream connection and what its client
// declared, or an error naming what is missing.
func (ss *session) client(what string, has func(*mcp.ClientCapabilities) bool) (*mcp.ServerSession, error) {
	sess := ss.conn.session()
	if sess == nil {
		return nil, errors.New("mcpgw: the session is not initialized")
	}
	init := sess.InitializeParams()
	if init == nil || init.Capabilities == nil || !has(init.Capabilities) {
		return nil, fmt.Errorf("mcpgw: the client of this session does not support %s", what)
	}
	return sess, nil
}

// CreateMessage forwards an upstream's sampling request to the session's
// client.
func (ss *session) CreateMessage(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	sess, err := ss.client("sampling", func(c *mcp.ClientCapabilities) bool {
		return c.Sampling != nil && (len(p.Tools) == 0 || c.Sampling.Tools != nil)
	})
	if err != nil {
		return nil, err
	}
	ctx, stop := ss.bound(ctx)
	defer stop()
	if err := ss.awaitListener(ctx, sess, "sampling"); err != nil {
		return nil, err
	}
	ss.gw.metrics.clientRequest("sampling")
	return sess.CreateMessageWithTools(ctx, p)
}

// Elicit forwards an upstream's elicitation request to the session's
// client.
func (ss *session) Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	sess, err := ss.client("elicitation", func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil })
	if err != nil {
		return nil, err
	}
	ctx, stop := ss.bound(ctx)
	defer stop()
	if err := ss.awaitListener(ctx, sess, "elicitation"); err != nil {
		return nil, err
	}
	ss.gw.metrics.clientRequest("elicitation")
	return sess.Elicit(ctx, p)
}

// ElicitationComplete forwards notifications/elicitation/complete.
func (ss *session) ElicitationComplete(ctx context.Context, p *mcp.ElicitationCompleteParams) {
	if sess, err := ss.client("elicitation", func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil }); err == nil {
		_ = sess.NotifyElicitationComplete(ctx, p)
	}
}

// Roots returns the session's roots: its client's, when the client has
// roots, else its working directory, when known.
func (ss *session) Roots(ctx context.Context) ([]*mcp.Root, error) {
	if sess, err := ss.client("roots", func(c *mcp.ClientCapabilities) bool { return c.RootsV2 != nil }); err == nil {
		if err := ss.awaitListener(ctx, sess, "roots"); err != nil {
			return nil, err
		}
		ss.roots.mu.Lock()
		defer ss.roots.mu.Unlock()
		if ss.roots.roots != nil && !ss.roots.stale {
			return ss.roots.roots, nil
		}
		ctx, stop := ss.bound(ctx)
		defer stop()
		res, err := sess.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		ss.roots.roots, ss.roots.stale = res.Roots, false
		return ss.roots.roots, nil
	}
	if ss.opts.Cwd != "" {
		return []*mcp.Root{upstream.FileRoot(ss.opts.Cwd)}, nil
	}
	return nil, nil
}

// rootsChanged marks the cached roots stale (the client's
// notifications/roots/list_changed).
func (ss *session) rootsChanged() {
	ss.roots.mu.Lock()
	ss.roots.stale = true
	ss.roots.mu.Unlock()
}

// bound ends ctx when the session ends, too.
func (ss *session) bound(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(ss.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// rootsFor answers an upstream's roots/list that is not for one session:
// the roots of the sessions that can use srv (for a project's server, the
// sessions of that project), without duplicates.
func (s *Hub) rootsFor(ctx context.Context, srv *registry.Server) []*mcp.Root {
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	var (
		mu   sync.Mutex
		out  []*mcp.Root
		seen = map[string]bool{}
		wg   sync.WaitGroup
	)
	for _, ss := range sessions {
		if !usesServer(ss.View(), srv.Hash) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			roots, _ := ss.Roots(ctx)
			mu.Lock()
			defer mu.Unlock()
			for _, r := range roots {
				if r != nil && !seen[r.URI] {
					seen[r.URI] = true
					out = append(out, r)
				}
			}
		}()
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b *mcp.Root) int {
		switch {
		case a.URI < b.URI:
			return -1
		case a.URI > b.URI:
			return 1
		}
		return 0
	})
	return out
}

// usesServer reports whether v offers a server of identity hash (a
// hidden one it does not).
func usesServer(v *registry.View, hash string) bool {
	for _, sv := range v.Servers {
		if sv.Server.Hash == hash {
			return true
		}
	}
	return false
}
