package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	if _, err := src.Token(); !errors.Is(err, ErrLoginExpired) {
		t.Errorf("revoked refresh token: %v, want ErrLoginExpired", err)
	}
	if _, err := src.Token(); !errors.Is(err, ErrNotLoggedIn) {
		t.Errorf("after that: %v, want ErrNotLoggedIn (no retry loop)", err)
	}
	if n := refreshes.Load(); n != 2 {
		t.Errorf("%d successful refreshes, want 2", n)
	}
}
