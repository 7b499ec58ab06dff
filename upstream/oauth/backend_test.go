package oauth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// sharedBackend is a Backend two replicas share, with a refresh lock.
type sharedBackend struct {
	Memory
	refresh sync.Mutex
	locks   atomic.Int32
}

func (b *sharedBackend) Lock(string) (func(), error) {
	b.refresh.Lock()
	b.locks.Add(1)
	return b.refresh.Unlock, nil
}

// TestBackendStore: a Store on a Backend keeps its records there, and
// nothing in files: Save, Load, Forget as with files.
func TestBackendStore(t *testing.T) {
	b := &Memory{}
	s := &Store{Dir: t.TempDir(), Backend: b}
	c := &Credentials{ServerURL: "https://a.example/mcp", Issuer: "https://as", ClientID: "id", TokenURL: "https://as/token",
		Token: &oauth2.Token{AccessToken: "secret-at", RefreshToken: "secret-rt"}}
	if _, err := s.Load(c.ServerURL); !errors.Is(err, ErrNotLoggedIn) {
		t.Fatalf("empty: %v", err)
	}
	if err := s.Save(c); err != nil {
		t.Fatal(err)
	}
	data, err := b.Read(c.ServerURL)
	if err != nil || !strings.Contains(string(data), "secret-rt") {
		t.Fatalf("the backend holds %q, %v", data, err)
	}
	if got, err := s.LoadIssuer(c.ServerURL, "https://as/"); err != nil || got.Token.AccessToken != "secret-at" {
		t.Errorf("LoadIssuer = %+v, %v", got, err)
	}
	if err := s.Forget(c.ServerURL, true); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Read(c.ServerURL); err == nil {
		t.Errorf("after Forget all, the backend still holds the record")
	}
}

// TestSourceRefreshSharedBackend: two replicas' Sources on one shared
// Backend, their token expired, asked at once: the authorization server
// rotates refresh tokens (each is good once), and only one refresh is
// made; the other replica, once it has the lock, reads and uses the new
// token, which is what the backend holds.
func TestSourceRefreshSharedBackend(t *testing.T) {
	var refreshes atomic.Int32
	ts := tokenServer(t, &refreshes, func(rt string) bool { return rt == fmt.Sprintf("rt-%d", refreshes.Load()) })
	b := &sharedBackend{}
	url := "https://a.example/mcp"
	seed := &Store{Backend: b}
	if err := seed.Save(&Credentials{ServerURL: url, ClientID: "id", TokenURL: ts.URL,
		Token: &oauth2.Token{AccessToken: "at-0", RefreshToken: "rt-0", Expiry: time.Now().Add(-time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	replicas := []*Source{(&Store{Backend: b}).Source(context.Background(), url), (&Store{Backend: b}).Source(context.Background(), url)}
	got := make([]string, len(replicas))
	errs := make([]error, len(replicas))
	var wg sync.WaitGroup
	for i, src := range replicas {
		wg.Go(func() {
			tok, err := src.Token()
			if err == nil {
				got[i] = tok.AccessToken
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i := range replicas {
		if errs[i] != nil || got[i] != "at-1" {
			t.Errorf("replica %d: %q, %v; want at-1", i, got[i], errs[i])
		}
	}
	if n := refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
	if n := b.locks.Load(); n != 2 {
		t.Errorf("the refresh lock was taken %d times, want 2 (once each)", n)
	}
	c, err := seed.Load(url)
	if err != nil || c.Token.AccessToken != "at-1" || c.Token.RefreshToken != "rt-1" {
		t.Errorf("stored after the refresh: %+v, %v", c.Token, err)
	}
}
