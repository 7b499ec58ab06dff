package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeHub knows one initialized session, "s1"; it opens HTTP sessions on
// server and serves shim sessions with serve, recording what it is asked.
type fakeHub struct {
	ss     *fakeSession
	server *mcp.Server // OpenHTTPSession's answer
	serve  func(context.Context, mcp.Transport, SessionOptions, func(Session) error) error
	closed chan string // told of HTTPSessionClosed, if not nil

	mu       sync.Mutex
	opened   []SessionOptions // of OpenHTTPSession
	convs    []SessionOptions // of Conversation
	served   []SessionOptions // of ServeSession
	canceled []string         // of CancelHTTPSession
}

func (h *fakeHub) ServeSession(ctx context.Context, t mcp.Transport, opts SessionOptions, ready func(Session) error) error {
	h.mu.Lock()
	h.served = append(h.served, opts)
	h.mu.Unlock()
	if h.serve == nil {
		return nil
	}
	return h.serve(ctx, t, opts, ready)
}
func (h *fakeHub) OpenHTTPSession(opts SessionOptions) *mcp.Server {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.opened = append(h.opened, opts)
	return h.server
}
func (h *fakeHub) Conversation(opts SessionOptions) *mcp.Server {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.convs = append(h.convs, opts)
	return h.server
}
func (h *fakeHub) CancelHTTPSession(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.canceled = append(h.canceled, id)
}
func (h *fakeHub) HTTPSessionClosed(id string) {
	if h.closed != nil {
		h.closed <- id
	}
}
func (h *fakeHub) HTTPSession(id string) (Session, bool) {
	if id != "s1" || h.ss == nil {
		return nil, false
	}
	return h.ss, true
}

// record returns copies of what h recorded.
func (h *fakeHub) record() (opened, served []SessionOptions, canceled []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.opened), slices.Clone(h.served), slices.Clone(h.canceled)
}

type fakeSession struct {
	protocol string
	seen     time.Time
	fast     bool // Fast takes the call

	id, secret string // ShimIdentity's
	user       string // User's

	mu        sync.Mutex
	calls     []string // params of the calls made
	cancelled []string
	hangup    func()
}

func (s *fakeSession) ShimIdentity() (id, secret string) { return s.id, s.secret }
func (s *fakeSession) User() string                      { return s.user }

func (s *fakeSession) Context() context.Context { return context.Background() }
func (s *fakeSession) Fast(id, params []byte) (func(context.Context) json.RawMessage, bool) {
	if !s.fast {
		return nil, false
	}
	return func(context.Context) json.RawMessage {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.calls = append(s.calls, string(params))
		return json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
	}, true
}
func (s *fakeSession) CancelFast(id []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelled = append(s.cancelled, string(id))
}
func (s *fakeSession) HTTPState() (string, time.Time) { return s.protocol, s.seen }
func (s *fakeSession) SawSDK()                        {}
func (s *fakeSession) OnHangup(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hangup = f
}

// record returns copies of what s recorded.
func (s *fakeSession) record() (calls, cancelled []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls), slices.Clone(s.cancelled)
}

// serveFast answers a tools/call of a known, initialized session with
// the session's result in a JSON-RPC response, and leaves everything
// else to the go-sdk, untouched.
func TestServeFast(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	for _, tc := range []struct {
		name, session, accept, protocolHeader, body string
		protocol                                    string
		seenAgo                                     time.Duration
		fast                                        bool
		want                                        string // the response body; "" = left to the go-sdk
		cancelled                                   string
	}{
		{name: "answered", session: "s1", protocol: "2025-11-25", fast: true, body: call,
			want: `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`},
		{name: "unknown session", session: "s2", protocol: "2025-11-25", fast: true, body: call},
		{name: "no session ID", protocol: "2025-11-25", fast: true, body: call},
		{name: "not initialized", session: "s1", fast: true, body: call},
		{name: "the session's handler declines", session: "s1", protocol: "2025-11-25", body: call},
		{name: "another protocol version", session: "s1", protocol: "2025-11-25", protocolHeader: "2025-06-18", fast: true, body: call},
		{name: "not seen by the go-sdk for half its idle timeout", session: "s1", protocol: "2025-11-25", seenAgo: time.Hour, fast: true, body: call},
		{name: "accepts JSON only", session: "s1", protocol: "2025-11-25", accept: "application/json", fast: true, body: call},
		{name: "another method", session: "s1", protocol: "2025-11-25", fast: true, body: `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`},
		{name: "a batch", session: "s1", protocol: "2025-11-25", fast: true, body: "[" + call + "]"},
		{name: "a cancellation", session: "s1", protocol: "2025-11-25", fast: true,
			body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-5"}}`, cancelled: `"r-5"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := &fakeSession{protocol: tc.protocol, seen: time.Now().Add(-tc.seenAgo), fast: tc.fast}
			tr := New(&fakeHub{ss: ss}, Options{})
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tc.body))
			if tc.session != "" {
				r.Header.Set("Mcp-Session-Id", tc.session)
			}
			accept := tc.accept
			if accept == "" {
				accept = "application/json, text/event-stream"
			}
			r.Header.Set("Accept", accept)
			r.Header.Set("Content-Type", "application/json")
			if tc.protocolHeader != "" {
				r.Header.Set("Mcp-Protocol-Version", tc.protocolHeader)
			}
			w := httptest.NewRecorder()
			answered := tr.serveFast(w, r, []byte(tc.body), 10*time.Minute)
			switch {
			case tc.want == "" && (answered || w.Body.Len() > 0 || len(ss.calls) > 0):
				t.Errorf("answered %v (%q), calls %v; want it left to the go-sdk", answered, w.Body.String(), ss.calls)
			case tc.want != "" && (!answered || w.Body.String() != tc.want || w.Header().Get("Content-Type") != "application/json"):
				t.Errorf("answered %v: %q (%s); want %q", answered, w.Body.String(), w.Header().Get("Content-Type"), tc.want)
			}
			if got := strings.Join(ss.cancelled, ","); got != tc.cancelled {
				t.Errorf("cancelled %q, want %q", got, tc.cancelled)
			}
		})
	}
}
