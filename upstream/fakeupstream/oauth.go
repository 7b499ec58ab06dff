package fakeupstream

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OAuthServer is an MCP server behind OAuth, with two authorization
// servers of its own, for tests: protected-resource and
// authorization-server metadata, dynamic client registration, an
// authorization endpoint that consents at once (it redirects with a code),
// PKCE (S256) checked at the token endpoint, refresh tokens that rotate,
// and switches to expire access tokens, revoke refresh tokens, and move
// the resource to its second authorization server (MigrateAuthorizationServer).
//
// The first authorization server's issuer is URL itself, the second's
// URL/as2. Each knows only the clients it registered: one registered by
// the other is refused, and counted (ForeignClients).
type OAuthServer struct {
	URL string // the base URL, set by the caller after starting Handler

	// SessionlessOnly makes the MCP endpoint speak protocol 2026-07-28
	// only, as a server written for that revision alone does: a request
	// of an older one (initialize above all) is answered 400 Bad Request
	// before its credentials are looked at, the others are served without
	// a session. Set it before Handler.
	SessionlessOnly bool

	Authorizations atomic.Int32 // codes issued (logins), at either authorization server
	Refreshes      atomic.Int32 // refresh grants answered

	mu       sync.Mutex
	codes    map[string]codeGrant
	access   map[string]accessGrant // access token → expiry, issuer
	refresh  map[string]int         // refresh token → the authorization server that issued it
	lifetime time.Duration
	current  int // the authorization server the resource names
	clients  [2]map[string]bool
	regs     [2]int
	foreign  [2]int
}

type codeGrant struct {
	challenge, redirect, client string
	as                          int
}

type accessGrant struct {
	expiry time.Time
	as     int
}

// NewOAuthServer returns a server whose access tokens last lifetime.
func NewOAuthServer(lifetime time.Duration) *OAuthServer {
	return &OAuthServer{
		codes: map[string]codeGrant{}, access: map[string]accessGrant{}, refresh: map[string]int{}, lifetime: lifetime,
		clients: [2]map[string]bool{{}, {}},
	}
}

// ExpireAccessTokens makes every access token expired.
func (s *OAuthServer) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, g := range s.access {
		s.access[t] = accessGrant{as: g.as}
	}
}

// RevokeRefreshTokens refuses every refresh token issued so far.
func (s *OAuthServer) RevokeRefreshTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
}

// MigrateAuthorizationServer makes the protected resource's metadata name
// the second authorization server instead of the first, and the MCP
// endpoint accept only the second's access tokens (SEP-2352: a resource
// that moves to a new authorization server). The first still answers, for
// the clients it registered.
func (s *OAuthServer) MigrateAuthorizationServer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = 1
}

// Issuer is the issuer of authorization server n (0 or 1).
func (s *OAuthServer) Issuer(n int) string {
	if n == 0 {
		return s.URL
	}
	return s.URL + "/as2"
}

// Registrations is how many clients authorization server n registered.
func (s *OAuthServer) Registrations(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.regs[n]
}

// ForeignClients is how many requests authorization server n was sent
// with a client ID the other one registered (at its authorization or
// token endpoint): credentials carried from one to the other.
func (s *OAuthServer) ForeignClients(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.foreign[n]
}

func token() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Handler serves the MCP endpoint at /mcp and the authorization servers.
func (s *OAuthServer) Handler() http.Handler {
	mux := http.NewServeMux()
	getServer := func(*http.Request) *mcp.Server { return NewServer(nil) }
	var mcpHandler http.Handler = mcp.NewStreamableHTTPHandler(getServer, nil)
	if s.SessionlessOnly {
		mcpHandler = SessionlessOnly(mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true}))
	}
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if s.SessionlessOnly && !isSessionless(r) {
			mcpHandler.ServeHTTP(w, r) // refused, whatever the credentials
			return
		}
		if !s.valid(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.URL+`/.well-known/oauth-protected-resource/mcp", scope="tools"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		as := s.Issuer(s.current)
		s.mu.Unlock()
		writeJSON(w, map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{as}, "scopes_supported": []string{"tools"}})
	})
	s.authorizationServer(mux, 0, "")
	s.authorizationServer(mux, 1, "/as2")
	return mux
}

// authorizationServer serves authorization server n, whose issuer is
// URL+prefix, on mux.
func (s *OAuthServer) authorizationServer(mux *http.ServeMux, n int, prefix string) {
	mux.HandleFunc("/.well-known/oauth-authorization-server"+prefix, func(w http.ResponseWriter, r *http.Request) {
		base := s.URL + prefix
		writeJSON(w, map[string]any{
			"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":            []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"scopes_supported": []string{"tools", "offline_access"},
		})
	})
	mux.HandleFunc("POST "+prefix+"/register", func(w http.ResponseWriter, r *http.Request) {
		var meta map[string]any
		json.NewDecoder(r.Body).Decode(&meta)
		id := "client-" + token()[:8]
		meta["client_id"] = id
		meta["token_endpoint_auth_method"] = "none"
		s.mu.Lock()
		s.clients[n][id] = true
		s.regs[n]++
		s.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, meta)
	})
	mux.HandleFunc("GET "+prefix+"/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		redirect, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		if s.foreignClient(n, q.Get("client_id")) {
			http.Error(w, "unknown client", http.StatusBadRequest)
			return
		}
		code := token()
		s.mu.Lock()
		s.codes[code] = codeGrant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), client: q.Get("client_id"), as: n}
		s.mu.Unlock()
		s.Authorizations.Add(1)
		rq := redirect.Query()
		rq.Set("code", code)
		rq.Set("state", q.Get("state"))
		redirect.RawQuery = rq.Encode()
		http.Redirect(w, r, redirect.String(), http.StatusFound)
	})
	mux.HandleFunc("POST "+prefix+"/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		client := r.Form.Get("client_id")
		if id, _, ok := r.BasicAuth(); ok {
			client = id
		}
		if s.foreignClient(n, client) {
			tokenError(w, "invalid_client")
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			g, ok := s.codes[r.Form.Get("code")]
			delete(s.codes, r.Form.Get("code"))
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if !ok || g.as != n || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.Form.Get("redirect_uri") != g.redirect {
				tokenError(w, "invalid_grant")
				return
			}
		case "refresh_token":
			if as, ok := s.refresh[r.Form.Get("refresh_token")]; !ok || as != n {
				tokenError(w, "invalid_grant")
				return
			}
			delete(s.refresh, r.Form.Get("refresh_token")) // rotated
			s.Refreshes.Add(1)
		default:
			tokenError(w, "unsupported_grant_type")
			return
		}
		at, rt := token(), token()
		s.access[at] = accessGrant{expiry: time.Now().Add(s.lifetime), as: n}
		s.refresh[rt] = n
		writeJSON(w, map[string]any{"access_token": at, "refresh_token": rt, "token_type": "Bearer", "expires_in": int(s.lifetime.Seconds()), "scope": "tools"})
	})
}

// foreignClient reports, and counts, a client ID that the other
// authorization server than n registered.
func (s *OAuthServer) foreignClient(n int, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == "" || !s.clients[1-n][id] || s.clients[n][id] {
		return false
	}
	s.foreign[n]++
	return true
}

// valid reports whether at is an access token of the authorization server
// the resource names now, not expired.
func (s *OAuthServer) valid(at string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.access[at]
	return ok && g.as == s.current && time.Now().Before(g.expiry)
}

// SessionlessOnly serves h to requests of protocol 2026-07-28 or later
// and answers every other (initialize above all) 400 Bad Request, as a
// server that speaks only that revision does.
func SessionlessOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isSessionless(r) {
			http.Error(w, "this server speaks protocol 2026-07-28 only", http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func tokenError(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"error": code})
}
