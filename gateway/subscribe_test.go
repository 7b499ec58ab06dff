package gateway

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// Two sessions share an upstream; a resource update reaches the one that
// subscribed, under its URI, and not the other; after unsubscribing,
// nothing more arrives.
func TestResourceUpdateReachesOnlySubscriber(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeDirect}, "alpha")
	connectNow(t, gw, "alpha")
	type rec struct {
		mu  sync.Mutex
		got []string
	}
	connectRec := func() (*mcp.ClientSession, *rec) {
		r := &rec{}
		ct, st := mcp.NewInMemoryTransports()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = gw.ServeTransport(ctx, st, SessionOptions{}) }()
		c := mcp.NewClient(&mcp.Implementation{Name: "sub", Version: "1"}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				r.mu.Lock()
				r.got = append(r.got, req.Params.URI)
				r.mu.Unlock()
			},
		})
		sess, err := c.Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.Close(); cancel(); <-done })
		return sess, r
	}
	subscriber, got := connectRec()
	other, otherGot := connectRec()
	ctx := context.Background()
	if err := subscriber.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://hello"}); err != nil {
		t.Fatal(err)
	}
	touch := func() {
		res, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_touch", Arguments: map[string]any{"uri": "test://hello"}})
		if err != nil || res.IsError {
			t.Fatalf("alpha_touch: %v %+v", err, res)
		}
	}
	// An upstream on the sessionless protocol carries updates on a listen
	// stream its SDK opens after the subscribe returns, so the first touch
	// may come too early: touch until the update arrives (bounded).
	count := func(r *rec) int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.got)
	}
	deadline := time.Now().Add(20 * time.Second)
	for count(got) == 0 && time.Now().Before(deadline) {
		touch()
		time.Sleep(50 * time.Millisecond)
	}
	got.mu.Lock()
	if len(got.got) == 0 || got.got[0] != "test://hello" {
		t.Errorf("subscriber got %v, want updates of test://hello", got.got)
	}
	got.mu.Unlock()
	if err := subscriber.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://hello"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // updates of earlier touches still on their way
	before := count(got)
	touch()
	// A second session's call round-trip is the barrier: the update of the
	// touch came before its result.
	time.Sleep(100 * time.Millisecond)
	if n := count(otherGot); n != 0 {
		t.Errorf("the session that did not subscribe got %d updates", n)
	}
	if n := count(got); n != before {
		t.Errorf("after unsubscribing the session got %d more updates", n-before)
	}
}
