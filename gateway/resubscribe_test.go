package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// waitN waits until the session has heard n updates, and returns those it
// has heard.
func (u *updates) waitN(t *testing.T, n int) []string {
	t.Helper()
	return u.waitUntil(t, fmt.Sprintf("%d updates", n), func(got []string) bool { return len(got) >= n })
}

// waitPIDs waits until the server's PID file names n processes, and
// returns them: a process the pool started of its own accord.
func waitPIDs(t *testing.T, path string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		pids, err := fakeupstream.ReadPIDs(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes started, want %d", len(pids), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// alphaAt is a gateway of alpha, in direct mode, whose process speaks
// protocol alone and appends its PID to the file returned.
func alphaAt(t *testing.T, protocol string) (*Hub, string) {
	t.Helper()
	pids := filepath.Join(t.TempDir(), "alpha.pids")
	alpha := fakeupstream.Server("alpha", map[string]string{fakeupstream.EnvPIDFile: pids, fakeupstream.EnvProtocols: protocol})
	gw := New(&registry.Config{
		Servers:  map[string]*registry.Server{"alpha": alpha},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect},
	}, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "alpha")
	return gw, pids
}

// When alpha's process crashes, mcpgw starts another without waiting for
// a call and subscribes it to what its sessions hold, once each, before
// calls reach it: the new process's updates reach the session subscribed
// to each resource, and only it. Each session's updates end with one of
// test://data.json, which both hold, sent after the others: an update
// that went to the wrong session would have come before it. At both
// protocols, which subscribe upstream differently (a request; a listen
// stream).
func TestSubscriptionsSurviveUpstreamCrash(t *testing.T) {
	t.Parallel()
	for _, protocol := range subscribeProtocols {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			gw, pidFile := alphaAt(t, protocol)
			hello := connectUpdates(t, gw, protocol, SessionOptions{})
			readme := connectUpdates(t, gw, protocol, SessionOptions{})
			hello.subscribe(t, "test://hello")
			readme.subscribe(t, "test://readme")
			hello.subscribe(t, "test://data.json")
			readme.subscribe(t, "test://data.json")
			touchAll := func() {
				t.Helper()
				for _, uri := range []string{"test://hello", "test://readme", "test://data.json"} {
					readme.touch(t, uri)
				}
			}
			touchAll()
			hello.waitN(t, 2)
			readme.waitN(t, 2)

			if text, isErr := callText(t, readme.cs, "alpha_crash", nil); !isErr {
				t.Fatalf("alpha_crash answered %q", text)
			}
			pids := waitPIDs(t, pidFile, 2)
			if got := readme.held(t); got != "test://data.json test://hello test://readme" {
				t.Errorf("the new process holds %q, want each resource once", got)
			}
			touchAll()
			if got, want := hello.waitN(t, 4), []string{"test://hello", "test://data.json", "test://hello", "test://data.json"}; !slices.Equal(got, want) {
				t.Errorf("the session subscribed to test://hello heard %v, want %v", got, want)
			}
			if got, want := readme.waitN(t, 4), []string{"test://readme", "test://data.json", "test://readme", "test://data.json"}; !slices.Equal(got, want) {
				t.Errorf("the session subscribed to test://readme heard %v, want %v", got, want)
			}
			if now, err := fakeupstream.ReadPIDs(pidFile); err != nil || !slices.Equal(now, pids) {
				t.Errorf("processes %v after the crash, want %v: one restart (%v)", now, pids, err)
			}
		})
	}
}

// A private process ("isolation": "session") whose session subscribed and
// makes no call is not closed for being idle: a server with the same idle
// timeout, called after the subscription, is closed first, and the
// private process, still the first, still sends the session its updates.
func TestSubscriptionKeepsPrivateUpstreamFromIdling(t *testing.T) {
	t.Parallel()
	const idle = 100 * time.Millisecond
	alpha := fakeupstream.Server("alpha", nil)
	alpha.Isolation = registry.IsolationSession
	alpha.IdleTimeout = idle
	beta := fakeupstream.Server("beta", nil)
	beta.IdleTimeout = idle
	gw := New(&registry.Config{
		Servers:  map[string]*registry.Server{"alpha": alpha, "beta": beta},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect},
	}, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "alpha")
	connectNow(t, gw, "beta")
	betaUp := gw.Pool().Upstream(gw.Catalog().View().Config.Servers["beta"])
	idleClosed := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(waitBound); betaUp.Status().IdleCloses < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("beta closed for being idle %d times in %v, want %d", betaUp.Status().IdleCloses, waitBound, n)
			}
		}
	}
	private := func() upstream.Status {
		t.Helper()
		st := gw.Pool().PrivateStatus(gw.Catalog().View().Config.Servers["alpha"])
		if len(st) != 1 {
			t.Fatalf("%d private processes of alpha, want the session's", len(st))
		}
		var one upstream.Status
		for _, s := range st {
			one = s
		}
		return one
	}
	idleClosed(1) // after its discovery

	s := connectUpdates(t, gw, "2025-11-25", SessionOptions{})
	s.subscribe(t, "test://hello")
	mine := private()
	if text, isErr := callText(t, s.cs, "beta_echo", map[string]any{"message": "x"}); isErr {
		t.Fatal(text)
	}
	idleClosed(2)
	if st := private(); st.State != upstream.StateConnected || st.IdleCloses != 0 || st.Connects != 1 || st.PID != mine.PID {
		t.Errorf("the subscribed session's process: %s, pid %d, %d connects, %d idle closes; want pid %d connected once, never closed for being idle",
			st.State, st.PID, st.Connects, st.IdleCloses, mine.PID)
	}
	s.touch(t, "test://hello")
	if got := s.waitFor(t, "test://hello"); !slices.Equal(got, []string{"test://hello"}) {
		t.Errorf("heard %v, want test://hello", got)
	}
}

// When an HTTP server restarts, the session mcpgw had with it is gone:
// the session's stream breaks, the server no longer knows its ID, and the
// go-sdk ends the connection. mcpgw connects again without waiting for a
// call and subscribes the new session before calls reach it: the
// restarted server's update reaches the subscribed session. The test
// waits for the restarted server to receive the subscription. A server of
// 2026-07-28 has no session to lose: its listen stream ends, which mcpgw
// watches for itself, and it connects again and subscribes the restarted
// server the same way.
func TestSubscriptionSurvivesHTTPServerRestart(t *testing.T) {
	t.Parallel()
	for _, protocol := range subscribeProtocols {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			testSubscriptionSurvivesHTTPServerRestart(t, protocol)
		})
	}
}

func testSubscriptionSurvivesHTTPServerRestart(t *testing.T, protocol string) {
	subscribed := make(chan struct{}, 8)
	serve := func() http.Handler {
		srv := fakeupstream.NewServer(&fakeupstream.Options{Protocols: []string{protocol}, Exit: func(int) {}})
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if p, ok := req.GetParams().(*mcp.SubscriptionsListenParams); method == "resources/subscribe" ||
					ok && p.Notifications != nil && len(p.Notifications.ResourceSubscriptions) > 0 {
					subscribed <- struct{}{}
				}
				return next(ctx, method, req)
			}
		})
		return fakeupstream.ConformanceHandler(srv)
	}
	var h atomic.Pointer[http.Handler]
	first := serve()
	h.Store(&first)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	web := &registry.Server{Name: "web", URL: ts.URL, Enabled: true, Lifecycle: registry.LifecycleLazy, Hash: "web-" + protocol}
	gw := New(&registry.Config{
		Servers:  map[string]*registry.Server{"web": web},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect},
	}, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "web")

	s := connectUpdates(t, gw, protocol, SessionOptions{})
	s.subscribe(t, "test://hello")
	<-subscribed
	touch := func() {
		t.Helper()
		if text, isErr := callText(t, s.cs, "web_touch", map[string]any{"uri": "test://hello"}); isErr {
			t.Fatal(text)
		}
	}
	touch()
	s.waitN(t, 1)

	second := serve()
	h.Store(&second)
	ts.CloseClientConnections()
	select {
	case <-subscribed:
	case <-time.After(waitBound):
		t.Fatalf("the restarted server was not subscribed in %v", waitBound)
	}
	touch()
	if got := s.waitN(t, 2); !slices.Equal(got, []string{"test://hello", "test://hello"}) {
		t.Errorf("heard %v, want test://hello from the server before its restart and after", got)
	}
	if st := gw.Pool().Upstream(web).Status(); st.Connects != 2 {
		t.Errorf("web connected %d times, want 2: once before its restart, once after", st.Connects)
	}
}
