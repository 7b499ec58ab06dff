package upstream

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// acceptOnly is fakeupstream's server behind a bearer check: only tokens
// in accept get through; the others are answered 401 with a challenge.
func acceptOnly(accept ...string) http.Handler {
	h := fakeupstream.Handler(nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		for _, a := range accept {
			if tok == a {
				h.ServeHTTP(w, r)
				return
			}
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	})
}

// TestExchangeRefusedForgets: an upstream reached with an exchanged token
// that answers 401 has that token forgotten (Options.ExchangeRefused, for
// its key) and the request sent again with a token exchanged anew, which
// it accepts: the call succeeds, and the refused token is not sent again.
func TestExchangeRefusedForgets(t *testing.T) {
	ts, rec := httpServer(t, acceptOnly("fresh"))
	var mu sync.Mutex
	kept := map[string]string{"user:alice": "revoked"} // what the exchanger keeps, by key
	var forgot []string
	p := newPool(t, &Options{
		Exchange: func(_ context.Context, _ *registry.Server, key string) (string, error) {
			mu.Lock()
			defer mu.Unlock()
			if tok, ok := kept[key]; ok {
				return tok, nil
			}
			kept[key] = "fresh" // exchanged anew
			return "fresh", nil
		},
		ExchangeRefused: func(_ *registry.Server, key string) {
			mu.Lock()
			defer mu.Unlock()
			forgot = append(forgot, key)
			delete(kept, key)
		},
	})
	srv := &registry.Server{Name: "tickets", URL: ts.URL + "/mcp", Hash: "tickets", Isolation: registry.IsolationUser,
		TokenExchange: &registry.TokenExchange{Audience: "tickets", ClientID: "gw"}}
	u := p.SessionUpstream(srv, "user:alice")
	if got := call(t, u, "echo", map[string]any{"message": "hi"}); got != "hi" {
		t.Errorf("echo = %q", got)
	}
	mu.Lock()
	if len(forgot) != 1 || forgot[0] != "user:alice" {
		t.Errorf("forgotten: %q, want alice's token once", forgot)
	}
	mu.Unlock()
	var refused int
	for _, r := range rec.requests() {
		if r.Auth == "Bearer revoked" {
			refused++
			if r.Status != http.StatusUnauthorized {
				t.Errorf("the revoked token got %d", r.Status)
			}
		}
	}
	if refused != 1 {
		t.Errorf("the refused token was sent %d times, want once", refused)
	}

	// An upstream that refuses the token exchanged anew too: the call
	// fails saying so, and no bearer token is asked for.
	ts2, _ := httpServer(t, acceptOnly())
	srv2 := &registry.Server{Name: "closed", URL: ts2.URL + "/mcp", Hash: "closed", Isolation: registry.IsolationUser,
		TokenExchange: &registry.TokenExchange{Audience: "closed", ClientID: "gw"}}
	_, err := p.SessionUpstream(srv2, "user:bob").Call(context.Background(), "echo", map[string]any{"message": "hi"}, nil)
	var ae *AuthError
	if !errors.As(err, &ae) || !strings.Contains(ae.Reason, "to the user's exchanged token, and to one exchanged anew") || strings.Contains(ae.Reason, "bearerToken") {
		t.Errorf("a call the upstream refuses whatever the token: %v", err)
	}
}

// TestUserLoginsOwnTokens: a server whose logins are each user's own
// (Options.UserLogins) is reached by alice's upstream with her token
// only, never the daemon's own login (OAuthStore); bob, who has none,
// is refused with the login to run, and the server never sees a request
// from his upstream; once he has a login his upstream uses his token.
func TestUserLoginsOwnTokens(t *testing.T) {
	ts, rec := httpServer(t, acceptOnly("alice-at", "bob-at", "operator-at"))
	url := ts.URL + "/mcp"
	save := func(s *oauth.Store, tok string) {
		t.Helper()
		if err := s.Save(&oauth.Credentials{ServerURL: url, ClientID: "c", TokenURL: ts.URL + "/token", Token: &oauth2.Token{AccessToken: tok}}); err != nil {
			t.Fatal(err)
		}
	}
	operator := &oauth.Store{Dir: t.TempDir()}
	save(operator, "operator-at")
	users := map[string]*oauth.Store{"user:alice": {Backend: &oauth.Memory{}}, "user:bob": {Backend: &oauth.Memory{}}, "": {Backend: &oauth.Memory{}}}
	save(users["user:alice"], "alice-at")
	var asked []string
	var mu sync.Mutex
	p := newPool(t, &Options{
		OAuthStore: operator,
		UserLogins: func(_ *registry.Server, key string) *oauth.Store {
			mu.Lock()
			asked = append(asked, key)
			mu.Unlock()
			return users[key]
		},
	})
	srv := &registry.Server{Name: "remote", URL: url, Hash: "remote", Auth: registry.AuthOAuth, Isolation: registry.IsolationUser}
	if got := call(t, p.SessionUpstream(srv, "user:alice"), "echo", map[string]any{"message": "alice"}); got != "alice" {
		t.Errorf("alice's echo = %q", got)
	}
	for _, r := range rec.requests() {
		if r.Auth != "Bearer alice-at" {
			t.Errorf("alice's upstream sent %q", r.Auth)
		}
	}
	rec.reset()

	bob := p.SessionUpstream(srv, "user:bob")
	_, err := bob.Call(context.Background(), "echo", map[string]any{"message": "bob"}, nil)
	var ae *AuthError
	if !errors.As(err, &ae) || !strings.Contains(ae.Reason, "not logged in; run: mcpgw login remote") {
		t.Fatalf("bob's call without a login: %v, want the login to run", err)
	}
	if reqs := rec.requests(); len(reqs) != 0 {
		t.Errorf("bob's upstream reached the server without a login: %+v", reqs)
	}
	if _, err := p.Upstream(srv).Connect(context.Background()); !errors.As(err, &ae) {
		t.Errorf("the shared upstream connected (with the daemon's own login?): %v", err)
	}
	if reqs := rec.requests(); len(reqs) != 0 {
		t.Errorf("the shared upstream reached the server: %+v", reqs)
	}

	save(users["user:bob"], "bob-at")
	if _, err := bob.Reconnect(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := call(t, bob, "echo", map[string]any{"message": "bob"}); got != "bob" {
		t.Errorf("bob's echo = %q", got)
	}
	for _, r := range rec.requests() {
		if r.Auth != "Bearer bob-at" {
			t.Errorf("bob's upstream sent %q", r.Auth)
		}
	}
}
