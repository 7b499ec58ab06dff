// Package testissuer is an OpenID Connect issuer for tests: an HTTP
// server with a discovery document and a JSON Web Key Set, whose keys are
// made in the test, and which signs the tokens a test asks for. Only
// tests import it.
package testissuer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Issuer is a running test issuer.
type Issuer struct {
	URL string // its issuer URL, http://127.0.0.1:PORT
	srv *httptest.Server

	// KeyFetches counts the requests for its keys.
	KeyFetches atomic.Int64

	mu   sync.Mutex
	keys []Key // published; the first signs
	n    int
	// token exchange (exchange.go)
	clients   map[string]string // client ID → secret
	refused   map[string]bool   // subjects refused an exchange
	lifetime  time.Duration     // of the tokens it gives; 0: an hour
	exchanges []Exchange
}

// Key is a signing key.
type Key struct {
	ID  string
	Alg jose.SignatureAlgorithm
	Key crypto.Signer
}

// New starts an issuer with one RS256 key.
func New() *Issuer {
	i := &Issuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                i.URL,
			"jwks_uri":                              i.URL + "/jwks",
			"authorization_endpoint":                i.URL + "/authorize",
			"token_endpoint":                        i.URL + "/token",
			"response_types_supported":              []string{"code"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		i.KeyFetches.Add(1)
		i.mu.Lock()
		var set jose.JSONWebKeySet
		for _, k := range i.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.Key.Public(), KeyID: k.ID, Algorithm: string(k.Alg), Use: "sig"})
		}
		i.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	})
	mux.HandleFunc("POST /token", i.serveToken)
	i.srv = httptest.NewServer(mux)
	i.URL = i.srv.URL
	i.Rotate(jose.RS256)
	return i
}

// Close stops the issuer.
func (i *Issuer) Close() { i.srv.Close() }

// NewKey makes a key of alg (RS256 or ES256), not yet published.
func (i *Issuer) NewKey(alg jose.SignatureAlgorithm) Key {
	i.mu.Lock()
	i.n++
	id := fmt.Sprintf("key-%d", i.n)
	i.mu.Unlock()
	var signer crypto.Signer
	var err error
	switch alg {
	case jose.ES256:
		signer, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		signer, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		panic(err)
	}
	return Key{ID: id, Alg: alg, Key: signer}
}

// Rotate replaces the published keys with a new one of alg, which signs
// from now on; it returns it.
func (i *Issuer) Rotate(alg jose.SignatureAlgorithm) Key {
	k := i.NewKey(alg)
	i.mu.Lock()
	i.keys = []Key{k}
	i.mu.Unlock()
	return k
}

// SigningKey is the key that signs Token's tokens.
func (i *Issuer) SigningKey() Key {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.keys[0]
}

// Claims are a token's claims for user: iss this issuer, aud audience,
// issued now and valid an hour.
func (i *Issuer) Claims(user, audience string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": i.URL, "aud": audience, "sub": user, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// Token is a token for user and audience, signed with the issuer's key.
func (i *Issuer) Token(user, audience string) string {
	return Sign(i.SigningKey(), i.Claims(user, audience))
}

// Sign signs claims with k, its ID in the header.
func Sign(k Key, claims map[string]any) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.Alg, Key: jose.JSONWebKey{Key: k.Key, KeyID: k.ID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		panic(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := signer.Sign(payload)
	if err != nil {
		panic(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		panic(err)
	}
	return s
}

// Unsigned is claims as a token of algorithm "none", which no verifier
// may accept.
func Unsigned(claims map[string]any) string {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	payload, _ := json.Marshal(claims)
	return enc.EncodeToString(header) + "." + enc.EncodeToString(payload) + "."
}
