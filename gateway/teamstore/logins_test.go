package teamstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpgw/mcpgw/internal/redistest"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// TestSeal: a sealed login opens with its key, for its user and server
// only; a wrong key, another user, another server, a tampered byte
// anywhere or a cut value are refused with ErrSealBroken; two seals of
// the same login differ (a fresh nonce each time) and hold no byte of it.
func TestSeal(t *testing.T) {
	login := []byte(`{"serverUrl":"https://t.example/mcp","token":{"access_token":"AT-secret","refresh_token":"RT-secret"}}`)
	key := testKey(7)
	s1, err := seal(key, "alice", "https://t.example/mcp", login)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := seal(key, "alice", "https://t.example/mcp", login)
	if bytes.Equal(s1, s2) || bytes.Equal(s1[1:13], s2[1:13]) {
		t.Errorf("two seals share their nonce")
	}
	for _, secret := range []string{"AT-secret", "RT-secret", "access_token"} {
		if bytes.Contains(s1, []byte(secret)) {
			t.Errorf("the sealed value holds %q in the clear", secret)
		}
	}
	if got, err := unseal(key, "alice", "https://t.example/mcp", s1); err != nil || !bytes.Equal(got, login) {
		t.Fatalf("unseal = %q, %v", got, err)
	}
	for _, tc := range []struct {
		name, user, url string
		key             []byte
		sealed          []byte
	}{
		{"wrong key", "alice", "https://t.example/mcp", testKey(8), s1},
		{"moved to bob", "bob", "https://t.example/mcp", key, s1},
		{"moved to another server", "alice", "https://u.example/mcp", key, s1},
		{"cut", "alice", "https://t.example/mcp", key, s1[:20]},
		{"empty", "alice", "https://t.example/mcp", key, nil},
	} {
		if _, err := unseal(tc.key, tc.user, tc.url, tc.sealed); !errors.Is(err, ErrSealBroken) {
			t.Errorf("%s: %v, want ErrSealBroken", tc.name, err)
		}
	}
	for i := range s1 {
		tampered := bytes.Clone(s1)
		tampered[i] ^= 0x01
		if _, err := unseal(key, "alice", "https://t.example/mcp", tampered); !errors.Is(err, ErrSealBroken) {
			t.Fatalf("byte %d tampered: %v, want ErrSealBroken", i, err)
		}
	}
}

// TestLoginsInStore: a user's login written through one replica is read
// through another; the store's value holds no token in the clear and
// expires; a value copied to bob's key does not open for bob; without a
// key nothing is read or written; Remove forgets it.
func TestLoginsInStore(t *testing.T) {
	srv := redistest.Start(t)
	rc := raw(t, srv)
	key := testKey(1)
	keyOf := func() []byte { return key }
	a, b := open(t, srv.URL).Logins(keyOf), open(t, srv.URL).Logins(keyOf)
	const url = "https://t.example/mcp"
	login := []byte(`{"token":{"access_token":"AT-alice","refresh_token":"RT-alice"}}`)
	if _, err := a.For("alice").Read(url); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("before any login: %v, want os.ErrNotExist", err)
	}
	if err := a.For("alice").Write(url, login); err != nil {
		t.Fatal(err)
	}
	if got, err := b.For("alice").Read(url); err != nil || !bytes.Equal(got, login) {
		t.Fatalf("alice's login through the other replica: %q, %v", got, err)
	}
	if _, err := b.For("bob").Read(url); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bob's login: %v, want none", err)
	}
	ctx := context.Background()
	stored, err := rc.Get(ctx, a.Key("alice", url)).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"AT-alice", "RT-alice"} {
		if bytes.Contains(stored, []byte(secret)) {
			t.Errorf("the store holds %s in the clear", secret)
		}
	}
	if ttl := rc.TTL(ctx, a.Key("alice", url)).Val(); ttl <= 0 || ttl > LoginTTL {
		t.Errorf("TTL %v, want at most %v", ttl, LoginTTL)
	}
	if !strings.HasPrefix(a.Key("alice", url), "test:login:alice:") {
		t.Errorf("key %q", a.Key("alice", url))
	}
	// alice's value copied to bob's key: refused, never served to bob.
	rc.Set(ctx, a.Key("bob", url), stored, 0)
	if got, err := b.For("bob").Read(url); !errors.Is(err, ErrSealBroken) {
		t.Errorf("alice's value under bob's key: %q, %v; want ErrSealBroken", got, err)
	}
	// Another key (a replica configured otherwise): refused too.
	other := open(t, srv.URL).Logins(func() []byte { return testKey(2) })
	if _, err := other.For("alice").Read(url); !errors.Is(err, ErrSealBroken) {
		t.Errorf("read under another key: %v, want ErrSealBroken", err)
	}
	none := open(t, srv.URL).Logins(func() []byte { return nil })
	if _, err := none.For("alice").Read(url); !errors.Is(err, ErrNoCredentialKey) {
		t.Errorf("read without a key: %v", err)
	}
	if err := none.For("alice").Write(url, login); !errors.Is(err, ErrNoCredentialKey) {
		t.Errorf("write without a key: %v", err)
	}
	if err := b.For("alice").Remove(url); err != nil {
		t.Fatal(err)
	}
	if _, err := a.For("alice").Read(url); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Remove: %v", err)
	}
}

// TestLoginLock: a user's refresh lock is held by one replica at a time;
// another user's is apart; a release after the lock went elsewhere does
// not release the new holder's.
func TestLoginLock(t *testing.T) {
	srv := redistest.Start(t)
	keyOf := func() []byte { return testKey(1) }
	replicas := []*Logins{open(t, srv.URL).Logins(keyOf), open(t, srv.URL).Logins(keyOf)}
	const url = "https://t.example/mcp"
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			unlock, err := replicas[i%2].For("alice").Lock(url)
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			inside.Add(-1)
			unlock()
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d holders of alice's lock at once, want 1", most.Load())
	}
	unlock, err := replicas[0].For("alice").Lock(url)
	if err != nil {
		t.Fatal(err)
	}
	unlockBob, err := replicas[1].For("bob").Lock(url)
	if err != nil {
		t.Fatalf("bob's lock while alice's is held: %v", err)
	}
	unlockBob()
	// The lock expires and goes to another; the first holder's late
	// release leaves the new holder's in place.
	rc := raw(t, srv)
	ctx := context.Background()
	lk := replicas[0].lockKey("alice", url)
	rc.Del(ctx, lk)
	unlock2, err := replicas[1].For("alice").Lock(url)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if n := rc.Exists(ctx, lk).Val(); n != 1 {
		t.Errorf("a stale release removed the new holder's lock")
	}
	unlock2()
	if n := rc.Exists(ctx, lk).Val(); n != 0 {
		t.Errorf("the lock is still held after its release")
	}
}
