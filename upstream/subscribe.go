package upstream

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resource subscriptions. Up to 2025-11-25 a subscription is a request
// the server answers once it holds it. From 2026-07-28 on it is a
// subscriptions/listen stream (SEP-2575), which the go-sdk opens and
// returns from at once: the server says it holds the subscription with
// notifications/subscriptions/acknowledged, the first message on the
// stream. Subscribe waits for that, so that an update the server sends
// once Subscribe has returned reaches mcpgw, as it does in the older
// protocol; otherwise a client told it is subscribed could miss the
// first updates.
//
// A subscription belongs to the upstream, not to one connection: until
// Unsubscribe, every new connection (after a crash, a lost HTTP session,
// a reconnect asked for) is subscribed again before it counts as made, and
// the upstream stays connected as a keep-alive one does — never closed for
// being idle, a lost connection made again without waiting for a call —
// since a subscriber makes no calls and would otherwise stop hearing of
// its resources without knowing.

// Subscribe asks the upstream for notifications/resources/updated about
// uri, and returns once the upstream holds the subscription. Callers
// subscribe to a URI once (the gateway does for all its sessions), and
// end it with Unsubscribe.
func (u *Upstream) Subscribe(ctx context.Context, uri string) error {
	u.mu.Lock()
	if u.subs == nil {
		u.subs = map[string]bool{}
	}
	u.subs[uri] = true
	u.stopIdleLocked()
	u.mu.Unlock()
	u.superviseKeepAlive()
	err := u.do(ctx, operation{format: "subscribing to %s", arg: uri}, func(ctx context.Context, s *session) error {
		return u.subscribeOn(ctx, s, uri)
	})
	if err != nil {
		u.forgetSubscription(uri)
	}
	return err
}

// adoptTimeout bounds subscribing a live connection to a subscription
// Adopt took over.
const adoptTimeout = time.Minute

// Adopt takes over a subscription to uri that callers held on another
// upstream, one a configuration reload replaced with this one (the
// server's identity changed): it is kept as Subscribe's is, so the
// upstream is kept connected and a connection it makes is subscribed
// before it counts as made; one it already has is subscribed in the
// background. Adopt does not wait, and a server that refuses the
// subscription is logged: nobody is waiting to be told.
func (u *Upstream) Adopt(uri string) {
	u.mu.Lock()
	if u.subs == nil {
		u.subs = map[string]bool{}
	}
	u.subs[uri] = true
	u.stopIdleLocked()
	log := u.log
	u.mu.Unlock()
	u.superviseKeepAlive()
	u.pool.goTracked(func() {
		ctx, cancel := context.WithTimeout(context.Background(), adoptTimeout)
		defer cancel()
		err := u.do(ctx, operation{format: "subscribing to %s", arg: uri}, func(ctx context.Context, s *session) error {
			return u.subscribeOn(ctx, s, uri)
		})
		if err != nil {
			log.Warn("subscribing to a resource subscribers held before a reload", "uri", uri, "error", err)
		}
	})
}

// subscribeOn subscribes s to uri unless it is already (a connection made
// while Subscribe waited for it was subscribed by resubscribe).
func (u *Upstream) subscribeOn(ctx context.Context, s *session, uri string) error {
	if s.holds(uri) {
		return nil
	}
	init := s.cs.InitializeResult()
	if init == nil || init.ProtocolVersion < sessionlessProtocol {
		if err := s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			return err
		}
		s.hold(uri)
		return nil
	}
	if caps := init.Capabilities; caps == nil || caps.Resources == nil || !caps.Resources.Subscribe {
		return fmt.Errorf("the server takes no resource subscriptions")
	}
	acked, stop := u.acks.await(uri)
	defer stop()
	if err := s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		return err
	}
	select {
	case <-acked:
		s.hold(uri)
		return nil
	case <-ctx.Done():
		_ = s.cs.Unsubscribe(context.WithoutCancel(ctx), &mcp.UnsubscribeParams{URI: uri})
		return fmt.Errorf("waiting for the server to acknowledge the subscription: %w", ctx.Err())
	}
}

// Unsubscribe ends a Subscribe. A connection that never held the
// subscription (the one that did was lost) is not made to be told.
func (u *Upstream) Unsubscribe(ctx context.Context, uri string) error {
	u.mu.Lock()
	s := u.sess
	u.mu.Unlock()
	u.forgetSubscription(uri)
	if s == nil || !s.holds(uri) {
		return nil
	}
	return u.do(ctx, operation{format: "unsubscribing from %s", arg: uri}, func(ctx context.Context, s *session) error {
		if !s.release(uri) {
			return nil
		}
		return s.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
}

// forgetSubscription stops keeping uri's subscription for new
// connections, and the upstream connected for it alone. A subscription is
// use: the upstream's idle time starts when the last one ends.
func (u *Upstream) forgetSubscription(uri string) {
	u.mu.Lock()
	delete(u.subs, uri)
	u.lastUsed = time.Now()
	u.armIdleLocked()
	u.mu.Unlock()
	u.nudge() // a loop kept for subscriptions alone ends
}

// resubscribe subscribes s, a new connection, to what callers hold,
// before it counts as made, so that an update sent once it is reaches
// them. A resource the server refuses now is logged and left out: the
// connection serves its calls all the same.
func (u *Upstream) resubscribe(ctx context.Context, s *session) {
	u.mu.Lock()
	uris := slices.Sorted(maps.Keys(u.subs))
	log := u.log
	u.mu.Unlock()
	if len(uris) == 0 {
		return
	}
	done := make([]string, 0, len(uris))
	for _, uri := range uris {
		if err := u.subscribeOn(ctx, s, uri); err != nil {
			log.Warn("subscribing a new connection to a resource subscribers hold", "uri", uri, "error", err)
			continue
		}
		done = append(done, uri)
	}
	log.Debug("subscribed the new connection to the resources subscribers hold", "uris", done)
}

// subscriptionAcks are the Subscribes waiting for an upstream's
// notifications/subscriptions/acknowledged, by URI. The go-sdk opens one
// listen stream per URI and does not say which stream an acknowledgement
// is of, so an acknowledgement that names a URI ends every wait for it.
type subscriptionAcks struct {
	mu    sync.Mutex
	byURI map[string][]chan struct{}
}

// await registers a wait for an acknowledgement of uri: acked is closed
// when one arrives; stop ends the wait.
func (a *subscriptionAcks) await(uri string) (acked <-chan struct{}, stop func()) {
	ch := make(chan struct{})
	a.mu.Lock()
	if a.byURI == nil {
		a.byURI = map[string][]chan struct{}{}
	}
	a.byURI[uri] = append(a.byURI[uri], ch)
	a.mu.Unlock()
	return ch, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		waits := slices.DeleteFunc(a.byURI[uri], func(c chan struct{}) bool { return c == ch })
		if len(waits) == 0 {
			delete(a.byURI, uri)
		} else {
			a.byURI[uri] = waits
		}
	}
}

// acked ends the waits for the URIs p names.
func (a *subscriptionAcks) acked(p *mcp.SubscriptionsAcknowledgedParams) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, uri := range p.Notifications.ResourceSubscriptions {
		for _, ch := range a.byURI[uri] {
			close(ch)
		}
		delete(a.byURI, uri)
	}
}

// middleware sees the upstream's acknowledgements on their way to the
// go-sdk client, which ignores them.
func (a *subscriptionAcks) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && p != nil {
			a.acked(p)
		}
		return next(ctx, method, req)
	}
}

// holds reports whether uri is subscribed on s.
func (s *session) holds(uri string) bool {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	return s.subs[uri]
}

// hold records that uri is subscribed on s.
func (s *session) hold(uri string) {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	if s.subs == nil {
		s.subs = map[string]bool{}
	}
	s.subs[uri] = true
}

// release forgets uri's subscription on s, and reports whether it had one.
func (s *session) release(uri string) bool {
	s.subMu.Lock()
	defer s.subMu.Unlock()
	had := s.subs[uri]
	delete(s.subs, uri)
	return had
}
