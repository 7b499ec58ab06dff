package identity_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/gateway/identity/testissuer"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newVerifier(t *testing.T, iss *testissuer.Issuer, cfg identity.Config) (*identity.Verifier, *clock) {
	t.Helper()
	clk := &clock{t: time.Now()}
	if cfg.Issuer == "" {
		cfg.Issuer = iss.URL
	}
	if cfg.Audience == "" {
		cfg.Audience = "mcpgw"
	}
	v, err := identity.NewVerifier(cfg, &identity.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return v, clk
}

func TestVerify(t *testing.T) {
	iss := testissuer.New()
	defer iss.Close()
	v, _ := newVerifier(t, iss, identity.Config{UserClaim: "email", GroupsClaim: "groups"})
	claims := func(mod func(map[string]any)) map[string]any {
		c := iss.Claims("u-1", "mcpgw")
		c["email"] = "alice@example.com"
		c["groups"] = []string{"eng", "ops"}
		if mod != nil {
			mod(c)
		}
		return c
	}
	unpublished := iss.NewKey(jose.RS256)
	unpublished.ID = iss.SigningKey().ID // the published key's ID, another key
	now := time.Now()
	for _, tc := range []struct {
		name  string
		token string
		want  *identity.User
		err   string // in the error, which wraps ErrToken
	}{
		{"good", testissuer.Sign(iss.SigningKey(), claims(nil)), &identity.User{Name: "alice@example.com", Groups: []string{"eng", "ops"}}, ""},
		{"one group as a string", testissuer.Sign(iss.SigningKey(), claims(func(c map[string]any) { c["groups"] = "eng" })),
			&identity.User{Name: "alice@example.com", Groups: []string{"eng"}}, ""},
		{"audience among several", testissuer.Sign(iss.SigningKey(), claims(func(c map[string]any) { c["aud"] = []string{"other", "mcpgw"} })),
			&identity.User{Name: "alice@example.com", Groups: []string{"eng", "ops"}}, ""},
		{"expired within the leeway", testissuer.Sign(iss.SigningKey(), claims(func(c map[string]any) { c["exp"] = now.Add(-10 * time.Second).Unix() })),
			&identity.User{Name: "alice@example.com", Groups: []string{"eng", "ops"}}, ""},
		{"wrong audience", testissuer.Sign(iss.SigningKey(), claims(func(c map[string]any) { c["aud"] = "other" })), nil, `expected audience "mcpgw"`},
		{"wrong issuer", testissuer.Sign(iss.SigningKey(), claims(func(c map[string]any) { c["iss"] = "https://evil.example.com" })), nil, "issued by a different provider"},
		{"bad signature", testissuer.Sign(unpublished, claims(nil)), nil, "bad signature"},
		{"expired", testissuer.Sign(iss.SigningKey(), claims(func(c map[string]any) { c["exp"] = now.Add(-2 * time.Minute).Unix() })), nil, "expired at"},
		{"no exp", testissuer.Sign(iss.SigningKey(), claims(func(c map[string]any) { delete(c, "exp") })), nil, "no exp claim"},
		{"not yet valid", testissuer.Sign(iss.SigningKey(), claims(func(c map[string]any) { c["nbf"] = now.Add(2 * time.Minute).Unix() })), nil, "not valid before"},
		{"alg none", testissuer.Unsigned(claims(nil)), nil, "unexpected signature algorithm"},
		{"no user claim", testissuer.Sign(iss.SigningKey(), claims(func(c map[string]any) { delete(c, "email") })), nil, `no "email" claim`},
		{"not a JWT", "not-a-token", nil, "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := v.Verify(context.Background(), tc.token)
			if tc.want != nil {
				if err != nil {
					t.Fatal(err)
				}
				if u.Token != tc.token || u.Expiry.IsZero() {
					t.Errorf("the user does not carry the token that named them, and its expiry (%v)", u.Expiry)
				}
				if u.Name != tc.want.Name || !reflect.DeepEqual(u.Groups, tc.want.Groups) {
					t.Errorf("user = %q %q, want %q %q", u.Name, u.Groups, tc.want.Name, tc.want.Groups)
				}
				return
			}
			if !errors.Is(err, identity.ErrToken) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v; want ErrToken with %q", err, tc.err)
			}
			if u != nil {
				t.Errorf("user %+v with an error", u)
			}
		})
	}
	if n := iss.KeyFetches.Load(); n != 1 {
		t.Errorf("the keys were fetched %d times, want once", n)
	}
}

// TestVerifyRotatedKeys: a token signed with a key the verifier has not
// seen makes it fetch the keys again, at most once per interval however
// many such tokens come.
func TestVerifyRotatedKeys(t *testing.T) {
	iss := testissuer.New()
	defer iss.Close()
	v, clk := newVerifier(t, iss, identity.Config{})
	if u, err := v.Verify(context.Background(), iss.Token("alice", "mcpgw")); err != nil || u.Name != "alice" {
		t.Fatalf("first token: %+v, %v", u, err)
	}
	iss.Rotate(jose.ES256)
	clk.Add(identity.DefaultRefreshInterval / 2)
	// Within the interval the new key is not fetched, and no made-up key
	// ID makes the verifier ask.
	for i := range 5 {
		fake := iss.NewKey(jose.RS256)
		fake.ID = fmt.Sprintf("made-up-%d", i)
		if _, err := v.Verify(context.Background(), testissuer.Sign(fake, iss.Claims("alice", "mcpgw"))); !errors.Is(err, identity.ErrToken) {
			t.Fatalf("made-up key ID: %v", err)
		}
	}
	if _, err := v.Verify(context.Background(), iss.Token("alice", "mcpgw")); !errors.Is(err, identity.ErrToken) {
		t.Fatalf("rotated key within the interval: %v, want refused", err)
	}
	if n := iss.KeyFetches.Load(); n != 1 {
		t.Fatalf("%d key fetches within the interval, want 1", n)
	}
	clk.Add(identity.DefaultRefreshInterval)
	u, err := v.Verify(context.Background(), iss.Token("bob", "mcpgw")) // ES256 now
	if err != nil || u.Name != "bob" {
		t.Fatalf("rotated key after the interval: %+v, %v", u, err)
	}
	if _, err := v.Verify(context.Background(), iss.Token("carol", "mcpgw")); err != nil {
		t.Fatalf("the rotated key again: %v", err)
	}
	if n := iss.KeyFetches.Load(); n != 2 {
		t.Errorf("%d key fetches, want 2", n)
	}
}

// TestVerifyIssuerDown: an issuer that does not answer is ErrIssuer (not
// the token's fault), asked again only after the interval.
func TestVerifyIssuerDown(t *testing.T) {
	var asked int
	var mu sync.Mutex
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked++
		mu.Unlock()
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	iss := testissuer.New()
	defer iss.Close()
	v, clk := newVerifier(t, iss, identity.Config{Issuer: down.URL})
	for range 3 {
		if _, err := v.Verify(context.Background(), iss.Token("alice", "mcpgw")); !errors.Is(err, identity.ErrIssuer) {
			t.Fatalf("error %v, want ErrIssuer", err)
		}
	}
	clk.Add(identity.DefaultRefreshInterval + time.Second)
	_, _ = v.Verify(context.Background(), iss.Token("alice", "mcpgw"))
	mu.Lock()
	defer mu.Unlock()
	if asked != 2 {
		t.Errorf("the issuer was asked %d times, want 2 (once, then once after the interval)", asked)
	}
}

func TestNewVerifierRefusesPlainHTTP(t *testing.T) {
	for _, issuer := range []string{"http://login.example.com", "ftp://127.0.0.1", "login.example.com"} {
		if _, err := identity.NewVerifier(identity.Config{Issuer: issuer, Audience: "a"}, nil); err == nil {
			t.Errorf("%s accepted", issuer)
		}
	}
	for _, issuer := range []string{"https://login.example.com", "http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:2"} {
		if _, err := identity.NewVerifier(identity.Config{Issuer: issuer, Audience: "a"}, nil); err != nil {
			t.Errorf("%s: %v", issuer, err)
		}
	}
}

// TestAuthority: the configuration in force decides, and a new issuer
// takes effect for the next request.
func TestAuthority(t *testing.T) {
	one, two := testissuer.New(), testissuer.New()
	defer one.Close()
	defer two.Close()
	var mu sync.Mutex
	var cfg *identity.Config
	set := func(c *identity.Config) { mu.Lock(); cfg = c; mu.Unlock() }
	a := identity.NewAuthority(func() *identity.Config { mu.Lock(); defer mu.Unlock(); return cfg }, nil)
	if _, err := a.Authenticate(context.Background(), one.Token("alice", "mcpgw")); !errors.Is(err, identity.ErrOff) || a.Issuer() != "" {
		t.Fatalf("off: %v, issuer %q", err, a.Issuer())
	}
	set(&identity.Config{Issuer: one.URL, Audience: "mcpgw"})
	if u, err := a.Authenticate(context.Background(), one.Token("alice", "mcpgw")); err != nil || u.Name != "alice" {
		t.Fatalf("issuer one: %+v, %v", u, err)
	}
	set(&identity.Config{Issuer: two.URL, Audience: "mcpgw"})
	if a.Issuer() != two.URL {
		t.Errorf("Issuer = %q, want %q", a.Issuer(), two.URL)
	}
	if _, err := a.Authenticate(context.Background(), one.Token("alice", "mcpgw")); !errors.Is(err, identity.ErrToken) {
		t.Errorf("the old issuer's token after the change: %v, want refused", err)
	}
	if u, err := a.Authenticate(context.Background(), two.Token("bob", "mcpgw")); err != nil || u.Name != "bob" {
		t.Errorf("issuer two: %+v, %v", u, err)
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if u := identity.FromContext(ctx); u != nil || identity.NameOf(u) != "" {
		t.Errorf("empty context: %+v", u)
	}
	ctx = identity.NewContext(ctx, &identity.User{Name: "alice", Groups: []string{"eng"}})
	u := identity.FromContext(ctx)
	if identity.NameOf(u) != "alice" || !u.InGroup("eng") || u.InGroup("ops") {
		t.Errorf("context user: %+v", u)
	}
}
