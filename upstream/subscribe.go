package upstream

import (
	"context"
	"fmt"
	"slices"
	"sync"

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

// Subscribe asks the upstream for notifications/resources/updated about
// uri, and returns once the upstream holds the subscription.
func (u *Upstream) Subscribe(ctx context.Context, uri string) error {
	return u.do(ctx, operation{"subscribing to %s", uri}, func(ctx context.Context, s *session) error {
		init := s.cs.InitializeResult()
		if init == nil || init.ProtocolVersion < sessionlessProtocol {
			return s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
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
			return nil
		case <-ctx.Done():
			_ = s.cs.Unsubscribe(context.WithoutCancel(ctx), &mcp.UnsubscribeParams{URI: uri})
			return fmt.Errorf("waiting for the server to acknowledge the subscription: %w", ctx.Err())
		}
	})
}

// Unsubscribe ends a Subscribe.
func (u *Upstream) Unsubscribe(ctx context.Context, uri string) error {
	return u.do(ctx, operation{"unsubscribing from %s", uri}, func(ctx context.Context, s *session) error {
		return s.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
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
