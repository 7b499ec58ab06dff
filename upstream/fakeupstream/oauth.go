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

// OAuthServer is an MCP server behind OAuth, with its own authorization
// server, for tests: protected-resource and authorization-server metadata,
// dynamic client registration, an authorization endpoint that consents at
// once (it redirects with a code), PKCE (S256) checked at the token
// endpoint, refresh tokens that rotate, and switches to expire access
// tokens and revoke refresh tokens.
type OAuthServer struct {
	URL string // the base URL, set by the caller after starting Handler

	Authorizations atomic.Int32 // codes issued (logins)
	Refreshes      atomic.Int32 // refresh grants answered

	mu       sync.Mutex
	codes    map[string]codeGrant
	access   map[string]time.Time // access token → expiry
	refresh  map[string]bool      // refresh token → valid
	lifetime time.Duration
}

type codeGrant struct {
	challenge, redirect string
}

// NewOAuthServer returns a server whose access tokens last lifetime.
func NewOAuthServer(lifetime time.Duration) *OAuthServer {
	return &OAuthServer{codes: map[string]codeGrant{}, access: map[string]time.Time{}, refresh: map[string]bool{}, lifetime: lifetime}
}

// ExpireAccessTokens makes every access token expired.
func (s *OAuthServer) ExpireAccessTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.access {
		s.access[t] = time.Time{}
	}
}

// RevokeRefreshTokens refuses every refresh token issued so far.
func (s *OAuthServer) RevokeRefreshTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
}

func token() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Handler serves the MCP endpoint at /mcp and the authorization server.
func (s *OAuthServer) Handler() http.Handler {
	mux := http.NewServeMux()
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return NewServer(nil) }, nil)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if !s.valid(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.URL+`/.well-known/oauth-protected-resource/mcp", scope="tools"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}, "scopes_supported": []string{"tools"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": s.URL, "authorization_endpoint": s.URL + "/authorize", "token_endpoint": s.URL + "/token",
			"registration_endpoint": s.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":            []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"scopes_supported": []string{"tools", "offline_access"},
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var meta map[string]any
		json.NewDecoder(r.Body).Decode(&meta)
		meta["client_id"] = "client-" + token()[:8]
		meta["token_endpoint_auth_method"] = "none"
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, meta)
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		redirect, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" {
			http.Error(w, "bad authorization request", http.StatusBadRequest)
			return
		}
		code := token()
		s.mu.Lock()
		s.codes[code] = codeGrant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
		s.mu.Unlock()
		s.Authorizations.Add(1)
		rq := redirect.Query()
		rq.Set("code", code)
		rq.Set("state", q.Get("state"))
		redirect.RawQuery = rq.Encode()
		http.Redirect(w, r, redirect.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		s.mu.Lock()
		defer s.mu.Unlock()
		switch r.Form.Get("grant_type") {
		case "authorization_code":
			g, ok := s.codes[r.Form.Get("code")]
			delete(s.codes, r.Form.Get("code"))
			sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.Form.Get("redirect_uri") != g.redirect {
				tokenError(w, "invalid_grant")
				return
			}
		case "refresh_token":
			if !s.refresh[r.Form.Get("refresh_token")] {
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
		s.access[at] = time.Now().Add(s.lifetime)
		s.refresh[rt] = true
		writeJSON(w, map[string]any{"access_token": at, "refresh_token": rt, "token_type": "Bearer", "expires_in": int(s.lifetime.Seconds()), "scope": "tools"})
	})
	return mux
}

func (s *OAuthServer) valid(at string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.access[at]
	return ok && time.Now().Before(exp)
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
