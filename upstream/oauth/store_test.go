package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

func TestStoreFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "oauth")
	s := &Store{Dir: dir}
	if _, err := s.Load("https://a.example/mcp"); !errors.Is(err, ErrNotLoggedIn) {
		t.Fatalf("empty store: %v", err)
	}
	c := &Credentials{ServerURL: "https://a.example/mcp", ClientID: "id", TokenURL: "https://as/token",
		Token: &oauth2.Token{AccessToken: "secret-at", RefreshToken: "secret-rt"}, Registered: true}
	if err := s.Save(c); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(s.path(c.ServerURL)); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	got, err := s.Load("https://a.example/mcp")
	if err != nil || got.Token.AccessToken != "secret-at" || got.ClientID != "id" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	// Another URL never gets these credentials, even from its own file.
	data, _ := os.ReadFile(s.path(c.ServerURL))
	os.WriteFile(s.path("https://b.example/mcp"), data, 0o600)
	if _, err := s.Load("https://b.example/mcp"); !errors.Is(err, ErrNotLoggedIn) {
		t.Errorf("a copied file for another URL: %v, want ErrNotLoggedIn", err)
	}
	// Forget keeps the registration; --all removes it.
	if err := s.Forget(c.ServerURL, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(c.ServerURL); got == nil || got.Token != nil || got.ClientID != "id" {
		t.Errorf("after Forget: %+v", got)
	}
	s.Forget(c.ServerURL, true)
	if _, err := s.Load(c.ServerURL); !errors.Is(err, ErrNotLoggedIn) {
		t.Errorf("after Forget all: %v", err)
	}
}

// tokenServer answers refresh grants: a new access token (and a rotated
// refresh token) for "rt-N", invalid_grant for anything else.
func tokenServer(t *testing.T, refreshes *atomic.Int32, valid func(string) bool) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if r.Form.Get("grant_type") != "refresh_token" || !valid(r.Form.Get("refresh_token")) {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		n := refreshes.Add(1)
		time.Sleep(20 * time.Millisecond) // concurrent callers pile up here if not serialized
		json.NewEncoder(w).Encode(map[string]any{"access_token": "at-" + string(rune('0'+n)), "refresh_token": "rt-" + string(rune('0'+n)), "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestSourceRefresh: an expired token is refreshed once for many callers,
// the rotated refresh token is stored; a refused refresh token means a new
// login, once, with the token gone from the store.
func TestSourceRefresh(t *testing.T) {
	var refreshes atomic.Int32
	revoked := atomic.Bool{}
	ts := tokenServer(t, &refreshes, func(rt string) bool { return !revoked.Load() && len(rt) > 3 && rt[:3] == "rt-" })
	s := &Store{Dir: t.TempDir()}
	url := "https://mcp.example/mcp"
	s.Save(&Credentials{ServerURL: url, ClientID: "id", TokenURL: ts.URL,
		Token: &oauth2.Token{AccessToken: "old", RefreshToken: "rt-0", Expiry: time.Now().Add(-time.Minute)}})
	src := s.Source(context.Background(), url)
	var wg sync.WaitGroup
	tokens := make([]string, 8)
	for i := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, err := src.Token()
			if err != nil {
				t.Error(err)
				return
			}
			tokens[i] = tok.AccessToken
		}()
	}
	wg.Wait()
	if n := refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes for 8 concurrent callers, want 1", n)
	}
	for _, tok := range tokens {
		if tok != "at-1" {
			t.Errorf("token %q, want at-1", tok)
		}
	}
	stored, _ := s.Load(url)
	if stored.Token.RefreshToken != "rt-1" || stored.Token.AccessToken != "at-1" {
		t.Errorf("stored %+v, want the rotated tokens", stored.Token)
	}
	// A fresh Source (a daemon restart) uses the stored token, no refresh.
	if tok, err := s.Source(context.Background(), url).Token(); err != nil || tok.AccessToken != "at-1" || refreshes.Load() != 1 {
		t.Errorf("after restart: %v, %v, %d refreshes", tok, err, refreshes.Load())
	}
	// The server refuses the token: refreshed once more. A second refusal
	// of the same old token (a request that was in flight) keeps the new
	// one. Then revoked.
	src.Invalidate("at-1")
	if tok, err := src.Token(); err != nil || tok.AccessToken != "at-2" {
		t.Fatalf("after Invalidate: %v, %v", tok, err)
	}
	src.Invalidate("at-1")
	if tok, err := src.Token(); err != nil || tok.AccessToken != "at-2" || refreshes.Load() != 2 {
		t.Fatalf("a late refusal of the old token: %v, %v, %d refreshes", tok, err, refreshes.Load())
	}
	revoked.Store(true)
	src.Invalidate("at-2")
	if _, err := src.Token(); !errors.Is(err, ErrLoginExpired) || err.Error() != "the login has expired (the refresh token was refused)" {
		t.Errorf("revoked refresh token: %v, want ErrLoginExpired saying the refresh token was refused", err)
	}
	if _, err := src.Token(); !errors.Is(err, ErrNotLoggedIn) {
		t.Errorf("after that: %v, want ErrNotLoggedIn (no retry loop)", err)
	}
	if n := refreshes.Load(); n != 2 {
		t.Errorf("%d successful refreshes, want 2", n)
	}
}

// A server's credentials are kept per authorization server (SEP-2352): a
// login with another one makes its credentials those in use and keeps the
// first's apart; a refresh of either replaces only its own, and never
// changes which are in use; a logout takes every token. A file written
// before issuers were recorded still loads, and gives way to the first
// login that names its issuer.
func TestStoreIssuers(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	url := "https://mcp.example/mcp"
	legacy := `{"serverUrl":"` + url + `","clientId":"old","tokenUrl":"https://as0/token","token":{"access_token":"at-0"},"registered":true}`
	if err := os.WriteFile(s.path(url), []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := s.LoadIssuer(url, ""); err != nil || c.ClientID != "old" || c.Token.AccessToken != "at-0" {
		t.Fatalf("a file of the old shape: %+v, %v", c, err)
	}
	a := &Credentials{ServerURL: url, Issuer: "https://as1", ClientID: "a", TokenURL: "https://as1/token", Token: &oauth2.Token{AccessToken: "at-a"}}
	b := &Credentials{ServerURL: url, Issuer: "https://as2/", ClientID: "b", TokenURL: "https://as2/token", Token: &oauth2.Token{AccessToken: "at-b"}}
	if err := s.Save(a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadIssuer(url, ""); !errors.Is(err, ErrNotLoggedIn) {
		t.Errorf("the credentials of an unknown issuer outlived a login that names its own: %v", err)
	}
	if err := s.Save(b); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Load(url); err != nil || c.ClientID != "b" {
		t.Fatalf("in use after the second login: %+v, %v", c, err)
	}
	if c, err := s.LoadIssuer(url, "https://as1/"); err != nil || c.ClientID != "a" || c.Token.AccessToken != "at-a" {
		t.Errorf("the first authorization server's: %+v, %v", c, err)
	}
	if c, err := s.LoadIssuer(url, "https://as2"); err != nil || c.ClientID != "b" {
		t.Errorf("the second's: %+v, %v", c, err)
	}
	if _, err := s.LoadIssuer(url, "https://as3"); !errors.Is(err, ErrNotLoggedIn) {
		t.Errorf("a third: %v, want ErrNotLoggedIn", err)
	}

	// A daemon that refreshed the first one's token while the login moved
	// the server to the second stores it with the first.
	a2 := *a
	a2.Token = &oauth2.Token{AccessToken: "at-a2"}
	if err := s.update(&a2); err != nil {
		t.Fatal(err)
	}
	if c, _ := s.Load(url); c.ClientID != "b" || c.Token.AccessToken != "at-b" {
		t.Errorf("a refresh of the first changed those in use: %+v", c)
	}
	if c, _ := s.LoadIssuer(url, "https://as1"); c.Token.AccessToken != "at-a2" {
		t.Errorf("the first's token after its refresh: %v", c.Token)
	}

	// Back to the first: one record each still.
	a3 := *a
	a3.Token = &oauth2.Token{AccessToken: "at-a3"}
	if err := s.Save(&a3); err != nil {
		t.Fatal(err)
	}
	r, err := s.load(url)
	if err != nil || r.ClientID != "a" || len(r.Others) != 1 || r.Others[0].ClientID != "b" {
		t.Fatalf("after a return to the first: %+v, %v", r, err)
	}

	if err := s.Forget(url, false); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.path(url))
	for _, tok := range []string{"at-a3", "at-b"} {
		if strings.Contains(string(data), tok) {
			t.Errorf("the file keeps token %s after a logout:\n%s", tok, data)
		}
	}
	if c, _ := s.LoadIssuer(url, "https://as2"); c == nil || c.ClientID != "b" {
		t.Errorf("a logout forgot the second's client: %+v", c)
	}
}

// TestSourceExpiredWithoutRefreshToken: an expired access token the
// server gave no refresh token for needs a new login, and the error says
// why, not that a refresh token was refused.
func TestSourceExpiredWithoutRefreshToken(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	url := "https://mcp.example/mcp"
	s.Save(&Credentials{ServerURL: url, ClientID: "id", TokenURL: "http://127.0.0.1:1/token",
		Token: &oauth2.Token{AccessToken: "old", Expiry: time.Now().Add(-time.Minute)}})
	_, err := s.Source(context.Background(), url).Token()
	if want := "the login has expired (the access token expired, and the server gave no refresh token)"; !errors.Is(err, ErrLoginExpired) || err == nil || err.Error() != want {
		t.Errorf("Token() = %v, want ErrLoginExpired: %q", err, want)
	}
}
