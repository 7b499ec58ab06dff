package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"

	"github.com/mcpgw/mcpgw/internal/loopback"
)

// Config is what a Verifier accepts: the team block's.
type Config struct {
	Issuer      string // https, or http on a loopback host
	Audience    string // must be among the token's aud
	UserClaim   string // "" means "sub"
	GroupsClaim string // "" for none
}

// Options configure a Verifier; nil means the defaults.
type Options struct {
	// HTTPClient fetches the discovery document and the keys; nil means
	// one with a 10 s timeout.
	HTTPClient *http.Client
	// RefreshInterval is the least time between two fetches of the
	// issuer's discovery document or keys; 0 means
	// DefaultRefreshInterval.
	RefreshInterval time.Duration
	// Leeway is the clock skew allowed on exp and nbf; 0 means
	// DefaultLeeway.
	Leeway time.Duration
	// Now is the clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultRefreshInterval = 30 * time.Second
	DefaultLeeway          = 30 * time.Second
)

// Algorithms are the signature algorithms accepted: RSA and ECDSA ones
// (never "none", never HMAC, whose key would be a shared secret).
var Algorithms = []string{
	oidc.RS256, oidc.RS384, oidc.RS512,
	oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.PS256, oidc.PS384, oidc.PS512,
}

// Errors a Verifier's answer wraps, for callers that tell them apart.
var (
	// ErrIssuer: the issuer's discovery document or keys could not be
	// had; the token may be good.
	ErrIssuer = errors.New("the issuer cannot be reached")
	// ErrToken: the token is not one the daemon accepts.
	ErrToken = errors.New("invalid token")
)

// Verifier verifies the tokens of one issuer. Its methods are safe for
// concurrent use.
type Verifier struct {
	cfg    Config
	client *http.Client
	every  time.Duration
	leeway time.Duration
	now    func() time.Time
	log    *slog.Logger

	// mu guards the fields that follow: the verifier made from the
	// discovery document, once it has been read, and when it was last
	// tried.
	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	tokenURL string // the document's token_endpoint
	tried    time.Time
	triedErr error
}

// NewVerifier returns the verifier of cfg. It fetches nothing until the
// first token comes.
func NewVerifier(cfg Config, o *Options) (*Verifier, error) {
	if err := checkIssuer(cfg.Issuer); err != nil {
		return nil, err
	}
	if cfg.Audience == "" {
		return nil, errors.New("no audience")
	}
	if cfg.UserClaim == "" {
		cfg.UserClaim = "sub"
	}
	v := &Verifier{cfg: cfg, every: DefaultRefreshInterval, leeway: DefaultLeeway, now: time.Now, client: &http.Client{Timeout: 10 * time.Second}}
	if o != nil {
		if o.HTTPClient != nil {
			v.client = o.HTTPClient
		}
		if o.RefreshInterval > 0 {
			v.every = o.RefreshInterval
		}
		if o.Leeway > 0 {
			v.leeway = o.Leeway
		}
		if o.Now != nil {
			v.now = o.Now
		}
		v.log = o.Logger
	}
	if v.log == nil {
		v.log = slog.New(slog.DiscardHandler)
	}
	return v, nil
}

// checkIssuer: https, or http on a loopback host (the registry checks
// the same; a Verifier never trusts keys fetched in the clear from
// elsewhere).
func checkIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	switch {
	case err != nil:
		return fmt.Errorf("issuer: %w", err)
	case u.Scheme == "https" && u.Host != "":
	case u.Scheme == "http" && loopback.IsHost(u.Hostname()):
	default:
		return fmt.Errorf("issuer %q: not https (nor http on a loopback host)", issuer)
	}
	return nil
}

// Config is what v accepts.
func (v *Verifier) Config() Config { return v.cfg }

// Verify checks the JWT raw and returns the user it names. An error
// wraps ErrToken (the token is refused) or ErrIssuer.
func (v *Verifier) Verify(ctx context.Context, raw string) (*User, error) {
	ov, err := v.discovered(ctx)
	if err != nil {
		return nil, err
	}
	tok, err := ov.Verify(ctx, raw)
	if err != nil {
		// go-oidc wraps the key set's error as text.
		if strings.Contains(err.Error(), errKeys.Error()) {
			return nil, fmt.Errorf("%w: %v", ErrIssuer, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrToken, strings.TrimPrefix(err.Error(), "oidc: "))
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrToken, err)
	}
	if err := v.checkTimes(tok.Expiry, claims); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrToken, err)
	}
	name, _ := claims[v.cfg.UserClaim].(string)
	if name == "" {
		return nil, fmt.Errorf("%w: no %q claim naming the user", ErrToken, v.cfg.UserClaim)
	}
	u := &User{Name: name, Token: raw, Expiry: tok.Expiry}
	if v.cfg.GroupsClaim != "" {
		switch g := claims[v.cfg.GroupsClaim].(type) {
		case string:
			u.Groups = []string{g}
		case []any:
			for _, e := range g {
				if s, ok := e.(string); ok {
					u.Groups = append(u.Groups, s)
				}
			}
		}
	}
	return u, nil
}

// TokenEndpoint is the issuer's token endpoint, from its discovery
// document (read first if it has not been).
func (v *Verifier) TokenEndpoint(ctx context.Context) (string, error) {
	if _, err := v.discovered(ctx); err != nil {
		return "", err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.tokenURL == "" {
		return "", fmt.Errorf("%w: %s: the discovery document names no token_endpoint", ErrIssuer, v.cfg.Issuer)
	}
	return v.tokenURL, nil
}

// checkTimes checks exp (required) and nbf with the leeway: go-oidc's own
// check allows none on exp and five minutes on nbf.
func (v *Verifier) checkTimes(exp time.Time, claims map[string]any) error {
	now := v.now()
	if _, ok := claims["exp"]; !ok || exp.IsZero() {
		return errors.New("no exp claim")
	}
	if now.After(exp.Add(v.leeway)) {
		return fmt.Errorf("expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if nbf, ok := claims["nbf"].(float64); ok {
		if t := time.Unix(int64(nbf), 0); now.Add(v.leeway).Before(t) {
			return fmt.Errorf("not valid before %s", t.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// discovered returns the token verifier made from the issuer's discovery
// document, reading the document first if it has not been read; a failed
// read is tried again no sooner than the refresh interval.
func (v *Verifier) discovered(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.verifier != nil {
		return v.verifier, nil
	}
	if !v.tried.IsZero() && v.now().Sub(v.tried) < v.every {
		return nil, v.triedErr
	}
	v.tried = v.now()
	// go-oidc reads ISSUER/.well-known/openid-configuration and checks
	// that the document names the same issuer.
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, v.client), v.cfg.Issuer)
	var meta struct {
		JWKS  string `json:"jwks_uri"`
		Token string `json:"token_endpoint"`
	}
	if err == nil {
		err = p.Claims(&meta)
	}
	if err == nil && meta.JWKS == "" {
		err = errors.New("the discovery document names no jwks_uri")
	}
	if err != nil {
		v.triedErr = fmt.Errorf("%w: %s: %v", ErrIssuer, v.cfg.Issuer, err)
		v.log.Warn("reading the issuer's discovery document", "issuer", v.cfg.Issuer, "err", err)
		return nil, v.triedErr
	}
	v.tokenURL = meta.Token
	keys := &keySet{url: meta.JWKS, client: v.client, every: v.every, now: v.now, log: v.log}
	v.verifier = oidc.NewVerifier(v.cfg.Issuer, keys, &oidc.Config{
		ClientID:             v.cfg.Audience,
		SupportedSigningAlgs: Algorithms,
		SkipExpiryCheck:      true, // checkTimes, with a leeway
	})
	return v.verifier, nil
}

// errKeys marks a failure to fetch the issuer's keys (not the token's
// fault).
var errKeys = errors.New("fetching the issuer's keys")

// keySet is the issuer's JSON Web Key Set (oidc.KeySet): fetched when a
// token names a key ID it does not hold (the first token, or keys
// rotated), at most once per interval however many tokens ask, so that
// made-up key IDs cannot make the daemon hammer the issuer.
type keySet struct {
	url    string
	client *http.Client
	every  time.Duration
	now    func() time.Time
	log    *slog.Logger

	// fetchMu makes fetches one at a time: a caller that waited for one
	// finds the keys it brought.
	fetchMu sync.Mutex
	// mu guards the fields that follow; a leaf.
	mu       sync.Mutex
	keys     []jose.JSONWebKey
	fetched  time.Time // the last fetch, whatever its outcome
	fetchErr error     // its error
	fetches  int       // for tests
}

// VerifySignature implements oidc.KeySet.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	algs := make([]jose.SignatureAlgorithm, len(Algorithms))
	for i, a := range Algorithms {
		algs[i] = jose.SignatureAlgorithm(a)
	}
	jws, err := jose.ParseSigned(raw, algs)
	if err != nil {
		return nil, fmt.Errorf("malformed JWT: %v", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("a JWT has one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	k.mu.Lock()
	keys, seen := k.keys, k.fetched
	k.mu.Unlock()
	if p, found, err := verifyWith(jws, keys, kid); found {
		return p, err
	}
	keys, err = k.refresh(ctx, seen)
	if err != nil {
		return nil, err
	}
	if p, found, err := verifyWith(jws, keys, kid); found {
		return p, err
	}
	return nil, fmt.Errorf("no key of the issuer's has ID %q", kid)
}

// verifyWith verifies jws with the key kid names (any key, for a token
// that names none); found is false when no key could be tried.
func verifyWith(jws *jose.JSONWebSignature, keys []jose.JSONWebKey, kid string) (payload []byte, found bool, err error) {
	for i := range keys {
		key := &keys[i]
		if (kid != "" && key.KeyID != kid) || key.Use == "enc" {
			continue
		}
		found = true
		if p, err := jws.Verify(key); err == nil {
			return p, true, nil
		}
	}
	if found {
		return nil, true, errors.New("bad signature")
	}
	return nil, false, nil
}

// refresh fetches the keys, unless they were fetched since seen (by the
// caller this one waited for) or less than the interval ago: then the
// keys held are the answer.
func (k *keySet) refresh(ctx context.Context, seen time.Time) ([]jose.JSONWebKey, error) {
	k.fetchMu.Lock()
	defer k.fetchMu.Unlock()
	k.mu.Lock()
	keys, last, lastErr := k.keys, k.fetched, k.fetchErr
	k.mu.Unlock()
	if last != seen || (!last.IsZero() && k.now().Sub(last) < k.every) {
		if len(keys) == 0 && lastErr != nil {
			return nil, lastErr
		}
		return keys, nil
	}
	fresh, err := k.fetch(ctx)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fetched = k.now()
	k.fetches++
	if err != nil {
		k.log.Warn("fetching the issuer's keys", "url", k.url, "err", err)
		k.fetchErr = fmt.Errorf("%w: %v", errKeys, err)
		return nil, k.fetchErr
	}
	k.keys, k.fetchErr = fresh, nil
	return fresh, nil
}

func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", k.url, resp.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("%s: %v", k.url, err)
	}
	return set.Keys, nil
}
