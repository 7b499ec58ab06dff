package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/tailscale/hujson"
)

// TokenExchange is a server's "tokenExchange" block (team mode): each
// user's calls reach the server with a token of their own, got by OAuth 2.0
// Token Exchange (RFC 8693) of the bearer token they sent mcpgw, from the
// team issuer's token endpoint or TokenEndpoint.
//
//	"tickets": {
//	  "url": "https://tickets.example.com/mcp",
//	  "tokenExchange": {
//	    "audience": "tickets",                // and/or "resource": "https://…"
//	    "scope": "tickets:read",              // optional
//	    "clientId": "mcpgw",                  // mcpgw's client at the issuer
//	    "clientSecret": "${EXCHANGE_SECRET}", // "!cmd" as for headers
//	    "subjectTokenType": "access_token",   // or "id_token", "jwt"
//	    "tokenEndpoint": "https://…/token"    // default: the issuer's
//	  }
//	}
//
// Such a server is per user by nature ("isolation": "user" is implied)
// and needs a team block: without one no request carries a token to
// exchange.
type TokenExchange struct {
	Audience string // the audience parameter; "" for none
	Resource string // the resource parameter (RFC 8707); "" for none
	Scope    string // space-separated scopes; "" for none
	// SubjectTokenType is the last part of the subject token's type URN:
	// "access_token" (the default), "id_token" or "jwt".
	SubjectTokenType string
	// TokenEndpoint is where to exchange; "" means the team issuer's,
	// from its discovery document.
	TokenEndpoint string
	ClientID      string
	ClientSecret  string // interpolated; "!cmd" resolved at connect like headers
}

// Subject token types of TokenExchange.SubjectTokenType.
const (
	SubjectAccessToken = "access_token"
	SubjectIDToken     = "id_token"
	SubjectJWT         = "jwt"
)

var tokenExchangeFields = []string{"audience", "resource", "scope", "subjectTokenType", "tokenEndpoint", "clientId", "clientSecret"}

// errExchangeOff is what a tokenExchange block is without a team block.
var errExchangeOff = errors.New("needs team mode (a team block): it exchanges the calling user's bearer token, and outside team mode no request carries one")

// tokenExchange reads a server's "tokenExchange" block.
func (p *configParser) tokenExchange(st *serverParse, m jsonMember, f string) {
	if jsonIsNull(m.value) {
		return
	}
	obj, ok := m.value.Value.(*hujson.Object)
	if !ok {
		p.failf(m.value, f, "must be an object, got %s", jsonKindName(m.value))
		return
	}
	x := &TokenExchange{SubjectTokenType: SubjectAccessToken}
	for _, om := range p.members(obj, f) {
		of := joinField(f, om.name)
		v := om.value
		str := func(dst *string) {
			if s, ok := p.str(v, of); ok {
				*dst = p.interpolate(v, of, s)
			}
		}
		switch om.name {
		case "audience":
			str(&x.Audience)
		case "resource":
			str(&x.Resource)
		case "scope":
			str(&x.Scope)
		case "clientId":
			str(&x.ClientID)
		case "clientSecret":
			if s, ok := p.str(v, of); ok {
				x.ClientSecret = p.interpolateSecret(v, of, s)
			}
		case "tokenEndpoint":
			if s, ok := p.str(v, of); ok {
				x.TokenEndpoint = p.url(v, of, s)
			}
		case "subjectTokenType":
			if s, ok := p.str(v, of); ok && p.oneOf(v, of, s, SubjectAccessToken, SubjectIDToken, SubjectJWT) {
				x.SubjectTokenType = s
			}
		default:
			p.unknownField(om, of, tokenExchangeFields, nil)
		}
	}
	if x.Audience == "" && x.Resource == "" {
		p.failf(m.value, f, "needs an audience or a resource: what the exchanged token is for")
	}
	if x.ClientID == "" {
		p.failf(m.value, f, "needs a clientId: mcpgw's own client at the issuer, which the exchange authenticates")
	}
	st.s.TokenExchange, st.exchangeV = x, m.value
	st.httpOnly = append(st.httpOnly, m)
	p.teamRules = append(p.teamRules, teamRule{v: m.value, field: f, off: errExchangeOff, required: true})
}

// checkTokenExchange refuses what a tokenExchange block cannot be
// combined with: other credentials for the same requests, a stdio
// server, an isolation other than per user, which it implies.
func (p *configParser) checkTokenExchange(st *serverParse) {
	s := st.s
	if s.TokenExchange == nil {
		return
	}
	f := joinField(st.field, "tokenExchange")
	switch {
	case st.commandV != nil:
		p.failf(st.exchangeV, f, "is for a server with a url: a stdio server gets no token")
	case s.Auth == AuthOAuth || s.OAuth != nil:
		p.failf(st.exchangeV, f, "cannot be combined with an OAuth login (auth \"oauth\" or an oauth block): both would set the Authorization header")
	case s.Auth == AuthBearer || st.bearer != nil || s.BearerTokenEnv != "":
		p.failf(st.exchangeV, f, "cannot be combined with a bearer token (bearerToken, bearerTokenEnv or auth \"bearer\"): both would set the Authorization header")
	case s.Isolation == IsolationShared || s.Isolation == IsolationSession:
		p.failf(st.exchangeV, f, "runs the server once per user; isolation must be \"user\" or unset, not %q", s.Isolation)
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			p.failf(st.exchangeV, f, "cannot be combined with an Authorization header: the exchanged token is sent as it")
		}
	}
	s.Isolation = IsolationUser
}

// exchangeHash is hash with the tokenExchange block's parameters (never
// its secret) mixed in: the same URL exchanged for another audience,
// scope or client is another upstream, whose tokens and tools are its own.
func exchangeHash(hash string, x *TokenExchange) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{hash, "tokenExchange", x.Audience, x.Resource, x.Scope,
		x.SubjectTokenType, x.TokenEndpoint, x.ClientID}, "\x00")))
	return hex.EncodeToString(sum[:])
}
