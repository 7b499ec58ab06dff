package statuspage

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/mcpgw/mcpgw/gateway/api"
)

// fakeDaemon is a Daemon that records each call, as Go would write it,
// and answers with the values and errors the test set.
type fakeDaemon struct {
	data      *Data
	err       error // every action's error
	trustMsg  string
	authURL   string
	logs      []string
	approvals []api.PendingApproval
	decided   api.PendingApproval

	mu    sync.Mutex
	calls []string
}

func (d *fakeDaemon) record(format string, a ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, fmt.Sprintf(format, a...))
}

// Calls are the calls made so far.
func (d *fakeDaemon) Calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

func (d *fakeDaemon) PageData(_ context.Context, query string) *Data {
	d.record("PageData(%q)", query)
	if d.data == nil {
		return &Data{Report: &api.Report{}}
	}
	return d.data
}

func (d *fakeDaemon) Reconnect(_ context.Context, server string) error {
	d.record("Reconnect(%q)", server)
	return d.err
}

func (d *fakeDaemon) SetEnabled(server string, on bool) error {
	d.record("SetEnabled(%q, %v)", server, on)
	return d.err
}

func (d *fakeDaemon) TrustProject(dir string, trust bool) (string, error) {
	d.record("TrustProject(%q, %v)", dir, trust)
	return d.trustMsg, d.err
}

func (d *fakeDaemon) Login(_ context.Context, server string) (string, error) {
	d.record("Login(%q)", server)
	return d.authURL, d.err
}

func (d *fakeDaemon) ServerLog(server string) ([]string, error) {
	d.record("ServerLog(%q)", server)
	return d.logs, d.err
}

func (d *fakeDaemon) Approvals(context.Context) []api.PendingApproval {
	d.record("Approvals()")
	return d.approvals
}

func (d *fakeDaemon) Decide(_ context.Context, id, decision, by string) (api.PendingApproval, error) {
	d.record("Decide(%q, %q, %q)", id, decision, by)
	return d.decided, d.err
}

var _ Daemon = (*fakeDaemon)(nil)

// open is a protect that lets every request through.
func open(h http.HandlerFunc) http.Handler { return h }

// serve sends r to the page's routes on d, registered with open.
func serve(d Daemon, r *http.Request) *httptest.ResponseRecorder {
	mux := http.NewServeMux()
	Register(mux, d, open)
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	return w
}

// request is a request with body, a form post when form is set.
func request(method, target, body string, form bool) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if form {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return r
}
