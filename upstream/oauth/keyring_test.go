package oauth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"
	"golang.org/x/oauth2"
)

// With Keyring set, credentials go to the OS keyring (here its in-memory
// stand-in) and never to a file; a keyring that cannot be reached is an
// error naming the setting, and still nothing is written to disk.
func TestStoreKeyring(t *testing.T) {
	keyring.MockInit()
	dir := filepath.Join(t.TempDir(), "oauth")
	s := &Store{Dir: dir, Keyring: true}
	url := "https://k.example/mcp"
	if _, err := s.Load(url); !errors.Is(err, ErrNotLoggedIn) {
		t.Fatalf("empty keyring: %v", err)
	}
	c := &Credentials{ServerURL: url, ClientID: "id", Token: &oauth2.Token{AccessToken: "secret-at", RefreshToken: "secret-rt"}}
	if err := s.Save(c); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the keyring store created %s: %v", dir, err)
	}
	raw, err := keyring.Get(keyringService, s.key(url))
	if err != nil || !strings.Contains(raw, "secret-at") {
		t.Fatalf("keyring item: %q, %v", raw, err)
	}
	got, err := s.Load(url)
	if err != nil || got.Token.AccessToken != "secret-at" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	tok, err := s.Source(context.Background(), url).Token()
	if err != nil || tok.AccessToken != "secret-at" {
		t.Errorf("Source.Token = %v, %v", tok, err)
	}
	if err := s.Forget(url, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(url); !errors.Is(err, ErrNotLoggedIn) {
		t.Errorf("after Forget all: %v", err)
	}

	keyring.MockInitWithError(errors.New("no D-Bus session bus"))
	err = s.Save(c)
	if err == nil || !strings.Contains(err.Error(), "oauthCredentialStore") || !strings.Contains(err.Error(), "no D-Bus session bus") {
		t.Errorf("Save with no keyring: %v", err)
	}
	if _, err := s.Load(url); err == nil || errors.Is(err, ErrNotLoggedIn) {
		t.Errorf("Load with no keyring: %v, want the keyring's error", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("with no keyring, credentials went to %s", dir)
	}
}
