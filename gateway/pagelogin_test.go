package gateway

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// Log in from the status page: POST /-/login answers with the
// authorization URL (a form post is redirected there); once the browser
// has been through it, the login is stored, the server reconnected, and
// its tools are callable. The daemon opened no browser itself.
func TestPageLogin(t *testing.T) {
	t.Parallel()
	as := fakeupstream.NewOAuthServer(time.Hour)
	ts := httptest.NewServer(as.Handler())
	defer ts.Close()
	as.URL = ts.URL
	srv := &registry.Server{Name: "remote", URL: ts.URL + "/mcp", Auth: registry.AuthOAuth, Enabled: true, Lifecycle: registry.LifecycleLazy}
	srv.Hash = "remote-hash"
	cfg := &registry.Config{Servers: map[string]*registry.Server{"remote": srv}, Settings: registry.Settings{Mode: ModeDirect, ToolPrefix: registry.PrefixServer}}
	gw := New(cfg, &Options{NoBootstrap: true, OAuthStore: &oauth.Store{Dir: t.TempDir()}})
	defer gw.Close()
	gw.Start()
	h := gw.Handler(&HTTPOptions{Token: pageToken})

	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/-/login", strings.NewReader("server=remote"))
	// With a charset, the post is not a browser form's: the answer is the
	// URL as text rather than a redirect to it.
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+pageToken)
	h.ServeHTTP(rec, req)
	authURL := strings.TrimSpace(rec.Body.String())
	if rec.Code != http.StatusOK || !strings.HasPrefix(authURL, ts.URL+"/authorize?") {
		t.Fatalf("POST /-/login: %d %q", rec.Code, authURL)
	}
	// The browser: through the authorization page to the callback.
	resp, err := http.Get(authURL)
	if err != nil {
		t.Fatalf("following the authorization URL: %v", err)
	}
	resp.Body.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var login string
		for _, sr := range gw.Status().Servers {
			login = sr.Login
		}
		// Logged in, and reconnected: its tools are listed.
		if sv, _ := gw.Catalog().View().Server("remote"); login == "logged in" && sv.Listing != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no login 20 s after the authorization (login %q)", login)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c := connect(t, gw, SessionOptions{})
	if text, isErr := c.call(t, "remote_echo", map[string]any{"message": "after the page login"}); isErr || text != "after the page login" {
		t.Errorf("call after the login: %q (error %v)", text, isErr)
	}
	if code := postForm(h, "/-/login", "server=nope"); code != http.StatusNotFound {
		t.Errorf("login of an unknown server: %d", code)
	}
}

// A login asked of a daemon that is closing starts nothing: it fails at
// once, and no work is counted after Close has begun waiting for it.
func TestPageLoginWhileClosing(t *testing.T) {
	t.Parallel()
	srv := &registry.Server{Name: "remote", URL: "http://127.0.0.1:1/mcp", Auth: registry.AuthOAuth, Enabled: true, Lifecycle: registry.LifecycleLazy, Hash: "remote-hash"}
	cfg := &registry.Config{Servers: map[string]*registry.Server{"remote": srv}}
	gw := New(cfg, &Options{NoBootstrap: true, OAuthStore: &oauth.Store{Dir: t.TempDir()}})
	gw.Start()
	if err := gw.Close(); err != nil {
		t.Fatal(err)
	}
	l := gw.startLogin(srv)
	select {
	case <-l.done:
	default:
		t.Fatal("a login asked of a closed daemon is still in progress")
	}
	if !errors.Is(l.err, errClosing) {
		t.Errorf("login error = %v, want %v", l.err, errClosing)
	}
	gw.loginMu.Lock()
	defer gw.loginMu.Unlock()
	if len(gw.logins) != 0 {
		t.Errorf("%d logins kept by a closed daemon", len(gw.logins))
	}
}
