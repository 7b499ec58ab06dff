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
