package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Client says how mcpgw identifies itself to an authorization server:
// the fields of a server's "oauth" block.
type Client struct {
	ClientID            string
	ClientSecret        string
	ClientMetadataURL   string
	Scope               string
	RedirectURI         string
	AuthorizationParams map[string]string
	AllowPrivateNetwork bool // see HTTPClient
}

// A Browser shows the user an authorization URL and returns the URL the
// authorization server redirected to afterwards.
type Browser func(ctx context.Context, authURL string, redirect <-chan *url.URL) (*url.URL, error)

// LoginOptions configure Login.
type LoginOptions struct {
	ServerURL string
	Client    Client
	Store     *Store
	// Browser sends the user to the authorization URL. The redirect channel
	// delivers the callback the loopback listener received; a browser for
	// headless machines may ignore it and return the URL the user pasted.
	Browser Browser
	// CallbackAddr is the loopback address the callback listener uses
	// ("127.0.0.1:0" picks a port; a stored registration's port is tried
	// first). Ignored when Client.RedirectURI is set and not loopback.
	CallbackAddr string
	// HTTPClient makes the requests to the server and the authorization
	// server; nil is HTTPClient(Client.AllowPrivateNetwork).
	HTTPClient *http.Client
	// Challenge, if set, is the server's 401 or 403 that asked for this
	// login (with its Request); else Login asks the server itself. A 403
	// with insufficient_scope asks for more scope: the new login asks for
	// those and the scopes granted before.
	Challenge *http.Response
}

// callbackPath is the redirect URI's path: stable, so that a registered
// redirect URI stays valid.
const callbackPath = "/oauth/callback"

// Login runs the authorization code flow for opts.ServerURL (discovery,
// client registration, PKCE, the user's consent in a browser, the code
// exchange) and stores the credentials, as those of the authorization
// server the server names. A client an earlier login registered with that
// same authorization server is reused; one registered with another never
// is (SEP-2352: a server that moved to a new authorization server gets a
// client registered there).
func Login(ctx context.Context, opts LoginOptions) (*Credentials, error) {
	hc := opts.HTTPClient
	if hc == nil {
		hc = HTTPClient(opts.Client.AllowPrivateNetwork)
	}
	hc = withLegacyIssuer(hc, opts.ServerURL)

	var req *http.Request
	var err error
	resp := opts.Challenge
	if resp != nil && resp.Request != nil {
		req = resp.Request
	} else if req, resp, err = challenge(ctx, hc, opts.ServerURL); err != nil {
		return nil, err
	}
	// The SDK's flow below finds the same authorization server again; it
	// is looked up first to know which client of the stored ones is its.
	as, _ := discover(ctx, hc, resp, opts.ServerURL)
	prev := previous(opts.Store, opts.ServerURL, as)
	last, _ := opts.Store.Load(opts.ServerURL)

	redirect, ln, err := callbackListener(opts, prev)
	if err != nil {
		return nil, err
	}
	callbacks := make(chan *url.URL, 1)
	if ln != nil {
		srv := &http.Server{Handler: callbackHandler(callbacks), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
	}

	var got *Credentials
	cfg := codeHandlerConfig(opts, prev, last, hc, redirect, callbacks, &got)
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, err
	}
	if err := h.Authorize(ctx, req, resp); err != nil {
		return nil, err
	}
	if got == nil {
		return nil, errors.New("the authorization finished without a token")
	}
	if as != nil && got.TokenURL == as.tokenURL {
		got.Issuer = as.issuer
	}
	got.Registered = opts.Client.ClientID == "" && got.ClientID != opts.Client.ClientMetadataURL
	if err := opts.Store.Save(got); err != nil {
		return nil, err
	}
	return got, nil
}

// previous returns the credentials an earlier login to serverURL got from
// the authorization server as, nil if none: its registered client (and
// the port of its redirect URI) is used again. Credentials stored before
// issuers were recorded count as its when their token endpoint is its.
func previous(store *Store, serverURL string, as *authServer) *Credentials {
	if as == nil {
		return nil
	}
	if c, err := store.LoadIssuer(serverURL, as.issuer); err == nil {
		return c
	}
	if c, err := store.LoadIssuer(serverURL, ""); err == nil && c.TokenURL == as.tokenURL {
		return c
	}
	return nil
}

// codeHandlerConfig configures the SDK's authorization code flow for a
// login: the browser round trip (through opts.Browser, answered by the
// callback listener), the registration (a client ID metadata document, a
// pre-registered client, configured or from an earlier login to the same
// authorization server, prev, else dynamic registration, in the SDK's
// order), and the scopes (configured, and those the server's last login,
// last, was granted or has been asked for since). The credentials obtained
// are stored in *got.
func codeHandlerConfig(opts LoginOptions, prev, last *Credentials, hc *http.Client, redirect string, callbacks chan *url.URL, got **Credentials) *auth.AuthorizationCodeHandlerConfig {
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		Client:      hc,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			u, err := addParams(args.URL, opts.Client.AuthorizationParams)
			if err != nil {
				return nil, err
			}
			back, err := opts.Browser(ctx, u, callbacks)
			if err != nil {
				return nil, err
			}
			q := back.Query()
			if e := q.Get("error"); e != "" {
				return nil, fmt.Errorf("the authorization server refused: %s %s", e, q.Get("error_description"))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
		RequestRefreshToken: true,
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			*got = &Credentials{
				ServerURL: opts.ServerURL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
				AuthURL: c.Endpoint.AuthURL, TokenURL: c.Endpoint.TokenURL, AuthStyle: int(c.Endpoint.AuthStyle),
				RedirectURL: c.RedirectURL, Scopes: c.Scopes, Token: tok,
			}
			return c.TokenSource(ctx, tok), nil
		},
	}
	if opts.Client.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: opts.Client.ClientMetadataURL}
	}
	switch {
	case opts.Client.ClientID != "":
		cfg.PreregisteredClient = preregistered(opts.Client.ClientID, opts.Client.ClientSecret)
	case prev != nil && prev.Registered && prev.RedirectURL == redirect:
		cfg.PreregisteredClient = preregistered(prev.ClientID, prev.ClientSecret)
	default:
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName:   "mcpgw",
				RedirectURIs: []string{redirect},
				GrantTypes:   []string{"authorization_code", "refresh_token"},
			},
		}
	}
	extra := strings.Fields(opts.Client.Scope)
	if last != nil && last.Token != nil {
		extra = unionScopes(extra, last.Scopes) // keep what was granted
	}
	if last != nil {
		extra = unionScopes(extra, last.Wanted) // and what the server asked for since
	}
	if len(extra) > 0 {
		cfg.ScopeFilter = func(discovered []string) []string { return unionScopes(discovered, extra) }
	}
	return cfg
}

func preregistered(id, secret string) *oauthex.ClientCredentials {
	c := &oauthex.ClientCredentials{ClientID: id}
	if secret != "" {
		c.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: secret}
	}
	return c
}

// callbackListener returns the redirect URI and, when mcpgw receives the
// callback itself, the loopback listener for it.
func callbackListener(opts LoginOptions, prev *Credentials) (string, net.Listener, error) {
	addr := opts.CallbackAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if r := opts.Client.RedirectURI; r != "" {
		u, err := url.Parse(r)
		if err != nil {
			return "", nil, fmt.Errorf("oauth.redirectUri: %v", err)
		}
		if !isLoopback(u.Hostname()) {
			return r, nil, nil // the user pastes the redirect
		}
		ln, err := net.Listen("tcp", u.Host)
		if err != nil {
			return "", nil, fmt.Errorf("listening for the OAuth callback on %s: %w", u.Host, err)
		}
		return r, ln, nil
	}
	if prev != nil && prev.Registered && prev.RedirectURL != "" {
		// The port of the registered redirect URI, when it is free.
		if u, err := url.Parse(prev.RedirectURL); err == nil && isLoopback(u.Hostname()) {
			if ln, err := net.Listen("tcp", u.Host); err == nil {
				return prev.RedirectURL, ln, nil
			}
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listening for the OAuth callback: %w", err)
	}
	return "http://" + ln.Addr().String() + callbackPath, ln, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// callbackHandler receives the authorization server's redirect.
func callbackHandler(out chan<- *url.URL) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != callbackPath && r.URL.Query().Get("code") == "" && r.URL.Query().Get("error") == "" {
			http.NotFound(w, r)
			return
		}
		u := *r.URL
		select {
		case out <- &u:
		default:
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "mcpgw: login received; you can close this tab.")
	})
}

// addParams adds the configured authorization parameters to the URL.
func addParams(raw string, params map[string]string) (string, error) {
	if len(params) == 0 {
		return raw, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func unionScopes(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		found := false
		for _, x := range out {
			if x == s {
				found = true
				break
			}
		}
		if !found {
			out = append(out, s)
		}
	}
	return out
}

// FollowRedirects is a Browser for tests and automation: it requests the
// authorization URL and follows redirects until one points at the
// redirect URI, which it returns (the authorization server must consent
// without a person, as test servers do).
func FollowRedirects(hc *http.Client, redirectPrefix string) Browser {
	return func(ctx context.Context, authURL string, _ <-chan *url.URL) (*url.URL, error) {
		c := *hc
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		next := authURL
		for range 10 {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
			if err != nil {
				return nil, err
			}
			resp, err := c.Do(req)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			loc, err := resp.Location()
			if err != nil {
				return nil, fmt.Errorf("the authorization server answered %s without a redirect", resp.Status)
			}
			if redirectPrefix == "" || strings.HasPrefix(loc.String(), redirectPrefix) || loc.Query().Get("code") != "" {
				return loc, nil
			}
			next = loc.String()
		}
		return nil, errors.New("too many redirects")
	}
}
