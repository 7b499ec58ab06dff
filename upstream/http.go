package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// HTTP transports of an upstream with a URL.
const (
	kindStreamable = "streamable"
	kindSSE        = "sse"
	kindStdio      = "stdio"
)

// headerTransport adds an upstream's configured headers and bearer token to
// every request, and records the error statuses it sees: the SDK's errors
// carry only status texts, and the pool needs the codes (401 → needs-auth;
// 400/404/405 from a Streamable HTTP attempt → try legacy SSE).
type headerTransport struct {
	up      *Upstream // tags related streams (relatedStream); nil in tests
	base    http.RoundTripper
	headers map[string]string
	bearer  string

	// OAuth servers: the stored token, the server's name for the login
	// hint, and an interactive login (nil in the daemon, which never
	// starts one: it says which command to run).
	tokens    *oauth.Source
	server    string
	authorize func(ctx context.Context, challenge *http.Response) error
	// exchange gives the token of a server with a tokenExchange block
	// (Options.Exchange, for this upstream's key).
	exchange func(ctx context.Context) (string, error)
	// exchangeRefused drops the token exchange gave, after a 401: the
	// request is sent once more, with a token exchanged anew.
	exchangeRefused func()
	// wanted records the scopes a 403 with insufficient_scope asks for,
	// so that the next `mcpgw login` asks for them too (a step-up).
	wanted func(scopes []string)

	mu         sync.Mutex
	sent       string // the access token of tokens the last request carried
	lastStatus int    // last status >= 400
	authReason string // set when a 401 was seen
	authHeader string // its WWW-Authenticate
}

// refused answers a request after a 401 with the same 401, without asking
// the server again: the SDK follows a refused server/discover probe with
// initialize, and a server that wants credentials we lack is asked once.
// A connect with new credentials uses a new transport.
func (t *headerTransport) refused(req *http.Request) *http.Response {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.authReason == "" {
		return nil
	}
	h := http.Header{"Content-Type": {"text/plain; charset=utf-8"}}
	if t.authHeader != "" {
		h.Set("WWW-Authenticate", t.authHeader)
	}
	return &http.Response{
		Status: "401 Unauthorized", StatusCode: http.StatusUnauthorized, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader("unauthorized\n")), Request: req,
	}
}

// protocolHeaders are set by the SDK and never overridden by configuration.
var protocolHeaders = map[string]bool{
	"Accept": true, "Content-Type": true, "Mcp-Session-Id": true,
	"Mcp-Protocol-Version": true, "Last-Event-Id": true,
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if resp := t.refused(req); resp != nil {
		return resp, nil
	}
	var listening []string
	if t.up != nil {
		listening = listenURIs(req)
	}
	resp, err := t.send(req)
	if err == nil && t.tokens != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		resp, err = t.reauthorize(req, resp)
	}
	if err == nil && t.exchangeRefused != nil && resp.StatusCode == http.StatusUnauthorized {
		resp, err = t.exchangeAgain(req, resp)
	}
	if err == nil && req.Method == http.MethodPost && t.up != nil {
		if peer := PeerFrom(req.Context()); peer != nil {
			tagRelatedStream(resp, t.up.peerTag(peer))
		}
	}
	if err == nil && len(listening) > 0 {
		watchListen(req, resp, func() { t.up.listenEnded(t, listening) })
	}
	if err == nil && resp.StatusCode >= 400 {
		t.mu.Lock()
		t.lastStatus = resp.StatusCode
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden && t.tokens != nil {
			t.authHeader = resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode == http.StatusForbidden && t.wanted != nil && strings.Contains(t.authHeader, "insufficient_scope") {
				if scope := challengeParam(t.authHeader, "scope"); scope != "" {
					t.wanted(strings.Fields(scope))
				}
			}
			if t.authReason == "" {
				t.authReason = t.refusal(resp)
			}
		}
		t.mu.Unlock()
	}
	return resp, err
}

// send sends a copy of req with the configured headers and credentials. A
// server that needs an OAuth login we lack is answered here with a 401,
// without asking it.
func (t *headerTransport) send(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context()) // a RoundTripper must not modify its request
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	for k, v := range t.headers {
		if !protocolHeaders[http.CanonicalHeaderKey(k)] {
			r.Header.Set(k, v)
		}
	}
	if t.bearer != "" {
		r.Header.Set("Authorization", "Bearer "+t.bearer)
	}
	if t.exchange != nil {
		tok, err := t.exchange(req.Context())
		if err != nil {
			return nil, &ExchangeError{Server: t.server, Err: err}
		}
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	if t.tokens != nil {
		tok, err := t.tokens.Token()
		switch {
		case err == nil:
			r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			t.mu.Lock()
			t.sent = tok.AccessToken
			t.mu.Unlock()
		case t.authorize != nil && (errors.Is(err, oauth.ErrNotLoggedIn) || errors.Is(err, oauth.ErrLoginExpired)):
			// Ask without: the server's challenge starts the login.
		default:
			t.mu.Lock()
			t.authReason = fmt.Sprintf("%v; run: mcpgw login %s", err, t.server)
			t.mu.Unlock()
			return t.refused(req), nil
		}
	}
	return t.base.RoundTrip(r)
}

// reauthorize handles a 401 or 403 from an OAuth server: a refused access
// token is refreshed and the request sent again, once; then an
// interactive login, if there is one, runs and the request is sent again.
func (t *headerTransport) reauthorize(req *http.Request, resp *http.Response) (*http.Response, error) {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil // cannot send it again
	}
	if resp.StatusCode == http.StatusUnauthorized {
		var refused string
		if resp.Request != nil {
			refused = strings.TrimPrefix(resp.Request.Header.Get("Authorization"), "Bearer ")
		}
		t.tokens.Invalidate(refused)
		if _, err := t.tokens.Token(); err == nil {
			drain(resp)
			var err error
			if resp, err = t.send(req); err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
				return resp, err
			}
		}
	}
	if t.authorize == nil {
		return resp, nil
	}
	if err := t.authorize(req.Context(), resp); err != nil {
		t.mu.Lock()
		t.authReason = fmt.Sprintf("the OAuth login failed: %v", err)
		t.mu.Unlock()
		return resp, nil
	}
	drain(resp)
	return t.send(req)
}

// exchangeAgain handles a 401 to a token exchange gave: that token is
// forgotten, and the request sent again, once, with one exchanged anew
// (the issuer may have revoked it, or the upstream restarted with other
// keys, before it expired).
func (t *headerTransport) exchangeAgain(req *http.Request, resp *http.Response) (*http.Response, error) {
	t.exchangeRefused()
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil // cannot send it again; the next request exchanges anew
	}
	drain(resp)
	return t.send(req)
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// loginChanged reports whether tokens now give an access token other
// than the one last sent (none, for a user who had not logged in): a new
// login, worth a connect after a refusal. A token refused stays refused
// until the login changes, so that a server is not asked again and again
// with it.
func (t *headerTransport) loginChanged() bool {
	tok, err := t.tokens.Token()
	if err != nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return tok.AccessToken != t.sent
}

// refusal says why the server refused us, and what to do about it.
func (t *headerTransport) refusal(resp *http.Response) string {
	c := resp.Header.Get("WWW-Authenticate")
	if t.tokens != nil {
		why := "the server refused the stored login"
		switch {
		case resp.StatusCode == http.StatusForbidden && strings.Contains(c, "insufficient_scope"):
			why = "the server needs more scope"
			if scope := challengeParam(c, "scope"); scope != "" {
				why += " (" + scope + ")"
			}
		case resp.StatusCode == http.StatusUnauthorized:
			why = "the server asks for an OAuth login"
		}
		return fmt.Sprintf("%s; run: mcpgw login %s", why, t.server)
	}
	reason := "the server answered 401 Unauthorized"
	if c != "" {
		reason += " (WWW-Authenticate: " + c + ")"
	}
	switch {
	case t.exchange != nil:
		reason += " to the user's exchanged token, and to one exchanged anew"
	case t.bearer == "":
		reason += "; no bearer token is configured (bearerToken or bearerTokenEnv)"
	}
	return reason
}

// challengeParam returns a parameter of a WWW-Authenticate challenge.
func challengeParam(challenge, name string) string {
	i := strings.Index(challenge, name+"=")
	if i < 0 {
		return ""
	}
	v := challenge[i+len(name)+1:]
	if strings.HasPrefix(v, `"`) {
		if j := strings.IndexByte(v[1:], '"'); j >= 0 {
			return v[1 : j+1]
		}
		return v[1:]
	}
	if j := strings.IndexAny(v, ", "); j >= 0 {
		return v[:j]
	}
	return v
}

// takeStatus returns and clears the last error status.
func (t *headerTransport) takeStatus() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.lastStatus
	t.lastStatus = 0
	return s
}

// unauthorized returns why the server refused us, if it answered 401.
func (t *headerTransport) unauthorized() (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.authReason, t.authReason != ""
}

// newHeaderTransport builds the transport of srv, whose secrets are
// resolved (resolveSecrets).
func (p *Pool) newHeaderTransport(u *Upstream, srv *registry.Server) *headerTransport {
	t := &headerTransport{up: u, base: p.httpBase, headers: srv.Headers, bearer: srv.BearerToken, server: srv.Name}
	if srv.TokenExchange != nil {
		var key string
		if u != nil {
			key = u.session
		}
		t.exchange = func(ctx context.Context) (string, error) {
			if p.opts.Exchange == nil {
				return "", errors.New("token exchange is not available in this process")
			}
			return p.opts.Exchange(ctx, srv, key)
		}
		t.exchangeRefused = func() {
			if p.opts.ExchangeRefused != nil {
				p.opts.ExchangeRefused(srv, key)
			}
		}
	}
	if srv.Auth == registry.AuthOAuth && p.opts.UserLogins != nil {
		var key string
		if u != nil {
			key = u.session
		}
		if store := p.opts.UserLogins(srv, key); store != nil {
			// Whoever key stands for, with their own login only.
			t.tokens = p.userSource(store, srv, key)
			if u != nil {
				u.mu.Lock()
				u.authRetry = t.loginChanged
				u.mu.Unlock()
				t.wanted = func(scopes []string) {
					if _, err := store.NoteWanted(srv.URL, scopes); err != nil {
						u.logger().Warn("noting the scopes a server asks for", "server", srv.Name, "err", err)
					}
				}
			}
			return t
		}
	}
	if srv.Auth == registry.AuthOAuth {
		t.tokens = p.oauthSource(srv)
		if store := p.opts.OAuthStore; store != nil && u != nil {
			t.wanted = func(scopes []string) {
				if added, err := store.NoteWanted(srv.URL, scopes); err != nil {
					u.logger().Warn("noting the scopes a server asks for", "server", srv.Name, "err", err)
				} else if added {
					u.logger().Info("the server asks for more scope; the next login asks for it", "server", srv.Name, "scopes", scopes)
				}
			}
		}
		switch {
		case srv.OAuth != nil && srv.OAuth.GrantType == registry.GrantClientCredentials && p.opts.OAuthStore != nil:
			// A machine account: no person involved, so the daemon
			// gets its tokens itself.
			t.authorize = func(ctx context.Context, challenge *http.Response) error {
				_, err := oauth.ClientCredentials(ctx, oauth.LoginOptions{
					ServerURL: srv.URL, Client: OAuthClient(srv), Store: p.opts.OAuthStore,
					Challenge: challenge,
				})
				return err
			}
		case p.opts.Authorize != nil:
			t.authorize = func(ctx context.Context, challenge *http.Response) error {
				return p.opts.Authorize(ctx, srv, challenge)
			}
		}
	}
	return t
}

// dialHTTP connects to srv.URL: Streamable HTTP first (or the transport that
// worked last time), and the other one when the first is answered with
// 400, 404 or 405, which is how servers that predate Streamable HTTP
// answer its POST. A connect pinned to the revision the last one learned
// (initialize straight away) that is answered so asks once more unpinned,
// server/discover first: the server may have moved on to protocol
// 2026-07-28 alone, which answers initialize 400.
func (p *Pool) dialHTTP(ctx context.Context, u *Upstream, srv *registry.Server, o dialOptions) (*session, error) {
	ht := p.newHeaderTransport(u, srv)
	order := []string{kindStreamable, kindSSE}
	if o.httpKind == kindSSE {
		order = []string{kindSSE, kindStreamable}
	}
	var tries []dialOptions // each with the transport kind in httpKind
	for _, kind := range order {
		try := o
		try.httpKind = kind
		tries = append(tries, try)
		if kind == kindStreamable && o.pinned {
			try.pinned = false
			tries = append(tries, try)
		}
	}
	var errs []error
	for i, try := range tries {
		s, err := p.dialHTTPKind(ctx, srv, try, ht, try.httpKind)
		if err == nil {
			return s, nil
		}
		if reason, ok := ht.unauthorized(); ok {
			return nil, &AuthError{Server: srv.Name, Reason: reason}
		}
		if xe := (*ExchangeError)(nil); errors.As(err, &xe) {
			return nil, xe // the user's token, not the transport, is what failed
		}
		what := try.httpKind
		if o.pinned && !try.pinned {
			what += " (unpinned)"
		}
		errs = append(errs, fmt.Errorf("%s: %w", what, err))
		st := ht.takeStatus()
		if i == len(tries)-1 || ctx.Err() != nil || (st != http.StatusBadRequest && st != http.StatusNotFound && st != http.StatusMethodNotAllowed) {
			break
		}
		u.logger().Debug("upstream rejected transport; trying the next", "transport", try.httpKind, "pinned", try.pinned, "status", st)
	}
	return nil, &maskedError{
		err:  fmt.Errorf("connecting to upstream %q at %s: %w", srv.Name, srv.URL, errors.Join(errs...)),
		url:  srv.URL,
		mask: registry.MaskURL(srv.URL),
	}
}

// maskedError shows err with a URL's secrets (a password, an api_key query
// value) masked: connect errors reach logs, status and the model. errors.Is
// and As still see err.
type maskedError struct {
	err       error
	url, mask string
}

func (e *maskedError) Error() string {
	msg := e.err.Error()
	if e.url != e.mask {
		msg = strings.ReplaceAll(msg, e.url, e.mask)
		// The SDK's errors quote the request URL, which may differ from the
		// configured one only by escaping; mask its query too.
		if i, j := strings.Index(e.url, "?"), strings.Index(e.mask, "?"); i >= 0 && j >= 0 {
			msg = strings.ReplaceAll(msg, e.url[i:], e.mask[j:])
		}
	}
	return msg
}

func (e *maskedError) Unwrap() error { return e.err }

func (p *Pool) dialHTTPKind(ctx context.Context, srv *registry.Server, o dialOptions, ht *headerTransport, kind string) (*session, error) {
	hc := &http.Client{Transport: ht}
	var (
		t    mcp.Transport
		conn func() mcp.Connection
	)
	switch kind {
	case kindStreamable:
		st := &keptTransport{Transport: &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc}}
		t, conn = st, func() mcp.Connection { return st.conn }
	default:
		st := &sseTransport{inner: mcp.SSEClientTransport{Endpoint: srv.URL, HTTPClient: hc}}
		t, conn = st, func() mcp.Connection { return st.conn }
	}
	cs, err := o.client.Connect(ctx, t, o.sessionOptions())
	if err != nil {
		return nil, err
	}
	return &session{cs: cs, kind: kind, http: ht, conn: conn(), pinned: o.pinned}, nil
}

// keptTransport remembers the Connection its Transport returned, so a
// session can be torn down without waiting for in-flight calls. (Wrapping
// the Connection instead would hide SDK-internal interfaces it implements.)
type keptTransport struct {
	mcp.Transport
	conn mcp.Connection
}

func (t *keptTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	t.conn = c
	return c, err
}

// sseTransport is mcp.SSEClientTransport with the hanging GET tied to the
// connection's lifetime instead of the connect context: the SDK issues the
// GET with the context passed to Connect, which is bounded by the startup
// timeout. ctx still bounds the connect itself.
type sseTransport struct {
	inner mcp.SSEClientTransport
	conn  mcp.Connection
}

func (t *sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	c, err := t.inner.Connect(life)
	if !stop() { // ctx ended during the connect, and cancelled life
		if c != nil {
			c.Close()
		}
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	if err != nil {
		cancel()
		return nil, err
	}
	t.conn = &cancelConn{Connection: c, cancel: cancel}
	return t.conn, nil
}

// cancelConn cancels the GET's context when closed.
type cancelConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *cancelConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// OAuthClient is how mcpgw identifies itself to srv's authorization
// server: its "oauth" block.
func OAuthClient(srv *registry.Server) oauth.Client {
	o := srv.OAuth
	if o == nil {
		return oauth.Client{}
	}
	return oauth.Client{
		ClientID: o.ClientID, ClientSecret: o.ClientSecret, ClientMetadataURL: o.ClientMetadataURL,
		Scope: o.Scope, RedirectURI: o.RedirectURI, AuthorizationParams: o.AuthorizationParams,
		AllowPrivateNetwork: o.AllowPrivateNetwork,
	}
}

// LogIn stores a login to srv in store: the client credentials grant when
// its oauth block asks for it, else the authorization code flow through
// browser.
func LogIn(ctx context.Context, srv *registry.Server, store *oauth.Store, browser oauth.Browser) error {
	opts := oauth.LoginOptions{ServerURL: srv.URL, Client: OAuthClient(srv), Store: store}
	var err error
	if srv.OAuth != nil && srv.OAuth.GrantType == registry.GrantClientCredentials {
		_, err = oauth.ClientCredentials(ctx, opts)
	} else {
		opts.Browser = browser
		_, err = oauth.Login(ctx, opts)
	}
	return err
}
