package transport

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/statuspage"
)

// fakePage is a statuspage.Hub that counts the requests that reach it:
// the page's (by Daemon, which GET / asks once) and its actions'.
type fakePage struct {
	mu    sync.Mutex
	calls int
}

func (p *fakePage) called() {
	p.mu.Lock()
	p.calls++
	p.mu.Unlock()
}

func (p *fakePage) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

func (p *fakePage) Daemon(context.Context) statuspage.DaemonFacts {
	p.called()
	return statuspage.DaemonFacts{}
}
func (p *fakePage) Servers(context.Context) []statuspage.ServerFacts     { return nil }
func (p *fakePage) Tools(context.Context, string) []statuspage.ToolFacts { return nil }
func (p *fakePage) Log(string) []string                                  { return nil }
func (p *fakePage) Stderr(context.Context, string, int) []string         { return nil }
func (p *fakePage) Sessions(context.Context) []statuspage.SessionFacts {
	return []statuspage.SessionFacts{{Project: &statuspage.ProjectFacts{Dir: "/p", Servers: []statuspage.ProjectServer{{Name: "x"}}}}}
}
func (p *fakePage) Search(context.Context, string, int) []statuspage.Hit { return nil }
func (p *fakePage) Approvals(context.Context) []api.PendingApproval      { return nil }
func (p *fakePage) Reconnect(context.Context, string) error              { p.called(); return nil }
func (p *fakePage) SetEnabled(context.Context, string, bool) error       { p.called(); return nil }
func (p *fakePage) Trust(string) (string, error)                         { p.called(); return "trusted /p", nil }
func (p *fakePage) Refuse(string)                                        { p.called() }
func (p *fakePage) Login(context.Context, string) (string, error) {
	p.called()
	return "https://auth.example/authorize", nil
}
func (p *fakePage) Decide(context.Context, string, string, string) (api.PendingApproval, error) {
	p.called()
	return api.PendingApproval{}, nil
}

const (
	initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	fastCallBody   = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	daemonAddr     = "127.0.0.1:7332"
)

// surface is a daemon's HTTP surface on fakes: its hub knows the
// initialized session "s1", whose tool calls take the fast path.
type surface struct {
	h        http.Handler
	tr       *Transports
	hub      *fakeHub
	page     *fakePage
	reloads  int
	statuses int
	mu       sync.Mutex
}

func newSurface(token string) *surface { return newSurfaceWith(token, Options{Version: "test"}, "") }

// newSurfaceWith is newSurface with transports of o, and session s1
// opened by user.
func newSurfaceWith(token string, o Options, user string) *surface {
	s := &surface{
		hub:  &fakeHub{ss: &fakeSession{protocol: "2025-06-18", seen: time.Now(), fast: true, user: user}, server: mcp.NewServer(&mcp.Implementation{Name: "fake"}, nil)},
		page: &fakePage{},
	}
	s.tr = New(s.hub, o)
	s.h = s.tr.Handler(&HTTPOptions{Token: token, Gatherer: prometheus.NewRegistry(), Reload: func() error {
		s.mu.Lock()
		s.reloads++
		s.mu.Unlock()
		return nil
	}}, Control{
		Status: func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.statuses++
			s.mu.Unlock()
			_, _ = w.Write([]byte("status\n"))
		},
		Page: s.page,
	})
	return s
}

// reached says how many times the request reached past the protection:
// the hub, the page's hub, the status or the reload.
func (s *surface) reached() int {
	opened, _, canceled := s.hub.record()
	calls, _ := s.hub.ss.record()
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(opened) + len(canceled) + len(calls) + s.page.Calls() + s.reloads + s.statuses
}

// withPeer sets who a request's connection comes from (see ConnContext):
// a uid, or -1 for a peer that cannot be told.
func withPeer(r *http.Request, uid int) *http.Request {
	p := peer{uid: uid}
	if uid < 0 {
		p.err = deploy.ErrPeerUnknown
	}
	ctx := context.WithValue(r.Context(), peerKey{}, p)
	local, _ := net.ResolveTCPAddr("tcp", daemonAddr)
	ctx = context.WithValue(ctx, http.LocalAddrContextKey, local)
	return r.WithContext(ctx)
}

// route is a request to one of the daemon's protected routes, and what
// its answer says when it got through.
type route struct {
	name, method, target, body string
	session                    string // Mcp-Session-Id
	want                       string // in the answer's body
}

var protectedRoutes = []route{
	{name: "status", method: "GET", target: "/-/status", want: "status\n"},
	{name: "page", method: "GET", target: "/", want: "<title>mcpgw"},
	{name: "page action", method: "POST", target: "/-/connect?server=a", want: "connected a\n"},
	{name: "disable", method: "POST", target: "/-/disable?server=a", want: "disabled a until the daemon stops\n"},
	{name: "enable", method: "POST", target: "/-/enable?server=a", want: "enabled a until the daemon stops\n"},
	{name: "trust", method: "POST", target: "/-/trust?dir=/p", want: "trusted /p\n"},
	{name: "refuse", method: "POST", target: "/-/refuse?dir=/p", want: "refused /p until the daemon stops"},
	{name: "login", method: "POST", target: "/-/login?server=a", want: "https://auth.example/authorize\n"},
	{name: "approve", method: "POST", target: "/-/approve?id=a1", want: "allowed"},
	{name: "reload", method: "POST", target: "/-/reload", want: "reloaded\n"},
	{name: "mcp initialize", method: "POST", target: "/mcp", body: initializeBody, want: `"protocolVersion":"2025-06-18"`},
	{name: "mcp fast call", method: "POST", target: "/mcp", body: fastCallBody, session: "s1", want: `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`},
}

func (rt route) request(host string) *http.Request {
	r := httptest.NewRequest(rt.method, rt.target, strings.NewReader(rt.body))
	r.Host = host
	if strings.HasPrefix(rt.target, "/mcp") {
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Content-Type", "application/json")
	}
	if rt.session != "" {
		r.Header.Set("Mcp-Session-Id", rt.session)
	}
	return r
}

// Every route but /healthz and /metrics is the owner's, or a token's
// holder's when the daemon has one; refused, a request reaches nothing
// behind the protection.
func TestProtection(t *testing.T) {
	t.Parallel()
	me := os.Getuid()
	for _, c := range []struct {
		name      string
		token     string
		auth      string // Authorization
		uid       int
		status    int    // when refused
		refusal   string // in the refusal's body
		pageAsked bool   // GET / answers a refusal with the token form
	}{
		{name: "owner", uid: me},
		{name: "another user", uid: me + 1, status: 403, refusal: "belongs to uid"},
		{name: "an unknown user", uid: -1, status: 403, refusal: "cannot tell which user is connecting"},
		{name: "no token", token: "s3cret", uid: me, status: 401, refusal: "missing or wrong bearer token", pageAsked: true},
		{name: "a wrong token", token: "s3cret", auth: "Bearer s3cre", uid: me, status: 401, refusal: "missing or wrong bearer token", pageAsked: true},
		{name: "another scheme", token: "s3cret", auth: "Basic s3cret", uid: me, status: 401, refusal: "missing or wrong bearer token", pageAsked: true},
		{name: "the token", token: "s3cret", auth: "Bearer s3cret", uid: me},
		{name: "the token, from another user", token: "s3cret", auth: "Bearer s3cret", uid: me + 1, status: 403, refusal: "belongs to uid"},
	} {
		for _, rt := range protectedRoutes {
			t.Run(c.name+"/"+rt.name, func(t *testing.T) {
				t.Parallel()
				s := newSurface(c.token)
				r := rt.request(daemonAddr)
				if c.auth != "" {
					r.Header.Set("Authorization", c.auth)
				}
				w := httptest.NewRecorder()
				s.h.ServeHTTP(w, withPeer(r, c.uid))
				body := w.Body.String()
				switch {
				case c.status == 0:
					if w.Code != 200 || !strings.Contains(body, rt.want) || s.reached() != 1 {
						t.Errorf("%d %q, reached %d; want 200 with %q", w.Code, body, s.reached(), rt.want)
					}
				case c.pageAsked && rt.target == "/":
					if w.Code != c.status || !strings.Contains(body, `<input type="password" name="token"`) || s.reached() != 0 {
						t.Errorf("%d %q, reached %d; want %d with the token form", w.Code, body, s.reached(), c.status)
					}
				default:
					if w.Code != c.status || !strings.Contains(body, c.refusal) || s.reached() != 0 {
						t.Errorf("%d %q, reached %d; want %d with %q", w.Code, body, s.reached(), c.status, c.refusal)
					}
					if c.status == 401 && w.Header().Get("WWW-Authenticate") != `Bearer realm="mcpgw"` {
						t.Errorf("WWW-Authenticate %q", w.Header().Get("WWW-Authenticate"))
					}
				}
			})
		}
	}
}

// A page reached under a name that is not this machine's (DNS rebinding:
// evil.example resolving to 127.0.0.1) or from another site's page is
// refused on every route, before it reaches anything; loopback names
// are this machine.
func TestRebinding(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name              string
		host              string
		origin, fetchSite string
		refused           bool
		onlyControl       bool // the go-sdk, in front of /mcp, knows fewer names
	}{
		{name: "foreign Host", host: "evil.example:7332", refused: true},
		{name: "foreign Host, same origin", host: "evil.example:7332", origin: "http://evil.example:7332", refused: true},
		{name: "foreign Host without port", host: "evil.example", refused: true},
		{name: "a LAN address", host: "192.168.1.20:7332", refused: true},
		{name: "foreign Origin", host: daemonAddr, origin: "http://evil.example", refused: true},
		{name: "cross-site fetch", host: daemonAddr, fetchSite: "cross-site", refused: true},
		{name: "127.0.0.1", host: daemonAddr, origin: "http://" + daemonAddr},
		{name: "localhost", host: "localhost:7332", origin: "http://localhost:7332", fetchSite: "same-origin"},
		{name: "::1", host: "[::1]:7332"},
		{name: "localhost without port", host: "localhost"},
		{name: "127.1", host: "127.1:7332", onlyControl: true},
		{name: "LOCALHOST", host: "LOCALHOST:7332", onlyControl: true},
	} {
		for _, rt := range protectedRoutes {
			if c.onlyControl && strings.HasPrefix(rt.target, "/mcp") {
				continue
			}
			if rt.method == "GET" && c.host == daemonAddr && c.refused {
				// Cross-origin protection lets safe methods through: another
				// site cannot read the answer.
				continue
			}
			t.Run(c.name+"/"+rt.name, func(t *testing.T) {
				t.Parallel()
				s := newSurface("")
				r := rt.request(c.host)
				if c.origin != "" {
					r.Header.Set("Origin", c.origin)
				}
				if c.fetchSite != "" {
					r.Header.Set("Sec-Fetch-Site", c.fetchSite)
				}
				w := httptest.NewRecorder()
				s.h.ServeHTTP(w, withPeer(r, os.Getuid()))
				switch {
				case c.refused && (w.Code != http.StatusForbidden || s.reached() != 0):
					t.Errorf("%d %q, reached %d; want 403, nothing reached", w.Code, w.Body.String(), s.reached())
				case !c.refused && (w.Code != 200 || !strings.Contains(w.Body.String(), rt.want)):
					t.Errorf("%d %q; want 200 with %q", w.Code, w.Body.String(), rt.want)
				}
			})
		}
	}
}

// A DELETE of a session under a foreign Host ends nothing: its requests
// in flight go on.
func TestRebindingDelete(t *testing.T) {
	t.Parallel()
	s := newSurface("")
	r := httptest.NewRequest("DELETE", "/mcp", nil)
	r.Host = "evil.example:7332"
	r.Header.Set("Mcp-Session-Id", "s1")
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, withPeer(r, os.Getuid()))
	if _, _, canceled := s.hub.record(); w.Code != http.StatusForbidden || len(canceled) != 0 {
		t.Errorf("%d %q, canceled %q; want 403 and nothing canceled", w.Code, w.Body.String(), canceled)
	}
}

// /healthz is open to anyone and any name; /metrics to any local user,
// but not under a foreign name.
func TestOpenRoutes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		target, host string
		uid          int
		status       int
		want         string
	}{
		{"/healthz", daemonAddr, os.Getuid() + 1, 200, "ok\n"},
		{"/healthz", "evil.example", -1, 200, "ok\n"},
		{"/metrics", daemonAddr, os.Getuid() + 1, 200, ""},
		{"/metrics", "evil.example:7332", os.Getuid(), 403, "forbidden: non-local Host header\n"},
		{"/nothing", daemonAddr, os.Getuid(), 404, "404 page not found\n"},
	} {
		s := newSurface("s3cret")
		r := httptest.NewRequest("GET", c.target, nil)
		r.Host = c.host
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, withPeer(r, c.uid))
		if w.Code != c.status || c.want != "" && w.Body.String() != c.want {
			t.Errorf("GET %s (Host %s, uid %d): %d %q, want %d %q", c.target, c.host, c.uid, w.Code, w.Body.String(), c.status, c.want)
		}
	}
}

// Over a real loopback connection from this process, the owner check
// finds this user, whether the server looked the peer up once per
// connection (ConnContext) or not.
func TestOwnerOverLoopback(t *testing.T) {
	t.Parallel()
	for _, connContext := range []bool{true, false} {
		s := newSurface("")
		srv := httptest.NewUnstartedServer(s.h)
		if connContext {
			srv.Config.ConnContext = ConnContext
		}
		srv.Start()
		resp, err := srv.Client().Get(srv.URL + "/-/status")
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		_, _ = io.Copy(&b, resp.Body)
		resp.Body.Close()
		srv.Close()
		if resp.StatusCode != 200 || b.String() != "status\n" {
			t.Errorf("ConnContext %v: %d %q", connContext, resp.StatusCode, b.String())
		}
	}
}

// ConnContext finds the owner of a loopback connection's other end: this
// process's user for a connection it made.
func TestConnContext(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	p, _ := ConnContext(context.Background(), server).Value(peerKey{}).(peer)
	if p.err != nil || p.uid != os.Getuid() {
		t.Errorf("peer %+v, want uid %d", p, os.Getuid())
	}
}
