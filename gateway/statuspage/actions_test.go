package statuspage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/api"
)

// Each action reads its fields from the query or the form, makes the one
// Daemon call it stands for with them, and answers: text for the CLI and
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
		d            *fakeDaemon
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
		{name: "connect unknown server", method: "POST", target: "/-/connect?server=zeta", d: &fakeDaemon{err: notFound},
			wantStatus: 404, wantBody: "no server \"zeta\"\n", wantCalls: []string{`Reconnect("zeta")`}},
		{name: "connect form, unknown server: the refusal, not the page", method: "POST", target: "/-/connect", body: "server=zeta", form: true,
			d: &fakeDaemon{err: fmt.Errorf("connecting: %w", notFound)}, wantStatus: 404, wantBody: "no server \"zeta\"\n", wantCalls: []string{`Reconnect("zeta")`}},
		{name: "connect fails", method: "POST", target: "/-/connect?server=alpha", d: &fakeDaemon{err: failed},
			wantStatus: 502, wantBody: failed.Error() + "\n", wantCalls: []string{`Reconnect("alpha")`}},
		{name: "connect form fails: the page shows it", method: "POST", target: "/-/connect", body: "server=alpha", form: true, d: &fakeDaemon{err: failed},
			wantStatus: 303, wantLocation: "/#server-alpha", wantCalls: []string{`Reconnect("alpha")`}},
		{name: "connect by GET", method: "GET", target: "/-/connect?server=alpha", wantStatus: 405},

		// POST /-/enable, /-/disable
		{name: "enable", method: "POST", target: "/-/enable?server=alpha",
			wantStatus: 200, wantBody: "enabled alpha until the daemon stops\n", wantCalls: []string{`SetEnabled("alpha", true)`}},
		{name: "disable", method: "POST", target: "/-/disable?server=alpha",
			wantStatus: 200, wantBody: "disabled alpha until the daemon stops\n", wantCalls: []string{`SetEnabled("alpha", false)`}},
		{name: "disable form", method: "POST", target: "/-/disable", body: "server=alpha", form: true,
			wantStatus: 303, wantLocation: "/#server-alpha", wantCalls: []string{`SetEnabled("alpha", false)`}},
		{name: "enable unknown server", method: "POST", target: "/-/enable?server=zeta", d: &fakeDaemon{err: notFound},
			wantStatus: 404, wantBody: "no server \"zeta\"\n", wantCalls: []string{`SetEnabled("zeta", true)`}},
		{name: "enable form, unknown server", method: "POST", target: "/-/enable", body: "server=zeta", form: true, d: &fakeDaemon{err: notFound},
			wantStatus: 404, wantBody: "no server \"zeta\"\n", wantCalls: []string{`SetEnabled("zeta", true)`}},
		{name: "disable fails otherwise", method: "POST", target: "/-/disable?server=alpha", d: &fakeDaemon{err: failed},
			wantStatus: 404, wantBody: failed.Error() + "\n", wantCalls: []string{`SetEnabled("alpha", false)`}},
		{name: "enable by GET", method: "GET", target: "/-/enable?server=alpha", wantStatus: 405},
		{name: "disable by GET", method: "GET", target: "/-/disable?server=alpha", wantStatus: 405},

		// POST /-/trust, /-/refuse
		{name: "trust form", method: "POST", target: "/-/trust", body: "dir=%2Fhome%2Fu%2Fp", form: true,
			wantStatus: 303, wantLocation: "/", wantCalls: []string{`TrustProject("/home/u/p", true)`}},
		{name: "refuse", method: "POST", target: "/-/refuse?dir=/home/u/p", d: &fakeDaemon{trustMsg: "refused /home/u/p until the daemon stops"},
			wantStatus: 200, wantBody: "refused /home/u/p until the daemon stops\n", wantCalls: []string{`TrustProject("/home/u/p", false)`}},
		{name: "trust a directory not pending", method: "POST", target: "/-/trust?dir=/tmp", d: &fakeDaemon{err: Errorf(404, "%q is not a project waiting for trust", "/tmp")},
			wantStatus: 404, wantBody: "\"/tmp\" is not a project waiting for trust\n", wantCalls: []string{`TrustProject("/tmp", true)`}},
		{name: "trust fails otherwise", method: "POST", target: "/-/trust?dir=/home/u/p", d: &fakeDaemon{err: failed},
			wantStatus: 500, wantBody: failed.Error() + "\n", wantCalls: []string{`TrustProject("/home/u/p", true)`}},
		{name: "trust by GET", method: "GET", target: "/-/trust?dir=/home/u/p", wantStatus: 405},
		{name: "refuse by GET", method: "GET", target: "/-/refuse?dir=/home/u/p", wantStatus: 405},

		// POST /-/login
		{name: "login form", method: "POST", target: "/-/login", body: "server=gh", form: true, d: &fakeDaemon{authURL: "https://auth.example/authorize?state=x"},
			wantStatus: 303, wantLocation: "https://auth.example/authorize?state=x", wantCalls: []string{`Login("gh")`}},
		{name: "login", method: "POST", target: "/-/login?server=gh", d: &fakeDaemon{authURL: "https://auth.example/authorize?state=x"},
			wantStatus: 200, wantBody: "https://auth.example/authorize?state=x\n", wantCalls: []string{`Login("gh")`}},
		{name: "login refused", method: "POST", target: "/-/login", body: "server=gh", form: true, d: &fakeDaemon{err: conflict},
			wantStatus: 409, wantBody: "logged in already\n", wantCalls: []string{`Login("gh")`}},
		{name: "login fails", method: "POST", target: "/-/login?server=gh", d: &fakeDaemon{err: failed},
			wantStatus: 502, wantBody: failed.Error() + "\n", wantCalls: []string{`Login("gh")`}},
		{name: "login by GET", method: "GET", target: "/-/login?server=gh", wantStatus: 405},

		// GET /-/logs
		{name: "logs", method: "GET", target: "/-/logs?server=alpha", d: &fakeDaemon{logs: []string{"connected", "stderr: boom"}},
			wantStatus: 200, wantBody: "connected\nstderr: boom\n", wantCalls: []string{`ServerLog("alpha")`}},
		{name: "logs of an unknown server", method: "GET", target: "/-/logs?server=zeta", d: &fakeDaemon{err: notFound},
			wantStatus: 404, wantBody: "no server \"zeta\"\n", wantCalls: []string{`ServerLog("zeta")`}},
		{name: "logs fail otherwise", method: "GET", target: "/-/logs?server=alpha", d: &fakeDaemon{err: failed},
			wantStatus: 404, wantBody: failed.Error() + "\n", wantCalls: []string{`ServerLog("alpha")`}},
		{name: "logs by POST", method: "POST", target: "/-/logs?server=alpha", wantStatus: 405},

		// /-/approvals
		{name: "approvals by POST", method: "POST", target: "/-/approvals", wantStatus: 405},

		// POST /-/approve
		{name: "approve form", method: "POST", target: "/-/approve", body: "id=a1&decision=tool", form: true, d: &fakeDaemon{decided: pending},
			wantStatus: 303, wantLocation: "/#approvals", wantCalls: []string{`Decide("a1", "tool", "page")`}},
		{name: "approve: allow is once", method: "POST", target: "/-/approve?id=a1&decision=allow", d: &fakeDaemon{decided: pending},
			wantStatus: 200, wantBody: "allowed delete_repo on github (a1)\n", wantCalls: []string{`Decide("a1", "once", "page")`}},
		{name: "approve: no decision is once", method: "POST", target: "/-/approve?id=a1", d: &fakeDaemon{decided: pending},
			wantStatus: 200, wantBody: "allowed delete_repo on github (a1)\n", wantCalls: []string{`Decide("a1", "once", "page")`}},
		{name: "approve server, by the CLI", method: "POST", target: "/-/approve?id=a1&decision=server&by=cli", d: &fakeDaemon{decided: pending},
			wantStatus: 200, wantBody: "allowed delete_repo on github (a1)\n", wantCalls: []string{`Decide("a1", "server", "cli")`}},
		{name: "approve: by is page unless cli", method: "POST", target: "/-/approve?id=a1&decision=once&by=evil", d: &fakeDaemon{decided: pending},
			wantStatus: 200, wantBody: "allowed delete_repo on github (a1)\n", wantCalls: []string{`Decide("a1", "once", "page")`}},
		{name: "deny", method: "POST", target: "/-/approve?id=a1&decision=deny", d: &fakeDaemon{decided: pending},
			wantStatus: 200, wantBody: "denied delete_repo on github (a1)\n", wantCalls: []string{`Decide("a1", "deny", "page")`}},
		{name: "approve an unknown id", method: "POST", target: "/-/approve?id=zz&decision=once", d: &fakeDaemon{err: Errorf(404, "zz: no such approval")},
			wantStatus: 404, wantBody: "zz: no such approval\n", wantCalls: []string{`Decide("zz", "once", "page")`}},
		{name: "approve fails otherwise", method: "POST", target: "/-/approve?id=a1&decision=sometimes", d: &fakeDaemon{err: errors.New("unknown decision")},
			wantStatus: 400, wantBody: "unknown decision\n", wantCalls: []string{`Decide("a1", "sometimes", "page")`}},
		{name: "approve form, unknown id: the page shows it", method: "POST", target: "/-/approve", body: "id=zz&decision=deny", form: true, d: &fakeDaemon{err: Errorf(404, "zz: no such approval")},
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
				d = &fakeDaemon{}
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
			if got := d.Calls(); !slices.Equal(got, tc.wantCalls) {
				t.Errorf("calls %q, want %q", got, tc.wantCalls)
			}
		})
	}
}

// A login whose request ends while the daemon waits for it answers
// nothing: its client has gone.
func TestLoginCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := &fakeDaemon{err: context.Canceled}
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
		d := &fakeDaemon{approvals: want}
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

// Every route goes through protect: one that refuses leaves the daemon
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
			d := &fakeDaemon{}
			mux := http.NewServeMux()
			Register(mux, d, refuse)
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, request(rt.method, rt.target, "", false))
			if w.Code != http.StatusForbidden || w.Body.String() != "refused\n" || len(d.Calls()) != 0 {
				t.Errorf("refused route answered %d %q, calls %q", w.Code, w.Body.String(), d.Calls())
			}
			w = serve(d, request(rt.method, rt.target, "", false))
			if w.Code == http.StatusForbidden || w.Code == http.StatusNotFound || w.Code == http.StatusMethodNotAllowed || len(d.Calls()) != 1 {
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
