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

// fakeHub is a Hub made of the facts the test set. It records each call,
// as Go would write it, and its actions answer with the values and errors
// the test set.
type fakeHub struct {
	daemon    DaemonFacts
	servers   []ServerFacts
	tools     map[string][]ToolFacts
	logs      map[string][]string // by name
	stderr    map[string][]string // by server
	sessions  []SessionFacts
	hits      []Hit
	approvals []api.PendingApproval

	err      error // every action's error
	trustMsg string
	authURL  string
	decided  api.PendingApproval

	mu    sync.Mutex
	calls []string
}

func (h *fakeHub) record(format string, a ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, fmt.Sprintf(format, a...))
}

// Calls are the calls made so far.
func (h *fakeHub) Calls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.calls...)
}

// Actions are the calls made so far but the facts' reads.
func (h *fakeHub) Actions() []string {
	var out []string
	for _, c := range h.Calls() {
		switch name, _, _ := strings.Cut(c, "("); name {
		case "Daemon", "Servers", "Tools", "Log", "Stderr", "Sessions", "Approvals":
		default:
			out = append(out, c)
		}
	}
	return out
}

func (h *fakeHub) Daemon(context.Context) DaemonFacts {
	h.record("Daemon()")
	return h.daemon
}

func (h *fakeHub) Servers(context.Context) []ServerFacts {
	h.record("Servers()")
	return h.servers
}

func (h *fakeHub) Tools(_ context.Context, server string) []ToolFacts {
	h.record("Tools(%q)", server)
	return h.tools[server]
}

func (h *fakeHub) Log(name string) []string {
	h.record("Log(%q)", name)
	return h.logs[name]
}

func (h *fakeHub) Stderr(_ context.Context, server string, n int) []string {
	h.record("Stderr(%q, %d)", server, n)
	lines := h.stderr[server]
	return lines[max(0, len(lines)-n):]
}

func (h *fakeHub) Sessions(context.Context) []SessionFacts {
	h.record("Sessions()")
	return h.sessions
}

func (h *fakeHub) Search(_ context.Context, query string, limit int) []Hit {
	h.record("Search(%q, %d)", query, limit)
	return h.hits
}

func (h *fakeHub) Approvals(context.Context) []api.PendingApproval {
	h.record("Approvals()")
	return h.approvals
}

func (h *fakeHub) Reconnect(_ context.Context, server string) error {
	h.record("Reconnect(%q)", server)
	return h.err
}

func (h *fakeHub) SetEnabled(_ context.Context, server string, on bool) error {
	h.record("SetEnabled(%q, %v)", server, on)
	return h.err
}

func (h *fakeHub) Trust(dir string) (string, error) {
	h.record("Trust(%q)", dir)
	return h.trustMsg, h.err
}

func (h *fakeHub) Refuse(dir string) { h.record("Refuse(%q)", dir) }

func (h *fakeHub) Login(_ context.Context, server string) (string, error) {
	h.record("Login(%q)", server)
	return h.authURL, h.err
}

func (h *fakeHub) Decide(_ context.Context, id, decision, by string) (api.PendingApproval, error) {
	h.record("Decide(%q, %q, %q)", id, decision, by)
	return h.decided, h.err
}

var _ Hub = (*fakeHub)(nil)

// open is a protect that lets every request through.
func open(h http.HandlerFunc) http.Handler { return h }

// serve sends r to the page's routes on h, registered with open.
func serve(h Hub, r *http.Request) *httptest.ResponseRecorder {
	mux := http.NewServeMux()
	Register(mux, h, open)
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
