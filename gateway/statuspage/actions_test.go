package statuspage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/api"
)

// Each action reads its fields from the query or the form, makes the one
// Hub call it stands for with them, and answers: text for the CLI and
// scripts, a redirect back to the page for a browser's form post or
// navigation; a *Error with its own status, other errors with the
// action's.
func TestActions(t *testing.T) {
	t.Parallel()
	notFound := Errorf(http.StatusNotFound, "no server %q", "zeta")
	conflict := &Error{Status: http.StatusConflict, Msg: "logged in already"}
	failed := errors.New("dial tcp 127.0.0.1:9: connection refused")
	pending := api.PendingApproval{ID: "a1", Server: "github", Tool: "delete_repo"}
	for _, tc := range []struct {
		name         string
		method       string
		target       string
		body         string // form fields, sent as a form post when form is set
		form         bool
		navigate     bool // Sec-Fetch-Mode: navigate, a browser's navigation
		d            *fakeHub
		wantStatus   int
		wantBody     string // exact, unless wantLocation is set
		wantLocation string
		wantCalls    []string
	}{
		// POST /-/connect
		{name: "connect", method: "POST", target: "/-/connect?server=alpha",
			wantStatus: 200, wantBody: "connected alpha\n", wantCalls: []string{`Reconnect("alpha")`}},
		{name: "connect form", method: "POST", target: "/-/connect", body: "server=alpha", form: true,
			wantStatus: 303, wantLocation: "/#server-alpha", wantCalls: []string{`Reconnect("alpha")`}},
		{name: "connect navigation", method: "POST", target: "/-/connect?server=alpha", navigate: true,
			wantStatus: 303, wantLocation: "/#server-alpha", wantCalls: []string{`Reconnect("alpha")`}},
		{name: "connect unknown server", method: "POST", target: "/-/connect?server=zeta", d: &fakeHub{err: notFound},
			wantStatus: 404, wantBody: "no server \"zeta\"\n", wantCalls: []string{`Reconnect("zeta")`}},
		{name: "connect form, unknown server: the refusal, not the page", method: "POST", target: "/-/connect", body: "server=zeta", form: true,
			d: &fakeHub{err: fmt.Errorf("connecting: %w", notFound)}, wantStatus: 404, wantBody: "no server \"zeta\"\n", wantCalls: []string{`Reconnect("zeta")`}},
		{name: "connect fails", method: "POST", target: "/-/connect?server=alpha", d: &fakeHub{err: failed},
			wantStatus: 502, wantBody: failed.Error() + "\n", wantCalls: []string{`Reconnect("alpha")`}},
		{name: "connect form fails: the page shows it", method: "POST", target: "/-/connect", body: "server=alpha", form: true, d: &fakeHub{err: failed},
			wantStatus: 303, wantLocation: "/#server-alpha", wantCalls: []string{`Reconnect("alpha")`}},
		{name: "connect by GET", method: "GET", target: "/-/connect?server=alpha", wantStatus: 405},

		// POST /-/enable, /-/disable
		{name: "enable", method: "POST", target: "/-/enable?server=alpha",
			wantStatus: 200, wantBody: "enabled alpha until the daemon stops\n", wantCalls: []string{`SetEnabled("alpha", true)`}},
		{name: "disable", method: "POST", target: "/-/disable?server=alpha",
			wantStatus: 200, wantBody: "disabled alpha until the daemon stops\n", wantCalls: []string{`SetEnabled("alpha", false)`}},
		{name: "disable form", method: "POST", target: "/-/disable", body: "server=alpha", form: true,
			wantStatus: 303, wantLocation: "/#server-alpha", wantCalls: []string{`SetEnabled("alpha", false)`}},
		{name: "enable unknown server", method: "POST", target: "/-/enable?server=zeta", d: &fakeHub{err: notFound},
			wantStatus: 404, wantBody: "no server \"zeta\"\n", wantCalls: []string{`SetEnabled("zeta", true)`}},
		{name: "enable form, unknown server", method: "POST", target: "/-/enable", body: "server=zeta", form: true, d: &fakeHub{err: notFound},
			wantStatus: 404, wantBody: "no server \"zeta\"\n", wantCalls: []string{`SetEnabled("zeta", true)`}},
		{name: "disable fails otherwise", method: "POST", target: "/-/disable?server=alpha", d: &fakeHub{err: failed},
			wantStatus: 404, wantBody: failed.Error() + "\n", wantCalls: []string{`SetEnabled("alpha", false)`}},
		{name: "enable by GET", method: "GET", target: "/-/enable?server=alpha", wantStatus: 405},
		{name: "disable by GET", method: "GET", target: "/-/disable?server=alpha", wantStatus: 405},

		// POST /-/trust, /-/refuse: only a directory the page lists
		{name: "trust form", method: "POST", target: "/-/trust", body: "dir=%2Fhome%2Fu%2Fp", form: true, d: waiting(&fakeHub{}),
			wantStatus: 303, wantLocation: "/", wantCalls: []string{`Trust("/home/u/p")`}},
		{name: "trust", method: "POST", target: "/-/trust?dir=/home/u/p", d: waiting(&fakeHub{trustMsg: "trusted /home/u/p"}),
			wantStatus: 200, wantBody: "trusted /home/u/p\n", wantCalls: []string{`Trust("/home/u/p")`}},
		{name: "refuse", method: "POST", target: "/-/refuse?dir=/home/u/p", d: waiting(&fakeHub{}),
			wantStatus: 200, wantBody: "refused /home/u/p until the daemon stops; its servers do not start\n", wantCalls: []string{`Refuse("/home/u/p")`}},
		{name: "refuse form", method: "POST", target: "/-/refuse", body: "dir=%2Fhome%2Fu%2Fp", form: true, d: waiting(&fakeHub{}),
			wantStatus: 303, wantLocation: "/", wantCalls: []string{`Refuse("/home/u/p")`}},
		{name: "trust a directory not pending", method: "POST", target: "/-/trust?dir=/tmp", d: waiting(&fakeHub{}),
			wantStatus: 404, wantBody: "\"/tmp\" is not a project waiting for trust\n"},
		{name: "refuse a directory not pending", method: "POST", target: "/-/refuse", body: "dir=%2Ftmp", form: true, d: waiting(&fakeHub{}),
			wantStatus: 404, wantBody: "\"/tmp\" is not a project waiting for trust\n"},
		{name: "trust a project refused already", method: "POST", target: "/-/trust?dir=/home/u/p",
			d:          &fakeHub{sessions: []SessionFacts{{Project: &ProjectFacts{Dir: "/home/u/p", Refused: true, Servers: []ProjectServer{{Name: "db", Run: "db-mcp"}}}}}},
			wantStatus: 404, wantBody: "\"/home/u/p\" is not a project waiting for trust\n"},
		{name: "trust without a trust store", method: "POST", target: "/-/trust?dir=/home/u/p", d: waiting(&fakeHub{err: Errorf(http.StatusConflict, "no trust store")}),
			wantStatus: 409, wantBody: "no trust store\n", wantCalls: []string{`Trust("/home/u/p")`}},
		{name: "trust fails otherwise", method: "POST", target: "/-/trust?dir=/home/u/p", d: waiting(&fakeHub{err: failed}),
			wantStatus: 500, wantBody: failed.Error() + "\n", wantCalls: []string{`Trust("/home/u/p")`}},
		{name: "trust by GET", method: "GET", target: "/-/trust?dir=/home/u/p", wantStatus: 405},
		{name: "refuse by GET", method: "GET", target: "/-/refuse?dir=/home/u/p", wantStatus: 405},

		// POST /-/login
		{name: "login form", method: "POST", target: "/-/login", body: "server=gh", form: true, d: &fakeHub{authURL: "https://auth.example/authorize?state=x"},
			wantStatus: 303, wantLocation: "https://auth.example/authorize?state=x", wantCalls: []string{`Login("gh")`}},
		{name: "login", method: "POST", target: "/-/login?server=gh", d: &fakeHub{authURL: "https://auth.example/authorize?state=x"},
			wantStatus: 200, wantBody: "https://auth.example/authorize?state=x\n", wantCalls: []string{`Login("gh")`}},
		{name: "login refused", method: "POST", target: "/-/login", body: "server=gh", form: true, d: &fakeHub{err: conflict},
			wantStatus: 409, wantBody: "logged in already\n", wantCalls: []string{`Login("gh")`}},
		{name: "login fails", method: "POST", target: "/-/login?server=gh", d: &fakeHub{err: failed},
			wantStatus: 502, wantBody: failed.Error() + "\n", wantCalls: []string{`Login("gh")`}},
		{name: "login by GET", method: "GET", target: "/-/login?server=gh", wantStatus: 405},

		// GET /-/logs (TestLogs has the lines)
		{name: "logs of an unknown server", method: "GET", target: "/-/logs?server=zeta", d: &fakeHub{servers: []ServerFacts{{Name: "alpha"}}},
			wantStatus: 404, wantBody: "no server \"zeta\"\n"},
		{name: "logs by POST", method: "POST", target: "/-/logs?server=alpha", wantStatus: 405},

		// /-/approvals
		{name: "approvals by POST", method: "POST", target: "/-/approvals", wantStatus: 405},

		// POST /-/approve
		{name: "approve form", method: "POST", target: "/-/approve", body: "id=a1&decision=tool", form: true, d: &fakeHub{decided: pending},
			wantStatus: 303, wantLocation: "/#approvals", wantCalls: []string{`Decide("a1", "tool", "page")`}},
		{name: "approve: allow is once", method: "POST", target: "/-/approve?id=a1&decision=allow", d: &fakeHub{decided: pending},
			wantStatus: 200, wantBody: "allowed delete_repo on github (a1)\n", wantCalls: []string{`Decide("a1", "once", "page")`}},
		{name: "approve: no decision is once", method: "POST", target: "/-/approve?id=a1", d: &fakeHub{decided: pending},
			wantStatus: 200, wantBody: "allowed delete_repo on github (a1)\n", wantCalls: []string{`Decide("a1", "once", "page")`}},
		{name: "approve server, by the CLI", method: "POST", target: "/-/approve?id=a1&decision=server&by=cli", d: &fakeHub{decided: pending},
			wantStatus: 200, wantBody: "allowed delete_repo on github (a1)\n", wantCalls: []string{`Decide("a1", "server", "cli")`}},
		{name: "approve: by is page unless cli", method: "POST", target: "/-/approve?id=a1&decision=once&by=evil", d: &fakeHub{decided: pending},
			wantStatus: 200, wantBody: "allowed delete_repo on github (a1)\n", wantCalls: []string{`Decide("a1", "once", "page")`}},
		{name: "deny", method: "POST", target: "/-/approve?id=a1&decision=deny", d: &fakeHub{decided: pending},
			wantStatus: 200, wantBody: "denied delete_repo on github (a1)\n", wantCalls: []string{`Decide("a1", "deny", "page")`}},
		{name: "approve an unknown id", method: "POST", target: "/-/approve?id=zz&decision=once", d: &fakeHub{err: Errorf(404, "zz: no such approval")},
			wantStatus: 404, wantBody: "zz: no such approval\n", wantCalls: []string{`Decide("zz", "once", "page")`}},
		{name: "approve fails otherwise", method: "POST", target: "/-/approve?id=a1&decision=sometimes", d: &fakeHub{err: errors.New("unknown decision")},
			wantStatus: 400, wantBody: "unknown decision\n", wantCalls: []string{`Decide("a1", "sometimes", "page")`}},
		{name: "approve form, unknown id: the page shows it", method: "POST", target: "/-/approve", body: "id=zz&decision=deny", form: true, d: &fakeHub{err: Errorf(404, "zz: no such approval")},
			wantStatus: 303, wantLocation: "/#approvals", wantCalls: []string{`Decide("zz", "deny", "page")`}},
		{name: "approve by GET", method: "GET", target: "/-/approve?id=a1&decision=once", wantStatus: 405},

		// the page itself
		{name: "page by DELETE", method: "DELETE", target: "/", wantStatus: 405},
		{name: "no page elsewhere", method: "GET", target: "/other", wantStatus: 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := tc.d
			if d == nil {
				d = &fakeHub{}
			}
			r := request(tc.method, tc.target, tc.body, tc.form)
			if tc.navigate {
				r.Header.Set("Sec-Fetch-Mode", "navigate")
			}
			w := serve(d, r)
			if w.Code != tc.wantStatus {
				t.Errorf("status %d, want %d (body %q)", w.Code, tc.wantStatus, w.Body.String())
			}
			switch {
			case tc.wantLocation != "":
				if got := w.Header().Get("Location"); got != tc.wantLocation {
					t.Errorf("Location %q, want %q", got, tc.wantLocation)
				}
			case tc.wantBody != "":
				if w.Body.String() != tc.wantBody {
					t.Errorf("body %q, want %q", w.Body.String(), tc.wantBody)
				}
				if ct := w.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
					t.Errorf("Content-Type %q", ct)
				}
			}
			if got := d.Actions(); !slices.Equal(got, tc.wantCalls) {
				t.Errorf("actions %q, want %q", got, tc.wantCalls)
			}
		})
	}
}

// waiting is h with a session in /home/u/p, a project whose server waits
// for trust.
func waiting(h *fakeHub) *fakeHub {
	h.sessions = append(h.sessions, SessionFacts{Dir: "/home/u/p",
		Project: &ProjectFacts{Dir: "/home/u/p", Servers: []ProjectServer{{Name: "db", Run: "db-mcp --port 5"}}}})
	return h
}

// GET /-/logs?server=NAME is the daemon's lines about the server — for a
// name that shares its upstream, merged by time with the upstream's —
// then its process's last 50 stderr lines, marked; a server that is off
// has no process to ask.
func TestLogs(t *testing.T) {
	t.Parallel()
	stderr := make([]string, 60)
	for i := range stderr {
		stderr[i] = fmt.Sprintf("line %d", i)
	}
	h := &fakeHub{
		servers: []ServerFacts{
			{Name: "gh", Enabled: true, Upstream: &UpstreamFacts{Name: "github", Aliases: []string{"gh"}}},
			{Name: "off"},
			{Name: "proj", Enabled: true, Untrusted: true},
		},
		logs: map[string][]string{
			"gh":     {"10:00:02 INFO called", "10:00:04 INFO called again"},
			"github": {"10:00:01 INFO connected", "10:00:03 WARN slow", "10:00:05 INFO closed"},
			"off":    {"10:00:00 INFO server disabled from the status page"},
		},
		stderr: map[string][]string{"gh": stderr, "off": {"never read"}, "proj": {"never read"}},
	}
	var want strings.Builder
	want.WriteString("10:00:01 INFO connected\n10:00:02 INFO called\n10:00:03 WARN slow\n10:00:04 INFO called again\n10:00:05 INFO closed\n")
	for _, l := range stderr[10:] {
		want.WriteString("stderr: " + l + "\n")
	}
	for _, tc := range []struct{ server, want string }{
		{"gh", want.String()},
		{"off", "10:00:00 INFO server disabled from the status page\n"},
		{"proj", ""},
	} {
		w := serve(h, request("GET", "/-/logs?server="+tc.server, "", false))
		if w.Code != 200 || w.Body.String() != tc.want || w.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("logs of %s: %d %q, want\n%q", tc.server, w.Code, w.Body.String(), tc.want)
		}
	}
	if n := strings.Count(strings.Join(h.Calls(), " "), "Stderr("); n != 1 {
		t.Errorf("Stderr asked %d times, want once (gh): %q", n, h.Calls())
	}
}

// A login whose request ends while the daemon waits for it answers
// nothing: its client has gone.
func TestLoginCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := &fakeHub{err: context.Canceled}
	w := serve(d, request("POST", "/-/login?server=gh", "", false).WithContext(ctx))
	if w.Body.Len() != 0 || w.Header().Get("Location") != "" {
		t.Errorf("answered %d %q", w.Code, w.Body.String())
	}
	if got := d.Calls(); !slices.Equal(got, []string{`Login("gh")`}) {
		t.Errorf("calls %q", got)
	}
}

// GET /-/approvals is the pending approvals as JSON, as `mcpgw approve`
// reads them.
func TestApprovalsList(t *testing.T) {
	t.Parallel()
	for _, want := range [][]api.PendingApproval{
		nil,
		{{ID: "a1", Session: "s1", Server: "github", Tool: "delete_repo", Args: `{"repo":"x"}`, Rule: "approveTools"},
			{ID: "a2", Session: "s2", Server: "fs", Tool: "rm"}},
	} {
		d := &fakeHub{approvals: want}
		w := serve(d, request("GET", "/-/approvals", "", false))
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%d %s", w.Code, w.Header().Get("Content-Type"))
		}
		var got []api.PendingApproval
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("%v: %q", err, w.Body.String())
		}
		if len(got) != len(want) || len(got) > 0 && (got[0] != want[0] || got[1] != want[1]) {
			t.Errorf("got %+v, want %+v", got, want)
		}
		if calls := d.Calls(); !slices.Equal(calls, []string{"Approvals()"}) {
			t.Errorf("calls %q", calls)
		}
	}
}

// routes are every route Register adds, with a request each accepts.
var routes = []struct{ method, target string }{
	{"GET", "/"},
	{"POST", "/"},
	{"POST", "/-/connect?server=a"},
	{"POST", "/-/enable?server=a"},
	{"POST", "/-/disable?server=a"},
	{"POST", "/-/trust?dir=/p"},
	{"POST", "/-/refuse?dir=/p"},
	{"POST", "/-/login?server=a"},
	{"GET", "/-/logs?server=a"},
	{"GET", "/-/approvals"},
	{"POST", "/-/approve?id=a1"},
}

// Every route goes through protect: one that refuses leaves the hub
// untouched, whatever the route; one that lets through reaches it.
func TestEveryRouteProtected(t *testing.T) {
	t.Parallel()
	refuse := func(http.HandlerFunc) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "refused", http.StatusForbidden)
		})
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.target, func(t *testing.T) {
			t.Parallel()
			d := &fakeHub{servers: []ServerFacts{{Name: "a", Enabled: true}},
				sessions: []SessionFacts{{Project: &ProjectFacts{Dir: "/p", Servers: []ProjectServer{{Name: "x", Run: "x-mcp"}}}}}}
			mux := http.NewServeMux()
			Register(mux, d, refuse)
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, request(rt.method, rt.target, "", false))
			if w.Code != http.StatusForbidden || w.Body.String() != "refused\n" || len(d.Calls()) != 0 {
				t.Errorf("refused route answered %d %q, calls %q", w.Code, w.Body.String(), d.Calls())
			}
			w = serve(d, request(rt.method, rt.target, "", false))
			if w.Code == http.StatusForbidden || w.Code == http.StatusNotFound || w.Code == http.StatusMethodNotAllowed || len(d.Calls()) == 0 {
				t.Errorf("open route answered %d %q, calls %q", w.Code, w.Body.String(), d.Calls())
			}
		})
	}
}

// Form posts are told apart by their Content-Type exactly, or by a
// browser's navigation.
func TestIsForm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		contentType, fetchMode string
		want                   bool
	}{
		{"application/x-www-form-urlencoded", "", true},
		{"", "navigate", true},
		{"application/json", "navigate", true},
		{"application/json", "cors", false},
		{"multipart/form-data; boundary=x", "", false},
		{"", "", false},
	} {
		r := request("POST", "/-/connect", "", false)
		if tc.contentType != "" {
			r.Header.Set("Content-Type", tc.contentType)
		}
		if tc.fetchMode != "" {
			r.Header.Set("Sec-Fetch-Mode", tc.fetchMode)
		}
		if got := IsForm(r); got != tc.want {
			t.Errorf("IsForm(Content-Type %q, Sec-Fetch-Mode %q) = %v, want %v", tc.contentType, tc.fetchMode, got, tc.want)
		}
	}
}
