package gateway

import (
	"context"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// Resource subscriptions: a session subscribes to a resource under the URI
// the gateway offers; the upstream is subscribed while at least one session
// wants that resource, and its notifications/resources/updated reach the
// sessions that subscribed, under their URI, and no other. Within a
// session, the go-sdk sends an update to each downstream connection that
// subscribed: a 2025 session's one, or each subscriptions/listen stream of
// a 2026-07-28 client that names the resource, tagged with the stream's
// subscription ID (SEP-2575). A conversation (conversation.go) has one
// stream per listening request, of one client or several: the session
// wants the resource while one of them does.
//
// A server whose upstream is private ("isolation": "session", or "user" in
// team mode) is subscribed on the caller's own upstream, the one its calls
// reach, and an update from that upstream reaches only the sessions that
// subscribed through it: the session itself, or the user's sessions.
// Another session's or user's process never hears of the subscription,
// and its updates never reach this one.

// unsubscribeTimeout bounds ending an upstream's subscription that
// outlived the request that asked for its end.
const unsubscribeTimeout = 10 * time.Second

// subKey names a resource on an upstream: the upstream's identity hash
// and private key ("" for the shared one; see privateKey), and the
// upstream's URI.
type subKey struct{ hash, private, uri string }

// subscriber is one session's subscription to a resource: the URI it
// knows the resource by, the name of the server it reached (in the
// session's view), and the downstream connections that asked for it (a
// 2025 session's one; a conversation's listen streams).
type subscriber struct {
	uri, server string
	by          map[mcp.Session]bool
}

// subscribe is the session's resources/subscribe, or one resource of a
// subscriptions/listen stream.
func (ss *session) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	v := ss.View()
	r, ok := v.Resource(req.Params.URI)
	if !ok {
		ss.gw.calls.Refused(ss, dispatch.MethodSubscribe, req.Params.URI, nil, "unknown")
		return resourceNotFound(req.Params.URI)
	}
	return ss.gw.calls.Forward(ctx, &dispatch.Request{Caller: ss, Method: dispatch.MethodSubscribe, Server: r.Server, Name: r.Original},
		func(ctx context.Context, u *upstream.Upstream) error {
			sv, _ := v.Server(r.Server) // Forward found it usable
			return ss.subscribeUpstream(ctx, u, subKey{sv.Server.Hash, privateKey(ss, sv.Server), r.Original}, r.URI, r.Server, req.Session)
		})
}

// subscribeUpstream adds by, a downstream connection of the session, to
// the subscribers of key, which the session knows as uri on the server it
// names server, subscribing u
// (the session's upstream for key's server) if it is the first: one
// subscription per upstream, however many sessions share it.
func (ss *session) subscribeUpstream(ctx context.Context, u *upstream.Upstream, key subKey, uri, server string, by mcp.Session) error {
	gw := ss.gw
	gw.subMu.Lock()
	subs := gw.subs[key]
	first := len(subs) == 0
	if subs == nil {
		subs = map[*session]*subscriber{}
		gw.subs[key] = subs
	}
	sub := subs[ss]
	if sub == nil {
		sub = &subscriber{uri: uri, server: server, by: map[mcp.Session]bool{}}
		subs[ss] = sub
	}
	sub.by[by] = true
	gw.subMu.Unlock()
	if first {
		if err := u.Subscribe(ctx, key.uri); err != nil {
			gw.subMu.Lock()
			gw.forgetLocked(key, ss, by)
			gw.subMu.Unlock()
			return err
		}
	}
	return nil
}

// forgetLocked removes by's subscription to key for ss (ss's whole
// subscription when by is nil), and reports whether no session wants key
// any more. s.subMu is held.
func (s *Hub) forgetLocked(key subKey, ss *session, by mcp.Session) (last bool) {
	subs := s.subs[key]
	sub, had := subs[ss]
	if had && by != nil {
		delete(sub.by, by)
	}
	if had && (by == nil || len(sub.by) == 0) {
		delete(subs, ss)
	} else {
		had = false
	}
	if len(subs) == 0 {
		delete(s.subs, key)
	}
	return had && len(subs) == 0
}

// unsubscribe is the session's resources/unsubscribe, or the end of a
// subscriptions/listen stream that named the resource.
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
	// A listen stream ends when its request does: its context is done,
	// and the upstream's subscription may still have to end.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unsubscribeTimeout)
	defer cancel()
	ss.gw.dropSubscription(ctx, sv.Server, subKey{sv.Server.Hash, privateKey(ss, sv.Server), r.Original}, ss, req.Session)
	return nil
}

// dropSubscription removes by's subscription for ss (all of ss's when by
// is nil), and the upstream's when no session wants the resource any more.
// A private upstream that has gone (its session ended) is not made again
// to be told.
func (s *Hub) dropSubscription(ctx context.Context, srv *registry.Server, key subKey, ss *session, by mcp.Session) {
	s.subMu.Lock()
	last := s.forgetLocked(key, ss, by)
	s.subMu.Unlock()
	if !last || srv == nil {
		return
	}
	var u *upstream.Upstream
	if key.private == "" {
		u = s.pool.Upstream(srv)
	} else if u = s.pool.Private(srv, key.private); u == nil {
		return
	}
	if err := u.Unsubscribe(ctx, key.uri); err != nil {
		s.log.Debug("unsubscribing upstream resource", "server", srv.Name, "uri", key.uri, "err", err)
	}
}

// dropSessionSubscriptions forgets an ended session's subscriptions.
func (s *Hub) dropSessionSubscriptions(ss *session) {
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
		ctx, cancel := context.WithTimeout(s.ctx, unsubscribeTimeout)
		s.dropSubscription(ctx, srv, key, ss, nil)
		cancel()
	}
}

// moveSubscriptions carries the subscriptions held on upstreams that are
// about to be retired to the servers' new upstreams, when a reload
// changed a server's identity (registry.Server.Hash): a session
// subscribed to a resource of the server it knows by that name is
// subscribed to it on the upstream that now serves that name, which is
// subscribed before its connection counts as made (Upstream.Adopt). A
// subscription to a server the session no longer sees, or that is not
// started (removed, disabled, hidden, untrusted), ends: nothing its old
// upstream says reaches anyone. started holds the hashes of the servers
// the pool is about to run; reconcile calls this before the pool retires
// the others, under reconcileMu.
func (s *Hub) moveSubscriptions(started map[string]bool) {
	type adopt struct {
		ss  *session
		srv *registry.Server
		uri string
	}
	var adopts []adopt
	s.subMu.Lock()
	for key, subs := range s.subs {
		if started[key.hash] {
			continue
		}
		delete(s.subs, key)
		for ss, sub := range subs {
			sv, ok := ss.View().Server(sub.server)
			if !ok || !started[sv.Server.Hash] {
				continue
			}
			to := subKey{sv.Server.Hash, privateKey(ss, sv.Server), key.uri}
			if s.subs[to] == nil {
				s.subs[to] = map[*session]*subscriber{}
				adopts = append(adopts, adopt{ss, sv.Server, key.uri})
			}
			if had := s.subs[to][ss]; had != nil {
				maps.Copy(had.by, sub.by)
			} else {
				s.subs[to][ss] = sub
			}
		}
	}
	s.subMu.Unlock()
	for _, a := range adopts {
		s.log.Debug("moving a resource subscription to the server's new upstream", "server", a.srv.Name, "uri", a.uri)
		s.upstreamFor(a.ss, a.srv).Adopt(a.uri)
	}
}

// onResourceUpdated is the pool's OnResourceUpdated: the update of the
// upstream named by srv and private reaches the sessions subscribed
// through that upstream.
func (s *Hub) onResourceUpdated(srv *registry.Server, private, uri string) {
	key := subKey{srv.Hash, private, uri}
	s.subMu.Lock()
	targets := make(map[*session]string, len(s.subs[key]))
	for ss, sub := range s.subs[key] {
		targets[ss] = sub.uri
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
