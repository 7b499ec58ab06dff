package upstream

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpgw/mcpgw/registry"
)

// A lazy upstream with a subscription is never closed for being idle; a
// connection it loses is made again without a call, and subscribed again
// (once) before it counts as made, so that the update the new connection
// sends reaches the pool. Unsubscribing ends both: the upstream idles out
// and is not connected again. At both protocols' subscriptions: a request,
// and a listen stream.
func TestSubscriptionKeepsUpstream(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"2025-11-25", sessionlessProtocol} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				var updates []string
				p := New(&Options{OnResourceUpdated: func(_ *registry.Server, _, uri string) {
					mu.Lock()
					updates = append(updates, uri)
					mu.Unlock()
				}})
				d := &memDialer{protocols: []string{protocol}}
				p.dial = d.dial
				defer p.Close()
				heard := func() []string {
					synctest.Wait()
					mu.Lock()
					defer mu.Unlock()
					return slices.Clone(updates)
				}
				srv := memServer("lazy")
				srv.IdleTimeout = time.Minute
				u := p.Upstream(srv)
				if err := u.Subscribe(context.Background(), "test://hello"); err != nil {
					t.Fatal(err)
				}
				if s := u.currentSession(); s == nil || s.cs.InitializeResult().ProtocolVersion != protocol {
					t.Fatalf("connected at %+v, want %s", s, protocol)
				}

				time.Sleep(time.Hour)
				synctest.Wait()
				if st := u.Status(); st.State != StateConnected || st.IdleCloses != 0 || d.dials.Load() != 1 {
					t.Fatalf("an hour after subscribing: %s, %d idle closes, %d dials; want connected once", st.State, st.IdleCloses, d.dials.Load())
				}

				d.dropLast()
				synctest.Wait()
				if st := u.Status(); st.State != StateConnected || st.Connects != 2 || d.dials.Load() != 2 {
					t.Fatalf("after the server dropped: %s, %d connects, %d dials; want connected again, without a call", st.State, st.Connects, d.dials.Load())
				}
				if got := call(t, u, "subscriptions", nil); got != "test://hello" {
					t.Errorf("the new connection's server holds %q, want test://hello once", got)
				}
				call(t, u, "touch", map[string]any{"uri": "test://hello"})
				if got := heard(); !slices.Equal(got, []string{"test://hello"}) {
					t.Errorf("heard %v after the new server's update, want test://hello", got)
				}

				if err := u.Unsubscribe(context.Background(), "test://hello"); err != nil {
					t.Fatal(err)
				}
				synctest.Wait() // a listen stream's end reaches the server after Unsubscribe
				if got := call(t, u, "subscriptions", nil); got != "none" {
					t.Errorf("after Unsubscribe the server holds %q", got)
				}
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				if st := u.Status(); st.State != StateIdle || st.IdleCloses != 1 {
					t.Fatalf("2 minutes after unsubscribing: %s, %d idle closes; want closed for being idle", st.State, st.IdleCloses)
				}
				time.Sleep(time.Hour)
				synctest.Wait()
				if n := d.dials.Load(); n != 2 {
					t.Errorf("%d dials after the idle close, want none since", n)
				}
			})
		})
	}
}
