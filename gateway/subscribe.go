package gateway

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// Resource subscriptions: a session subscribes to a resource under the URI
// the gateway offers; the upstream is subscribed while at least one session
// wants that resource, and its notifications/resources/updated reach the
// sessions that subscribed, under their URI, and no other.

// subKey names a resource on an upstream: identity hash and upstream URI.
type subKey struct{ hash, uri string }

// subscribe is the session's resources/subscribe.
func (ss *session) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	v := ss.View()
	r, ok := v.Resource(req.Params.URI)
	if !ok {
		ss.gw.calls.Refused(ss, dispatch.MethodSubscribe, req.Params.URI, nil, "unknown")
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	return ss.gw.calls.Forward(ctx, &dispatch.Request{Caller: ss, Method: dispatch.MethodSubscribe, Server: r.Server, Name: r.Original},
		func(ctx context.Context, _ *upstream.Upstream) error {
			sv, _ := v.Server(r.Server) // Forward found it usable
			return ss.subscribeUpstream(ctx, sv.Server, r)
		})
}

// subscribeUpstream adds the session to r's subscribers, subscribing the
// upstream (shared by every session: one subscription) if it is the first.
func (ss *session) subscribeUpstream(ctx context.Context, srv *registry.Server, r *registry.Resource) error {
	gw := ss.gw
	key := subKey{srv.Hash, r.Original}
	gw.subMu.Lock()
	subs := gw.subs[key]
	first := len(subs) == 0
	if subs == nil {
		subs = map[*session]string{}
		gw.subs[key] = subs
	}
	subs[ss] = r.URI
	gw.subMu.Unlock()
	if first {
		if err := gw.pool.Upstream(srv).Subscribe(ctx, r.Original); err != nil {
			gw.subMu.Lock()
			delete(gw.subs[key], ss)
			gw.subMu.Unlock()
			return err
		}
	}
	return nil
}

// unsubscribe is the session's resources/unsubscribe.
func (ss *session) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	v := ss.View()
	r, ok := v.Resource(req.Params.URI)
	if !ok {
		return nil
	}
	sv, ok := v.Server(r.Server)
	if !ok {
		return nil
	}
	ss.gw.dropSubscription(ctx, sv.Server, subKey{sv.Server.Hash, r.Original}, ss)
	return nil
}

// dropSubscription removes ss's subscription and the upstream's when no
// session wants the resource any more.
func (s *Server) dropSubscription(ctx context.Context, srv *registry.Server, key subKey, ss *session) {
	s.subMu.Lock()
	subs := s.subs[key]
	_, had := subs[ss]
	delete(subs, ss)
	last := had && len(subs) == 0
	if len(subs) == 0 {
		delete(s.subs, key)
	}
	s.subMu.Unlock()
	if last && srv != nil {
		if err := s.pool.Upstream(srv).Unsubscribe(ctx, key.uri); err != nil {
			s.log.Debug("unsubscribing upstream resource", "server", srv.Name, "uri", key.uri, "err", err)
		}
	}
}

// dropSessionSubscriptions forgets an ended session's subscriptions.
func (s *Server) dropSessionSubscriptions(ss *session) {
	s.subMu.Lock()
	var keys []subKey
	for key, subs := range s.subs {
		if _, ok := subs[ss]; ok {
			keys = append(keys, key)
		}
	}
	s.subMu.Unlock()
	v := s.catalog.View()
	for _, key := range keys {
		var srv *registry.Server
		for _, sv := range v.Servers {
			if sv.Server.Hash == key.hash {
				srv = sv.Server
				break
			}
		}
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		s.dropSubscription(ctx, srv, key, ss)
		cancel()
	}
}

// onResourceUpdated is the pool's OnResourceUpdated.
func (s *Server) onResourceUpdated(srv *registry.Server, uri string) {
	s.subMu.Lock()
	targets := make(map[*session]string, len(s.subs[subKey{srv.Hash, uri}]))
	for ss, gwURI := range s.subs[subKey{srv.Hash, uri}] {
		targets[ss] = gwURI
	}
	s.subMu.Unlock()
	for ss, gwURI := range targets {
		ss.post(len(gwURI)+64, func(ctx context.Context) {
			if err := ss.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: gwURI}); err != nil {
				s.log.Debug("forwarding a resource update", "server", srv.Name, "uri", gwURI, "err", err)
			}
		})
	}
}
