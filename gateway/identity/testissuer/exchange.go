package testissuer

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Token exchange (RFC 8693) at the issuer's token endpoint, /token: a
// subject token the issuer signed and that has not expired is exchanged,
// for a client AllowClient let in, for a token of the same subject whose
// aud is the requested audience (else resource), unless RefuseExchange
// named the subject. Every request is recorded (Exchanges).

// Exchange is one exchange the issuer was asked for.
type Exchange struct {
	ClientID         string
	Subject          string // the subject token's sub; "" if it was refused before that was known
	SubjectTokenType string
	Audience         string
	Resource         string
	Scope            string
	// Error is the error code answered, "" for a token given.
	Error string
}

// AllowClient lets client id, with secret ("" for a public client),
// exchange tokens.
func (i *Issuer) AllowClient(id, secret string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.clients == nil {
		i.clients = map[string]string{}
	}
	i.clients[id] = secret
}

// RefuseExchange makes exchanges of subject's tokens fail (invalid_grant).
func (i *Issuer) RefuseExchange(subject string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.refused == nil {
		i.refused = map[string]bool{}
	}
	i.refused[subject] = true
}

// SetExchangedLifetime sets the life (expires_in) of the tokens exchanges
// give; the default is an hour.
func (i *Issuer) SetExchangedLifetime(d time.Duration) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.lifetime = d
}

// Exchanges returns the exchanges asked for so far, in order.
func (i *Issuer) Exchanges() []Exchange {
	i.mu.Lock()
	defer i.mu.Unlock()
	return slices.Clone(i.exchanges)
}

const grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"

func (i *Issuer) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	f := r.PostForm
	ex := Exchange{SubjectTokenType: f.Get("subject_token_type"), Audience: f.Get("audience"), Resource: f.Get("resource"), Scope: f.Get("scope")}
	status, code, desc, token, life := i.exchange(r, f, &ex)
	ex.Error = code
	i.mu.Lock()
	i.exchanges = append(i.exchanges, ex)
	i.mu.Unlock()
	if code != "" {
		tokenError(w, status, code, desc)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token":      token,
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
		"token_type":        "Bearer",
		"expires_in":        int64(life / time.Second),
	})
}

// exchange decides one request: a token, or an error's status, code and
// description.
func (i *Issuer) exchange(r *http.Request, f url.Values, ex *Exchange) (status int, code, desc, token string, life time.Duration) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	ex.ClientID = id
	i.mu.Lock()
	want, known := i.clients[id]
	life = i.lifetime
	i.mu.Unlock()
	if life == 0 {
		life = time.Hour
	}
	switch {
	case !known || want != secret:
		return http.StatusUnauthorized, "invalid_client", "unknown client or wrong secret", "", 0
	case f.Get("grant_type") != grantTokenExchange:
		return http.StatusBadRequest, "unsupported_grant_type", f.Get("grant_type"), "", 0
	case f.Get("subject_token") == "" || ex.SubjectTokenType == "":
		return http.StatusBadRequest, "invalid_request", "subject_token and subject_token_type are required", "", 0
	}
	claims, err := i.verify(f.Get("subject_token"))
	if err != nil {
		return http.StatusBadRequest, "invalid_grant", err.Error(), "", 0
	}
	sub, _ := claims["sub"].(string)
	ex.Subject = sub
	i.mu.Lock()
	refused := i.refused[sub]
	i.mu.Unlock()
	if refused {
		return http.StatusBadRequest, "invalid_grant", "exchange not allowed for " + sub, "", 0
	}
	aud := ex.Audience
	if aud == "" {
		aud = ex.Resource
	}
	if aud == "" {
		return http.StatusBadRequest, "invalid_target", "no audience or resource", "", 0
	}
	c := i.Claims(sub, aud)
	c["exp"] = time.Now().Add(life).Unix()
	if ex.Scope != "" {
		c["scope"] = ex.Scope
	}
	c["client_id"] = id
	return http.StatusOK, "", "", Sign(i.SigningKey(), c), life
}

// verify checks that raw is a token the issuer signed with a key it
// publishes, for it, unexpired; it returns its claims.
func (i *Issuer) verify(raw string) (map[string]any, error) {
	jws, err := jose.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil {
		return nil, fmt.Errorf("subject token: %v", err)
	}
	i.mu.Lock()
	keys := slices.Clone(i.keys)
	i.mu.Unlock()
	var payload []byte
	for _, k := range keys {
		if p, err := jws.Verify(k.Key.Public()); err == nil {
			payload = p
			break
		}
	}
	if payload == nil {
		return nil, errors.New("subject token: not signed by this issuer")
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, fmt.Errorf("subject token: %v", err)
	}
	if claims["iss"] != i.URL {
		return nil, errors.New("subject token: another issuer's")
	}
	exp, _ := claims["exp"].(float64)
	if time.Now().Unix() >= int64(exp) {
		return nil, errors.New("subject token: expired")
	}
	return claims, nil
}

func tokenError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
}
