package gateway

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// updates is a client session that records the resource updates it hears,
// in order.
type updates struct {
	cs       *mcp.ClientSession
	protocol string
	mu       sync.Mutex
	got      []string
	arrived  chan struct{}                             // one send per update
	acks     chan *mcp.SubscriptionsAcknowledgedParams // 2026-07-28: one per listen stream
}

// connectUpdates connects an in-memory client session to gw as opts say,
// at protocol, recording its resource updates.
func connectUpdates(t *testing.T, gw *Hub, protocol string, opts SessionOptions) *updates {
	t.Helper()
	u := &updates{protocol: protocol, arrived: make(chan struct{}, 64), acks: make(chan *mcp.SubscriptionsAcknowledgedParams, 16)}
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = gw.ServeTransport(ctx, st, opts) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "sub", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			u.mu.Lock()
			u.got = append(u.got, req.Params.URI)
			u.mu.Unlock()
			u.arrived <- struct{}{}
		},
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
				u.acks <- p
			}
			return next(ctx, method, req)
		}
	})
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	u.cs = cs
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	return u
}

// subscribe returns once mcpgw holds the subscription: its answer up to
// 2025-11-25, its acknowledgement of the listen stream from 2026-07-28 on.
func (u *updates) subscribe(t *testing.T, uri string) {
	t.Helper()
	if err := u.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribing to %s: %v", uri, err)
	}
	if u.protocol < sessionless {
		return
	}
	select {
	case ack := <-u.acks:
		if !slices.Equal(ack.Notifications.ResourceSubscriptions, []string{uri}) {
			t.Fatalf("subscribing to %s: acknowledged %+v", uri, ack.Notifications)
		}
	case <-time.After(waitBound):
		t.Fatalf("subscribing to %s: no acknowledgement in %v", uri, waitBound)
	}
}

// unsubscribe ends the subscription: from 2026-07-28 on by ending its
// listen stream, whose end mcpgw sees later.

func (u *updates) unsubscribe(t *testing.T, uri string) {
	t.Helper()
	if err := u.cs.Unsubscribe(context.Background(), &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatalf("unsubscribing from %s: %v", uri, err)
	}
}

// touch makes the session's own process of alpha send an update of uri.
func (u *updates) touch(t *testing.T, uri string) {
	t.Helper()
	if text, isErr := callText(t, u.cs, "alpha_touch", map[string]any{"uri": uri}); isErr {
		t.Fatalf("alpha_touch %s: %s", uri, text)
	}
}

// held is what the session's own process of alpha is subscribed to.
func (u *updates) held(t *testing.T) string {
	t.Helper()
	text, isErr := callText(t, u.cs, "alpha_subscriptions", nil)
	if isErr {
		t.Fatalf("alpha_subscriptions: %s", text)
	}
	return text
}

// waitHeld waits until the session's own process of alpha is subscribed
// to want (see held): an unsubscribe, or a session's end, reaches it after
// the client is done with it.
func (u *updates) waitHeld(t *testing.T, who, want string) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for got := u.held(t); got != want; got = u.held(t) {
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q, want %q", who, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitFor waits until the session has heard of uri (the last update it
// heard names it), and returns every update it has heard.
func (u *updates) waitFor(t *testing.T, uri string) []string {
	t.Helper()
	return u.waitUntil(t, "an update of "+uri, func(got []string) bool { return len(got) > 0 && got[len(got)-1] == uri })
}

// waitUntil waits until the updates the session has heard, in order,
// satisfy done, and returns them.
func (u *updates) waitUntil(t *testing.T, what string, done func([]string) bool) []string {
	t.Helper()
	timeout := time.After(waitBound)
	for {
		u.mu.Lock()
		got := slices.Clone(u.got)
		u.mu.Unlock()
		if done(got) {
			return got
		}
		select {
		case <-u.arrived:
		case <-timeout:
			t.Fatalf("waiting for %s; heard %v", what, got)
		}
	}
}

// privateAlpha is a gateway of alpha, whose processes are private as
// isolation says, in direct mode; team mode when team is set.
func privateAlpha(t *testing.T, isolation string, team bool) *Hub {
	t.Helper()
	alpha := fakeupstream.Server("alpha", nil)
	alpha.Isolation = isolation
	cfg := &registry.Config{
		Servers:  map[string]*registry.Server{"alpha": alpha},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect},
	}
	if team {
		cfg.Team = &registry.Team{Issuer: "https://login.example.com", Audience: "mcpgw"}
	}
	gw := New(cfg, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "alpha")
	return gw
}

// The protocols a test client subscribes at: resources/subscribe, and
// subscriptions/listen.
var subscribeProtocols = []string{"2025-11-25", sessionless}

// With "isolation": "session", a session's subscription reaches its own
// process, whose updates reach that session alone. Each session's last
// update is of test://readme, which its own process sent after the other
// process's update of test://hello: an update of the other process would
// have come before it. Unsubscribing reaches the session's process alone.
func TestPrivateSubscriptionsBySession(t *testing.T) {
	t.Parallel()
	for _, protocol := range subscribeProtocols {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			gw := privateAlpha(t, registry.IsolationSession, false)
			a, b := connectUpdates(t, gw, protocol, SessionOptions{}), connectUpdates(t, gw, protocol, SessionOptions{})
			a.subscribe(t, "test://hello")
			b.subscribe(t, "test://hello")
			b.subscribe(t, "test://readme")
			if got := a.held(t); got != "test://hello" {
				t.Errorf("a's process holds %q, want test://hello", got)
			}
			if got := b.held(t); got != "test://hello test://readme" {
				t.Errorf("b's process holds %q, want test://hello test://readme", got)
			}

			a.touch(t, "test://hello")
			if got := a.waitFor(t, "test://hello"); len(got) != 1 {
				t.Errorf("a heard %v after its touch, want test://hello once", got)
			}
			b.touch(t, "test://hello")
			b.touch(t, "test://readme")
			if got := b.waitFor(t, "test://readme"); !slices.Equal(got, []string{"test://hello", "test://readme"}) {
				t.Errorf("b heard %v, want test://hello and test://readme from its own process alone", got)
			}
			a.subscribe(t, "test://readme")
			a.touch(t, "test://readme")
			if got := a.waitFor(t, "test://readme"); !slices.Equal(got, []string{"test://hello", "test://readme"}) {
				t.Errorf("a heard %v, want test://hello and test://readme from its own process alone", got)
			}

			a.unsubscribe(t, "test://hello")
			a.waitHeld(t, "a's process", "test://readme")
			if got := b.held(t); got != "test://hello test://readme" {
				t.Errorf("b's process holds %q after a's unsubscribe, want test://hello test://readme", got)
			}
		})
	}
}

// With "isolation": "user" in team mode, alice's two sessions subscribe
// on her process (once: one subscription there, however many sessions
// want it), bob on his; her process's update reaches both of her
// sessions and not bob's, his reaches him alone. One of alice's sessions
// unsubscribing keeps her process's subscription for the other; the
// last one's unsubscribe, or end, releases it, on her process alone.
func TestPrivateSubscriptionsByUser(t *testing.T) {
	t.Parallel()
	for _, protocol := range subscribeProtocols {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			gw := privateAlpha(t, registry.IsolationUser, true)
			alice := SessionOptions{User: &identity.User{Name: "alice"}}
			a1, a2 := connectUpdates(t, gw, protocol, alice), connectUpdates(t, gw, protocol, alice)
			b := connectUpdates(t, gw, protocol, SessionOptions{User: &identity.User{Name: "bob"}})
			for _, s := range []*updates{a1, a2, b} {
				s.subscribe(t, "test://hello")
			}
			b.subscribe(t, "test://readme")
			if got := a1.held(t); got != "test://hello" {
				t.Errorf("alice's process holds %q, want test://hello once", got)
			}
			if got := b.held(t); got != "test://hello test://readme" {
				t.Errorf("bob's process holds %q, want test://hello test://readme", got)
			}

			a1.touch(t, "test://hello")
			a1.waitFor(t, "test://hello")
			a2.waitFor(t, "test://hello")
			b.touch(t, "test://hello")
			b.touch(t, "test://readme")
			if got := b.waitFor(t, "test://readme"); !slices.Equal(got, []string{"test://hello", "test://readme"}) {
				t.Errorf("bob heard %v, want test://hello and test://readme from his own process alone", got)
			}
			a1.subscribe(t, "test://readme")
			a2.subscribe(t, "test://readme")
			a2.touch(t, "test://readme")
			for who, s := range map[string]*updates{"alice's first session": a1, "alice's second session": a2} {
				if got := s.waitFor(t, "test://readme"); !slices.Equal(got, []string{"test://hello", "test://readme"}) {
					t.Errorf("%s heard %v, want test://hello and test://readme from her process alone", who, got)
				}
			}

			a1.unsubscribe(t, "test://hello")
			if got := a2.held(t); got != "test://hello test://readme" {
				t.Errorf("alice's process holds %q after one of her sessions left test://hello, want test://hello test://readme", got)
			}
			a2.unsubscribe(t, "test://hello")
			a2.waitHeld(t, "alice's process", "test://readme")
			if got := b.held(t); got != "test://hello test://readme" {
				t.Errorf("bob's process holds %q after alice's unsubscribes, want test://hello test://readme", got)
			}
			// Her sessions' ends release test://readme on her process,
			// which a session of hers opened later finds holding nothing.
			a1.cs.Close()
			a2.cs.Close()
			connectUpdates(t, gw, protocol, alice).waitHeld(t, "alice's process", "none")
			if got := b.held(t); got != "test://hello test://readme" {
				t.Errorf("bob's process holds %q after alice's sessions ended, want test://hello test://readme", got)
			}
		})
	}
}
