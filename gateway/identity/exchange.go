package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Token exchange (RFC 8693): a server marked "tokenExchange" reaches its
// upstream with each user's own token, which the issuer gives mcpgw in
// exchange for the bearer token the user sent, for the upstream's
// audience. The Exchanger asks and keeps the answers.

// Token type URNs (RFC 8693 §3).
const (
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypePrefix    = "urn:ietf:params:oauth:token-type:"
	TokenTypeAccess    = TokenTypePrefix + "access_token"
)

// Exchange is what one upstream asks for.
type Exchange struct {
	// TokenEndpoint is where to ask; "" means the issuer's (ExchangerOptions.Endpoint).
	TokenEndpoint string
	// ClientID and ClientSecret authenticate mcpgw at the issuer (HTTP
	// Basic, RFC 6749 §2.3.1; a client without a secret sends client_id).
	ClientID, ClientSecret string
	// Audience, Resource (RFC 8707) and Scope of the token asked for;
	// each left out when "".
	Audience, Resource, Scope string
	// SubjectTokenType is the URN of the user's token's type; ""
	// means TokenTypeAccess.
	SubjectTokenType string
}

// ExchangerOptions configure an Exchanger; nil means the defaults.
type ExchangerOptions struct {
	// HTTPClient asks the token endpoint; nil means one with a 10 s timeout.
	HTTPClient *http.Client
	// Endpoint is the issuer's token endpoint, for an Exchange that names
	// none; nil refuses such exchanges.
	Endpoint func(ctx context.Context) (string, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// DefaultExchangedLifetime is how long a token is kept whose answer said
// nothing of when it expires (expires_in is only RECOMMENDED, RFC 8693
// §2.2.1).
const DefaultExchangedLifetime = time.Minute

// Exchanger exchanges users' tokens and keeps each answer, per user and
// Exchange, until shortly before it expires: a user's token is never
// given for another user. Concurrent asks for the same user and Exchange
// make one request. Its methods are safe for concurrent use. Tokens are
// kept in this process's memory only.
type Exchanger struct {
	client   *http.Client
	endpoint func(ctx context.Context) (string, error)
	now      func() time.Time
	flight   singleflight.Group

	// mu guards kept, the tokens by user and Exchange, and sweepAt, the
	// size past which expired ones are dropped.
	mu      sync.Mutex
	kept    map[exchangeKey]exchanged
	sweepAt int
}

type exchangeKey struct {
	user string
	x    Exchange
}

type exchanged struct {
	token string
	until time.Time // when it is no longer handed out
}

// NewExchanger returns an Exchanger.
func NewExchanger(o *ExchangerOptions) *Exchanger {
	x := &Exchanger{client: &http.Client{Timeout: 10 * time.Second}, now: time.Now, kept: map[exchangeKey]exchanged{}, sweepAt: 64}
	if o != nil {
		if o.HTTPClient != nil {
			x.client = o.HTTPClient
		}
		x.endpoint = o.Endpoint
		if o.Now != nil {
			x.now = o.Now
		}
	}
	return x
}

// ExchangeError is an issuer's refusal to exchange a user's token (an
// error response, RFC 6749 §5.2, or another status).
type ExchangeError struct {
	User        string
	Status      int    // the HTTP status
	Code        string // the error code, e.g. "invalid_grant"; "" if none
	Description string // error_description, if any
}

func (e *ExchangeError) Error() string {
	why := e.Code
	if why == "" {
		why = fmt.Sprintf("HTTP %d", e.Status)
	}
	if e.Description != "" {
		why += " (" + e.Description + ")"
	}
	return fmt.Sprintf("the issuer refused to exchange %s's token: %s", e.User, why)
}

// Token returns user's token for x: the one kept, or one the issuer gives
// for subject, the user's bearer token. A refusal is an *ExchangeError,
// and is not kept: the next call asks again.
func (x *Exchanger) Token(ctx context.Context, user, subject string, req Exchange) (string, error) {
	if user == "" || subject == "" {
		return "", errors.New("token exchange needs a user and their token")
	}
	if req.SubjectTokenType == "" {
		req.SubjectTokenType = TokenTypeAccess
	}
	k := exchangeKey{user, req}
	if tok, ok := x.kept1(k); ok {
		return tok, nil
	}
	flightKey := strings.Join([]string{user, req.TokenEndpoint, req.ClientID, req.ClientSecret, req.Audience, req.Resource, req.Scope, req.SubjectTokenType}, "\x00")
	v, err, _ := x.flight.Do(flightKey, func() (any, error) {
		if tok, ok := x.kept1(k); ok {
			return tok, nil
		}
		tok, life, err := x.ask(ctx, user, subject, req)
		if err != nil {
			return "", err
		}
		x.keep(k, tok, life)
		return tok, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// Forget drops user's token for req, which its upstream refused: the
// next Token asks again.
func (x *Exchanger) Forget(user string, req Exchange) {
	if req.SubjectTokenType == "" {
		req.SubjectTokenType = TokenTypeAccess
	}
	x.mu.Lock()
	delete(x.kept, exchangeKey{user, req})
	x.mu.Unlock()
}

func (x *Exchanger) kept1(k exchangeKey) (string, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	e, ok := x.kept[k]
	if !ok || !x.now().Before(e.until) {
		return "", false
	}
	return e.token, true
}

// keep keeps tok until shortly before it expires: a quarter of its life
// early, at most a minute, so that a call in flight does not carry a token
// that expires on the way.
func (x *Exchanger) keep(k exchangeKey, tok string, life time.Duration) {
	early := min(life/4, time.Minute)
	now := x.now()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.kept[k] = exchanged{token: tok, until: now.Add(life - early)}
	if len(x.kept) >= x.sweepAt {
		for key, e := range x.kept {
			if !now.Before(e.until) {
				delete(x.kept, key)
			}
		}
		x.sweepAt = max(64, 2*len(x.kept))
	}
}

// ask posts the exchange (RFC 8693 §2.1) and reads the answer (§2.2).
func (x *Exchanger) ask(ctx context.Context, user, subject string, req Exchange) (string, time.Duration, error) {
	endpoint := req.TokenEndpoint
	if endpoint == "" {
		if x.endpoint == nil {
			return "", 0, errors.New("token exchange: no token endpoint")
		}
		var err error
		if endpoint, err = x.endpoint(ctx); err != nil {
			return "", 0, fmt.Errorf("exchanging %s's token: %w", user, err)
		}
	}
	form := url.Values{
		"grant_type":           {GrantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {req.SubjectTokenType},
		"requested_token_type": {TokenTypeAccess},
	}
	for name, v := range map[string]string{"audience": req.Audience, "resource": req.Resource, "scope": req.Scope} {
		if v != "" {
			form.Set(name, v)
		}
	}
	if req.ClientSecret == "" {
		form.Set("client_id", req.ClientID)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("exchanging %s's token: %w", user, err)
	}
	hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	hr.Header.Set("Accept", "application/json")
	if req.ClientSecret != "" {
		hr.SetBasicAuth(url.QueryEscape(req.ClientID), url.QueryEscape(req.ClientSecret))
	}
	resp, err := x.client.Do(hr)
	if err != nil {
		return "", 0, fmt.Errorf("exchanging %s's token at %s: %w", user, endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", 0, fmt.Errorf("exchanging %s's token at %s: %w", user, endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		e := &ExchangeError{User: user, Status: resp.StatusCode}
		var oe struct {
			Code        string `json:"error"`
			Description string `json:"error_description"`
		}
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" && json.Unmarshal(body, &oe) == nil {
			e.Code, e.Description = oe.Code, oe.Description
		}
		return "", 0, e
	}
	var ok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   *int64 `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &ok); err != nil {
		return "", 0, fmt.Errorf("exchanging %s's token at %s: the answer is not JSON: %w", user, endpoint, err)
	}
	switch {
	case ok.AccessToken == "":
		return "", 0, fmt.Errorf("exchanging %s's token at %s: the answer has no access_token", user, endpoint)
	case !strings.EqualFold(ok.TokenType, "bearer"):
		return "", 0, fmt.Errorf("exchanging %s's token at %s: the answer's token_type is %q, not Bearer", user, endpoint, ok.TokenType)
	}
	life := DefaultExchangedLifetime
	if ok.ExpiresIn != nil {
		life = time.Duration(*ok.ExpiresIn) * time.Second
	}
	return ok.AccessToken, life, nil
}
