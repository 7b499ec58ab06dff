package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// oauthServer starts a fakeupstream.OAuthServer.
func oauthServer(t *testing.T, sessionlessOnly bool) *fakeupstream.OAuthServer {
	t.Helper()
	as := fakeupstream.NewOAuthServer(time.Hour)
	as.SessionlessOnly = sessionlessOnly
	ts := httptest.NewServer(as.Handler())
	t.Cleanup(ts.Close)
	as.URL = ts.URL
	return as
}

// login runs a login to as's MCP endpoint with a browser that consents at
// once.
func login(t *testing.T, as *fakeupstream.OAuthServer, store *oauth.Store) (*oauth.Credentials, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return oauth.Login(ctx, oauth.LoginOptions{
		ServerURL: as.URL + "/mcp",
		Store:     store,
		Browser:   oauth.FollowRedirects(http.DefaultClient, ""),
	})
}

// eras are the protocol revisions a server speaks in the tests.
var eras = []struct {
	name            string
	sessionlessOnly bool
}{
	{"2025-11-25 and 2026-07-28", false},
	{"2026-07-28 only", true},
}

// A login works whichever protocol era the server speaks: one of protocol
// 2026-07-28 alone answers initialize 400, so the login's first request
// must be the new revision's. The credentials name the issuer that
// granted them.
func TestLoginEachEra(t *testing.T) {
	for _, tc := range eras {
		t.Run(tc.name, func(t *testing.T) {
			as := oauthServer(t, tc.sessionlessOnly)
			store := &oauth.Store{Dir: t.TempDir()}
			c, err := login(t, as, store)
			if err != nil {
				t.Fatalf("login: %v", err)
			}
			if n := as.Authorizations.Load(); n != 1 {
				t.Errorf("%d authorizations, want 1", n)
			}
			if c.Issuer != as.Issuer(0) || c.Token == nil || c.Token.AccessToken == "" {
				t.Errorf("credentials: issuer %q (want %q), token %v", c.Issuer, as.Issuer(0), c.Token)
			}
			if got, err := store.Load(as.URL + "/mcp"); err != nil || got.Token.AccessToken != c.Token.AccessToken {
				t.Errorf("stored: %+v, %v", got, err)
			}
		})
	}
}

// SEP-2352: when the protected resource names a new authorization server,
// the next login registers a client there instead of presenting the one
// the old server registered, and the credentials of each are kept apart:
// the old server's client is still there for a return to it.
func TestLoginAuthorizationServerMigration(t *testing.T) {
	for _, tc := range eras {
		t.Run(tc.name, func(t *testing.T) { testMigration(t, oauthServer(t, tc.sessionlessOnly)) })
	}
}

func testMigration(t *testing.T, as *fakeupstream.OAuthServer) {
	store := &oauth.Store{Dir: t.TempDir()}
	server := as.URL + "/mcp"
	first, err := login(t, as, store)
	if err != nil {
		t.Fatalf("first login: %v", err)
	}
	// A second login to the same authorization server reuses its client.
	again, err := login(t, as, store)
	if err != nil {
		t.Fatalf("second login: %v", err)
	}
	if again.ClientID != first.ClientID || as.Registrations(0) != 1 {
		t.Errorf("the second login registered again (client %q, was %q; %d registrations)", again.ClientID, first.ClientID, as.Registrations(0))
	}

	as.MigrateAuthorizationServer()
	moved, err := login(t, as, store)
	if err != nil {
		t.Fatalf("login after the move: %v", err)
	}
	if n := as.ForeignClients(1); n != 0 {
		t.Errorf("the new authorization server was sent the old one's client %d times", n)
	}
	if n := as.Registrations(1); n != 1 {
		t.Errorf("%d registrations at the new authorization server, want 1", n)
	}
	if moved.Issuer != as.Issuer(1) || moved.ClientID == first.ClientID {
		t.Errorf("after the move: issuer %q client %q; want issuer %q and a client other than %q", moved.Issuer, moved.ClientID, as.Issuer(1), first.ClientID)
	}
	if cur, err := store.Load(server); err != nil || cur.Issuer != as.Issuer(1) || cur.Token.AccessToken != moved.Token.AccessToken {
		t.Errorf("the server's credentials after the move: %+v, %v", cur, err)
	}
	old, err := store.LoadIssuer(server, as.Issuer(0))
	if err != nil || old.ClientID != first.ClientID {
		t.Errorf("the old authorization server's credentials: %+v, %v; want client %q kept", old, err, first.ClientID)
	}

	// A third login stays with the new server's client.
	third, err := login(t, as, store)
	if err != nil {
		t.Fatalf("third login: %v", err)
	}
	if third.ClientID != moved.ClientID || as.Registrations(1) != 1 || as.ForeignClients(1) != 0 {
		t.Errorf("third login: client %q (want %q), %d registrations, %d foreign clients", third.ClientID, moved.ClientID, as.Registrations(1), as.ForeignClients(1))
	}
}
