package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// sessionlessHandler serves fakeupstream's server at protocol 2026-07-28
// only: a request of the 2025 era (initialize) is answered 400.
func sessionlessHandler() http.Handler {
	srv := fakeupstream.NewServer(nil)
	return fakeupstream.SessionlessOnly(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
}

// olderHandler serves fakeupstream's server at protocol 2025-06-18 only.
func olderHandler() http.Handler {
	srv := fakeupstream.NewServer(&fakeupstream.Options{Protocols: []string{"2025-06-18"}})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return srv
	}, nil)
}

// A server of protocol 2026-07-28 alone is connected at that revision; and
// one that spoke an older revision at the last connect, which the next is
// pinned to, is asked afresh when it has moved on to 2026-07-28 only (an
// upgrade), instead of failing at the pinned revision for good.
func TestConnectSessionlessOnly(t *testing.T) {
	var h atomic.Pointer[http.Handler]
	serve := func(next http.Handler) { h.Store(&next) }
	serve(sessionlessHandler())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	p := newPool(t, nil)
	u := p.Upstream(&registry.Server{Name: "new", URL: ts.URL, Hash: "new"})
	snap, err := u.Connect(context.Background())
	if err != nil {
		t.Fatalf("connecting to a 2026-07-28-only server: %v", err)
	}
	if snap.ProtocolVersion != "2026-07-28" || len(snap.Tools) == 0 {
		t.Fatalf("connected at %q with %d tools, want 2026-07-28 and the server's tools", snap.ProtocolVersion, len(snap.Tools))
	}
	call(t, u, "echo", map[string]any{"message": "x"})

	old := p.Upstream(&registry.Server{Name: "upgraded", URL: ts.URL + "/", Hash: "upgraded"})
	serve(olderHandler())
	if snap, err := old.Connect(context.Background()); err != nil || snap.ProtocolVersion >= "2026-07-28" {
		t.Fatalf("connecting to the older server: %v, %+v", err, snap)
	}
	serve(sessionlessHandler())
	snap, err = old.Reconnect(context.Background())
	if err != nil {
		t.Fatalf("reconnecting after the server moved to 2026-07-28 only: %v", err)
	}
	if snap.ProtocolVersion != "2026-07-28" {
		t.Errorf("reconnected at %q, want 2026-07-28", snap.ProtocolVersion)
	}
}

// A server whose handshake (server/discover, or initialize) takes the
// stored token but whose lists refuse it (as one whose resource moved to
// another authorization server does) needs a login, in either era: the
// upstream says so (needs-auth, and the command to run) rather than
// failing and retrying with backoff.
func TestHandshakeWithoutCredentialsListsWith(t *testing.T) {
	for _, era := range []struct {
		name string
		h    http.Handler
	}{
		{"2026-07-28", sessionlessHandler()},
		{"2025-06-18", olderHandler()},
	} {
		t.Run(era.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var msg struct{ Method string }
				_ = json.Unmarshal(body, &msg)
				open := msg.Method == "server/discover" || msg.Method == "initialize" || strings.HasPrefix(msg.Method, "notifications/")
				if !open && r.Method == http.MethodPost {
					w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+"http://"+r.Host+`/.well-known/oauth-protected-resource"`)
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				era.h.ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close)
			store := &oauth.Store{Dir: t.TempDir()}
			if err := store.Save(&oauth.Credentials{ServerURL: ts.URL, ClientID: "c", TokenURL: ts.URL + "/token", Token: &oauth2.Token{AccessToken: "refused"}}); err != nil {
				t.Fatal(err)
			}
			p := newPool(t, &Options{OAuthStore: store})
			u := p.Upstream(&registry.Server{Name: "half", URL: ts.URL, Hash: "half", Auth: registry.AuthOAuth})
			_, err := u.Connect(context.Background())
			var ae *AuthError
			if !errors.As(err, &ae) || !strings.Contains(ae.Reason, "mcpgw login half") {
				t.Fatalf("connect: %v, want an AuthError that says to log in", err)
			}
			if st := u.Status(); st.State != StateNeedsAuth {
				t.Errorf("state %s (%s), want needs-auth", st.State, st.LastError)
			}
		})
	}
}

// A call that times out on a server that is only slow with it leaves the
// connection be, in either era: the check that it still answers must be
// one its revision has (protocol 2026-07-28 has no ping).
func TestSlowCallKeepsConnection(t *testing.T) {
	for _, protocols := range []string{"", "2025-11-25"} {
		t.Run("protocols="+protocols, func(t *testing.T) {
			srv, pidFile := testServer(t, "slow", map[string]string{fakeupstream.EnvProtocols: protocols})
			srv.RequestTimeout = 300 * time.Millisecond
			u := newPool(t, nil).Upstream(srv)
			_, err := u.Call(context.Background(), "sleep", map[string]any{"ms": 5000}, nil)
			var te *TimeoutError
			if !errors.As(err, &te) {
				t.Fatalf("a slow call: %v, want a TimeoutError", err)
			}
			if got := call(t, u, "echo", map[string]any{"message": "again"}); got != "again" {
				t.Errorf("the next call = %q", got)
			}
			if ps := pids(t, pidFile); len(ps) != 1 {
				t.Errorf("processes = %v, want the one: a slow server is not recycled", ps)
			}
			if st := u.Status(); st.Connects != 1 {
				t.Errorf("%d connects, want 1", st.Connects)
			}
		})
	}
}

// The same over HTTP, with a server of protocol 2026-07-28 alone.
func TestSlowCallKeepsConnectionHTTP(t *testing.T) {
	var connects atomic.Int32
	h := sessionlessHandler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"server/discover"`)) {
			connects.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	u := newPool(t, nil).Upstream(&registry.Server{Name: "slow", URL: ts.URL, Hash: "slow", RequestTimeout: 300 * time.Millisecond})
	_, err := u.Call(context.Background(), "sleep", map[string]any{"ms": 5000}, nil)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("a slow call: %v, want a TimeoutError", err)
	}
	if got := call(t, u, "echo", map[string]any{"message": "again"}); got != "again" {
		t.Errorf("the next call = %q", got)
	}
	if n := connects.Load(); n != 1 {
		t.Errorf("%d connects, want 1: a slow server is not recycled", n)
	}
}
