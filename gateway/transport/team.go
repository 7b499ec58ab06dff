package transport

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/mcpgw/mcpgw/gateway/identity"
)

// Team mode (the config's team block): every request to /mcp, the control
// endpoints and the page carries "Authorization: Bearer <JWT>" from the
// configured OpenID Connect issuer, and the user it names travels in the
// request's context (identity.FromContext) into the session it opens.
// The token replaces the owner check and the daemon's own token there: a
// team daemon serves many people, from anywhere its listener reaches, and
// the issuer says who they are. A request without a good token gets 401
// with a WWW-Authenticate header pointing at the protected resource's
// metadata (RFC 9728), so that an MCP client can log in, and never a
// session. /healthz and /metrics stay open.

// Authenticator says who is calling, in team mode (identity.Authority).
// Its methods are called for every request, concurrently.
type Authenticator interface {
	// Issuer is the issuer of team mode, "" while it is off (the team
	// block may come and go at a reload).
	Issuer() string
	// Authenticate verifies a bearer token; an error wraps
	// identity.ErrToken (refused) or identity.ErrIssuer (the issuer
	// cannot be reached).
	Authenticate(ctx context.Context, token string) (*identity.User, error)
}

// MetadataPath is where the protected resource's metadata is served
// (RFC 9728 §3); also under it with the resource's path appended
// (/.well-known/oauth-protected-resource/mcp), where clients look first.
const MetadataPath = "/.well-known/oauth-protected-resource"

// teamOn reports whether team mode is on now.
func (t *Transports) teamOn() bool { return t.o.Team != nil && t.o.Team.Issuer() != "" }

// teamOr serves next to requests with a good bearer token, the user in
// their context, while team mode is on; otherwise it serves personal, the
// daemon's protection outside team mode.
func (t *Transports) teamOr(next, personal http.Handler) http.Handler {
	if t.o.Team == nil {
		return personal
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !t.teamOn() {
			personal.ServeHTTP(w, r)
			return
		}
		scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		token = strings.TrimSpace(token)
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			unauthorized(w, r, "", "this mcpgw daemon is in team mode: send Authorization: Bearer <token> from "+t.o.Team.Issuer())
			return
		}
		u, err := t.o.Team.Authenticate(r.Context(), token)
		switch {
		case errors.Is(err, identity.ErrIssuer):
			t.log.Warn("a bearer token cannot be checked", "err", err)
			http.Error(w, "the token cannot be checked now: "+err.Error(), http.StatusServiceUnavailable)
			return
		case err != nil:
			t.log.Debug("bearer token refused", "err", err)
			unauthorized(w, r, "invalid_token", "bearer token refused: "+err.Error())
			return
		}
		next.ServeHTTP(w, r.WithContext(identity.NewContext(r.Context(), u)))
	})
}

// unauthorized answers 401 with where to learn how to log in (RFC 9728
// §5.1), and the RFC 6750 error code when a token was sent.
func unauthorized(w http.ResponseWriter, r *http.Request, code, msg string) {
	v := `Bearer resource_metadata="` + baseURL(r) + MetadataPath + `"`
	if code != "" {
		v += `, error="` + code + `"`
	}
	w.Header().Set("WWW-Authenticate", v)
	http.Error(w, msg, http.StatusUnauthorized)
}

// baseURL is the daemon's URL as the client reached it. Behind a proxy
// that ends TLS, X-Forwarded-Proto says https.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ","); strings.TrimSpace(p) == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// serveMetadata serves the protected resource's metadata (RFC 9728 §2)
// while team mode is on: the resource (this daemon's /mcp) and the issuer
// that grants tokens for it. Open to anyone: it is how a client learns
// where to log in.
func (t *Transports) serveMetadata(w http.ResponseWriter, r *http.Request) {
	if !t.teamOn() {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"resource":                 baseURL(r) + "/mcp",
		"authorization_servers":    []string{t.o.Team.Issuer()},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "mcpgw",
	})
}

// sessionOwner refuses a request for another user's HTTP session as if
// the session did not exist (what the go-sdk answers for an unknown ID):
// in team mode a session belongs to the user who opened it, and nobody
// else continues, lists, or ends it.
func (t *Transports) sessionOwner(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := identity.FromContext(r.Context())
		if id := r.Header.Get("Mcp-Session-Id"); id != "" && u != nil {
			if ss, ok := t.hub.HTTPSession(id); ok && ss.User() != u.Name {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refuseShimInTeamMode is the welcome error of a shim that dials a team
// daemon: its sessions have no bearer token, so no user.
const refuseShimInTeamMode = "this mcpgw daemon is in team mode: connect to its /mcp over HTTP with a bearer token"
