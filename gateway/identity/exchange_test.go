package identity_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/gateway/identity/testissuer"
)

// claimsOf returns the claims of a token the test issuer signed.
func claimsOf(t *testing.T, iss *testissuer.Issuer, raw string) map[string]any {
	t.Helper()
	v, _ := newVerifier(t, iss, identity.Config{Audience: "tickets"})
	u, err := v.Verify(context.Background(), raw)
	if err != nil {
		t.Fatalf("the exchanged token does not verify for audience tickets: %v", err)
	}
	return map[string]any{"sub": u.Name}
}

func newExchanger(t *testing.T, iss *testissuer.Issuer) (*identity.Exchanger, *clock) {
	t.Helper()
	clk := &clock{t: time.Now()}
	x := identity.NewExchanger(&identity.ExchangerOptions{
		Now:      clk.Now,
		Endpoint: func(context.Context) (string, error) { return iss.URL + "/token", nil },
	})
	return x, clk
}

var tickets = identity.Exchange{ClientID: "mcpgw", ClientSecret: "s3cret", Audience: "tickets", Scope: "read"}

func TestExchangeToken(t *testing.T) {
	iss := testissuer.New()
	defer iss.Close()
	iss.AllowClient("mcpgw", "s3cret")
	x, _ := newExchanger(t, iss)
	ctx := context.Background()

	alice, err := x.Token(ctx, "alice", iss.Token("alice", "mcpgw"), tickets)
	if err != nil {
		t.Fatal(err)
	}
	if got := claimsOf(t, iss, alice)["sub"]; got != "alice" {
		t.Errorf("alice's exchanged token names %v", got)
	}
	bob, err := x.Token(ctx, "bob", iss.Token("bob", "mcpgw"), tickets)
	if err != nil {
		t.Fatal(err)
	}
	if bob == alice {
		t.Fatal("bob was given alice's token")
	}
	if got := claimsOf(t, iss, bob)["sub"]; got != "bob" {
		t.Errorf("bob's exchanged token names %v", got)
	}

	ex := iss.Exchanges()
	want := testissuer.Exchange{ClientID: "mcpgw", Subject: "alice", SubjectTokenType: identity.TokenTypeAccess, Audience: "tickets", Scope: "read"}
	if len(ex) != 2 || ex[0] != want || ex[1].Subject != "bob" {
		t.Fatalf("exchanges = %+v, want alice's (%+v) then bob's", ex, want)
	}

	// Kept: asking again asks the issuer nothing, for each user.
	for _, user := range []string{"alice", "bob", "alice"} {
		tok, err := x.Token(ctx, user, iss.Token(user, "mcpgw"), tickets)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"alice": alice, "bob": bob}[user]; tok != want {
			t.Errorf("%s's kept token is not the one exchanged for them", user)
		}
	}
	if n := len(iss.Exchanges()); n != 2 {
		t.Errorf("%d exchanges after asking again, want still 2", n)
	}

	// Another audience is another token.
	other := tickets
	other.Audience = "wiki"
	if _, err := x.Token(ctx, "alice", iss.Token("alice", "mcpgw"), other); err != nil {
		t.Fatal(err)
	}
	if ex := iss.Exchanges(); len(ex) != 3 || ex[2].Audience != "wiki" {
		t.Errorf("exchanges = %+v, want a third for wiki", ex)
	}
}

func TestExchangeKeptUntilShortlyBeforeExpiry(t *testing.T) {
	iss := testissuer.New()
	defer iss.Close()
	iss.AllowClient("mcpgw", "s3cret")
	iss.SetExchangedLifetime(10 * time.Minute)
	x, clk := newExchanger(t, iss)
	ctx := context.Background()
	ask := func() string {
		t.Helper()
		tok, err := x.Token(ctx, "alice", iss.Token("alice", "mcpgw"), tickets)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	first := ask()
	clk.Add(8*time.Minute + 59*time.Second) // kept until 9 minutes: a minute early
	if ask() != first || len(iss.Exchanges()) != 1 {
		t.Fatalf("%d exchanges before the token's time is up, want 1", len(iss.Exchanges()))
	}
	clk.Add(time.Second)
	ask()
	if n := len(iss.Exchanges()); n != 2 {
		t.Fatalf("%d exchanges a minute before expiry, want 2", n)
	}

	// A token the upstream refused is forgotten.
	x.Forget("alice", tickets)
	ask()
	if n := len(iss.Exchanges()); n != 3 {
		t.Fatalf("%d exchanges after Forget, want 3", n)
	}
}

func TestExchangeRefused(t *testing.T) {
	iss := testissuer.New()
	defer iss.Close()
	iss.AllowClient("mcpgw", "s3cret")
	iss.RefuseExchange("mallory")
	x, _ := newExchanger(t, iss)
	ctx := context.Background()

	expired := iss.Claims("alice", "mcpgw")
	expired["exp"] = time.Now().Add(-time.Minute).Unix()
	other := testissuer.New()
	defer other.Close()
	wrongSecret := tickets
	wrongSecret.ClientSecret = "guess"

	for _, tc := range []struct {
		name, user, subject string
		req                 identity.Exchange
		want                string
	}{
		{"refused subject", "mallory", iss.Token("mallory", "mcpgw"), tickets,
			"the issuer refused to exchange mallory's token: invalid_grant (exchange not allowed for mallory)"},
		{"expired subject", "alice", testissuer.Sign(iss.SigningKey(), expired), tickets,
			"the issuer refused to exchange alice's token: invalid_grant (subject token: expired)"},
		{"another issuer's subject", "alice", other.Token("alice", "mcpgw"), tickets,
			"the issuer refused to exchange alice's token: invalid_grant (subject token: not signed by this issuer)"},
		{"wrong client secret", "alice", iss.Token("alice", "mcpgw"), wrongSecret,
			"the issuer refused to exchange alice's token: invalid_client (unknown client or wrong secret)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := x.Token(ctx, tc.user, tc.subject, tc.req)
			var ee *identity.ExchangeError
			if !errors.As(err, &ee) || err.Error() != tc.want {
				t.Fatalf("error = %v, want an ExchangeError: %s", err, tc.want)
			}
		})
	}

	// A refusal is not kept: once allowed, the next ask gets a token, and
	// another user's asks were never affected.
	if _, err := x.Token(ctx, "alice", iss.Token("alice", "mcpgw"), tickets); err != nil {
		t.Fatalf("alice after others' refusals: %v", err)
	}
	n := len(iss.Exchanges())
	if _, err := x.Token(ctx, "mallory", iss.Token("mallory", "mcpgw"), tickets); err == nil {
		t.Fatal("mallory's second exchange succeeded")
	}
	if got := len(iss.Exchanges()); got != n+1 {
		t.Errorf("mallory's refusal was kept: %d exchanges, want %d", got, n+1)
	}
}

// TestExchangeOneAtATime: concurrent asks for one user make one exchange.
func TestExchangeOneAtATime(t *testing.T) {
	iss := testissuer.New()
	defer iss.Close()
	iss.AllowClient("mcpgw", "")
	x, _ := newExchanger(t, iss)
	public := identity.Exchange{ClientID: "mcpgw", Resource: "https://tickets.example.com/"}
	var wg sync.WaitGroup
	toks := make([]string, 8)
	for i := range toks {
		wg.Go(func() {
			tok, err := x.Token(context.Background(), "alice", iss.Token("alice", "mcpgw"), public)
			if err != nil {
				t.Error(err)
			}
			toks[i] = tok
		})
	}
	wg.Wait()
	for _, tok := range toks[1:] {
		if tok != toks[0] {
			t.Fatal("concurrent asks got different tokens")
		}
	}
	// Each ask either made the one exchange or found its token kept; a
	// second exchange can only follow the first's answer.
	ex := iss.Exchanges()
	if len(ex) == 0 || ex[0].ClientID != "mcpgw" || ex[0].Resource != "https://tickets.example.com/" || ex[0].Error != "" {
		t.Fatalf("exchanges = %+v", ex)
	}
	if len(ex) != 1 {
		t.Errorf("%d exchanges for 8 concurrent asks, want 1", len(ex))
	}
}

// TestAuthoritySubject: the token to exchange is the user's that expires
// last, while it has not expired; the issuer's token endpoint comes from
// its discovery document.
func TestAuthoritySubject(t *testing.T) {
	iss := testissuer.New()
	defer iss.Close()
	clk := &clock{t: time.Now()}
	a := identity.NewAuthority(func() *identity.Config {
		return &identity.Config{Issuer: iss.URL, Audience: "mcpgw"}
	}, &identity.Options{Now: clk.Now})
	ctx := context.Background()
	token := func(user string, life time.Duration) string {
		c := iss.Claims(user, "mcpgw")
		c["exp"] = clk.Now().Add(life).Unix()
		return testissuer.Sign(iss.SigningKey(), c)
	}
	long, short := token("alice", time.Hour), token("alice", 10*time.Minute)
	for _, raw := range []string{long, short} {
		if _, err := a.Authenticate(ctx, raw); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok := a.Subject("alice"); !ok || got != long {
		t.Error("alice's subject is not her token that expires last")
	}
	if _, ok := a.Subject("bob"); ok {
		t.Error("bob has a subject without a request")
	}
	if _, err := a.Authenticate(ctx, testissuer.Unsigned(iss.Claims("bob", "mcpgw"))); err == nil {
		t.Fatal("an unsigned token was accepted")
	}
	if _, ok := a.Subject("bob"); ok {
		t.Error("a refused token became bob's subject")
	}
	clk.Add(time.Hour + time.Second)
	if _, ok := a.Subject("alice"); ok {
		t.Error("alice's expired token is still her subject")
	}
	ep, err := a.TokenEndpoint(ctx)
	if err != nil || ep != iss.URL+"/token" {
		t.Errorf("TokenEndpoint = %q, %v; want %s/token", ep, err, iss.URL)
	}
}
