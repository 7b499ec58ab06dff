package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// Each user's own OAuth login (team mode, issue 43). A server with
// "auth": "oauth" and "isolation": "user" runs an upstream per user
// (privateKey), and each is reached with that user's own login, looked up
// by user and server URL (the login records its authorization server's
// issuer, and is used there only): never the daemon's own login, never
// another user's. A user logs in with `mcpgw login SERVER` on their own
// machine, against the team daemon: the CLI asks the daemon what the
// login needs (GET /-/logins/{server}), runs the browser flow there, and
// hands the credentials over (PUT /-/logins/{server}); `mcpgw logout`
// forgets them (DELETE). The user is always the one the request's bearer
// token names, never one a body or query names, so a user writes and
// deletes their own logins only.
//
// The logins are kept where Options.UserLogins says (the team store,
// sealed), else in this process's memory.

// userLogins are the users' login stores, one per user, made on first use.
type userLogins struct {
	mu     sync.Mutex
	stores map[string]*oauth.Store
}

// usersOwnLogin reports whether srv is reached with each user's own
// login: in team mode, a server with "auth": "oauth" and "isolation":
// "user".
func (s *Hub) usersOwnLogin(srv *registry.Server) bool {
	cfg := s.base.Load()
	return cfg != nil && cfg.Team != nil && srv.UsersOwnLogin()
}

// perUserCredentials reports whether srv is reached with each user's own
// credentials (token exchange, or their own login): only a user's
// request can connect it, and the shared upstream never does.
func (s *Hub) perUserCredentials(srv *registry.Server) bool {
	return srv.TokenExchange != nil || s.usersOwnLogin(srv)
}

// CredentialKey is team.credentialKey as configured now: what seals users'
// logins in the team store; nil without one.
func (s *Hub) CredentialKey() []byte {
	if cfg := s.base.Load(); cfg != nil && cfg.Team != nil {
		return cfg.Team.CredentialKey
	}
	return nil
}

// loginsOf returns user's login store.
func (s *Hub) loginsOf(user string) *oauth.Store {
	s.users.mu.Lock()
	defer s.users.mu.Unlock()
	if st := s.users.stores[user]; st != nil {
		return st
	}
	var b oauth.Backend = &oauth.Memory{}
	if s.opts.UserLogins != nil {
		b = s.opts.UserLogins(user)
	}
	st := &oauth.Store{Backend: b}
	if s.users.stores == nil {
		s.users.stores = map[string]*oauth.Store{}
	}
	s.users.stores[user] = st
	return st
}

// nobody is the login store of an upstream no user's request made (the
// shared one, which a server reached with users' own logins never uses):
// it has no login, and keeps none.
var nobody = &oauth.Store{Backend: nobodyBackend{}}

type nobodyBackend struct{}

func (nobodyBackend) Read(string) ([]byte, error) { return nil, os.ErrNotExist }
func (nobodyBackend) Write(string, []byte) error  { return errNoUser }
func (nobodyBackend) Remove(string) error         { return nil }

// userLoginStore implements upstream.Options.UserLogins: for a server
// reached with users' own logins, the store of the user the upstream's
// key names (userUpstreamKey); nil for other servers, which use the
// daemon's own login.
func (s *Hub) userLoginStore(srv *registry.Server, key string) *oauth.Store {
	if !s.usersOwnLogin(srv) {
		return nil
	}
	user, ok := strings.CutPrefix(key, userUpstreamKey(""))
	if !ok || user == "" {
		return nobody
	}
	return s.loginsOf(user)
}

// registerLogins adds the endpoints of users' own logins to mux, each
// through protect (the control API's protection: in team mode, the
// user's bearer token).
func (s *Hub) registerLogins(mux *http.ServeMux, protect func(http.HandlerFunc) http.Handler) {
	mux.Handle("GET /-/logins/{server}", protect(s.serveLoginServer))
	mux.Handle("PUT /-/logins/{server}", protect(s.serveSaveLogin))
	mux.Handle("DELETE /-/logins/{server}", protect(s.serveForgetLogin))
}

// maxLoginBytes bounds a login handed to the daemon: a login's
// credentials are a few kilobytes.
const maxLoginBytes = 64 << 10

// loginTarget is the server of a request to /-/logins/{server}, and the
// user whose login it is. Without a user (not team mode) the answer is
// 404, as from a daemon without these endpoints: `mcpgw login` then logs
// in as on a personal daemon. In team mode every refusal is 409.
func (s *Hub) loginTarget(w http.ResponseWriter, r *http.Request) (*registry.Server, string, bool) {
	user := userOf(r.Context())
	if user == "" {
		http.Error(w, "this daemon is not in team mode: no user logs in to it", http.StatusNotFound)
		return nil, "", false
	}
	name := r.PathValue("server")
	sv, ok := s.viewOf(r.Context()).Server(name)
	switch {
	case !ok:
		http.Error(w, fmt.Sprintf("no server %q", name), http.StatusConflict)
	case !s.usersOwnLogin(sv.Server):
		http.Error(w, fmt.Sprintf("server %q is not logged in to by each user: that needs \"auth\": \"oauth\" and \"isolation\": \"user\"", name), http.StatusConflict)
	case sv.Server.OAuth != nil && sv.Server.OAuth.GrantType == registry.GrantClientCredentials:
		http.Error(w, fmt.Sprintf("server %q uses a machine account (client_credentials): no user logs in to it", name), http.StatusConflict)
	default:
		return sv.Server, user, true
	}
	return nil, "", false
}

// serveLoginServer is GET /-/logins/{server}: what the user's CLI needs
// to log in to server (its URL, and how mcpgw identifies itself to its
// authorization server), as JSON.
func (s *Hub) serveLoginServer(w http.ResponseWriter, r *http.Request) {
	srv, _, ok := s.loginTarget(w, r)
	if !ok {
		return
	}
	c := upstream.OAuthClient(srv)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(api.LoginServer{
		Server: srv.Name, URL: srv.URL,
		ClientID: c.ClientID, ClientSecret: c.ClientSecret, ClientMetadataURL: c.ClientMetadataURL,
		Scope: c.Scope, RedirectURI: c.RedirectURI, AuthorizationParams: c.AuthorizationParams,
		AllowPrivateNetwork: c.AllowPrivateNetwork,
	})
}

// serveSaveLogin is PUT /-/logins/{server}: the credentials of the
// user's login to server (oauth.Credentials as JSON), kept for that user
// only. Their next call uses them.
func (s *Hub) serveSaveLogin(w http.ResponseWriter, r *http.Request) {
	srv, user, ok := s.loginTarget(w, r)
	if !ok {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxLoginBytes+1))
	if err != nil {
		http.Error(w, "reading the login: "+err.Error(), http.StatusBadRequest)
		return
	}
	var c oauth.Credentials
	switch err := json.Unmarshal(body, &c); {
	case len(body) > maxLoginBytes:
		http.Error(w, "the login is too big", http.StatusRequestEntityTooLarge)
		return
	case err != nil:
		http.Error(w, "the login is not JSON credentials: "+err.Error(), http.StatusBadRequest)
		return
	case c.ServerURL != srv.URL:
		http.Error(w, fmt.Sprintf("the login is for %q, not for server %q's URL", c.ServerURL, srv.Name), http.StatusBadRequest)
		return
	case c.Token == nil || c.Token.AccessToken == "" || c.TokenURL == "":
		http.Error(w, "the login has no access token or token endpoint", http.StatusBadRequest)
		return
	}
	c.Grant = "" // a user's login is the authorization code flow's
	if err := s.loginsOf(user).Save(&c); err != nil {
		s.log.Warn("keeping a user's login", "server", srv.Name, "user", user, "err", err)
		http.Error(w, "keeping the login: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	s.pool.LoginChanged(srv, userUpstreamKey(user))
	s.log.Info("a user logged in to a server", "server", srv.Name, "user", user)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "kept %s's login to %s\n", user, srv.Name)
}

// serveForgetLogin is DELETE /-/logins/{server}: the user's login to
// server forgotten. Their upstream, if connected, is reconnected, so that
// it stops using it.
func (s *Hub) serveForgetLogin(w http.ResponseWriter, r *http.Request) {
	srv, user, ok := s.loginTarget(w, r)
	if !ok {
		return
	}
	if err := s.loginsOf(user).Forget(srv.URL, true); err != nil {
		http.Error(w, "forgetting the login: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	s.pool.LoginChanged(srv, userUpstreamKey(user))
	if u := s.pool.Private(srv, userUpstreamKey(user)); u != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		_, _ = u.Reconnect(ctx) // it now needs a login, which it says
		cancel()
	}
	s.log.Info("a user logged out of a server", "server", srv.Name, "user", user)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "forgot %s's login to %s\n", user, srv.Name)
}

// exchangeRefused implements upstream.Options.ExchangeRefused: the token
// exchanged for the user key names, refused by srv's upstream, is
// forgotten, so that the next request exchanges anew.
func (s *Hub) exchangeRefused(srv *registry.Server, key string) {
	user, ok := strings.CutPrefix(key, userUpstreamKey(""))
	if !ok || user == "" || srv.TokenExchange == nil {
		return
	}
	s.exchanger.Forget(user, exchangeOf(srv.TokenExchange))
	s.log.Info("the upstream refused an exchanged token; the next request exchanges anew", "server", srv.Name, "user", user)
}
