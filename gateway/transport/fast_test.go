package transport

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
func (h *fakeHub) ConversationSession(opts SessionOptions) (Session, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.convs = append(h.convs, opts)
	return h.ss, h.ss != nil
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
	fast     bool  // Fast takes the call
	err      error // and answers with this error

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
func (s *fakeSession) Fast(method string, id, params []byte) (func(context.Context) (json.RawMessage, error), bool) {
	if !s.fast || method != "tools/call" {
		return nil, false
	}
	return func(context.Context) (json.RawMessage, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.calls = append(s.calls, string(params))
		if s.err != nil {
			return nil, s.err
		}
		return json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`), nil
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

// A request of protocol 2026-07-28 without a session is a fast call of
// the conversation its headers describe when everything the go-sdk would
// check agrees; anything else is left to the go-sdk.
func TestServeSessionlessFast(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"a_echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "a_echo", "Mcp-Gateway-Mode": "direct"}
	for _, tc := range []struct {
		name   string
		change map[string]string // headers changed ("" removes one)
		body   string
		want   bool
	}{
		{name: "answered", want: true},
		{name: "a version the daemon does not speak", change: map[string]string{"Mcp-Protocol-Version": "2027-01-01"}},
		{name: "a 2025 request", change: map[string]string{"Mcp-Protocol-Version": "2025-11-25"}},
		{name: "no Mcp-Method", change: map[string]string{"Mcp-Method": ""}},
		{name: "another Mcp-Name", change: map[string]string{"Mcp-Name": "a_other"}},
		{name: "no Mcp-Name", change: map[string]string{"Mcp-Name": ""}},
		{name: "the body names another version", body: strings.Replace(call, `"2026-07-28"}`, `"2025-11-25"}`, 1)},
		{name: "no _meta version", body: strings.Replace(call, `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, "", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := &fakeSession{fast: true}
			hub := &fakeHub{ss: ss}
			tr := New(hub, Options{Protocols: []string{"2025-11-25", "2026-07-28"}})
			body := call
			if tc.body != "" {
				body = tc.body
			}
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set("Content-Type", "application/json")
			for k, v := range headers {
				r.Header.Set(k, v)
			}
			for k, v := range tc.change {
				if v == "" {
					r.Header.Del(k)
				} else {
					r.Header.Set(k, v)
				}
			}
			w := httptest.NewRecorder()
			answered := tr.serveFast(w, r, []byte(body), 10*time.Minute)
			calls, _ := ss.record()
			if !tc.want {
				if answered || w.Body.Len() > 0 || len(calls) > 0 {
					t.Errorf("answered %v (%q), calls %v; want it left to the go-sdk", answered, w.Body.String(), calls)
				}
				return
			}
			if want := `{"jsonrpc":"2.0","id":"c1","result":{"content":[{"type":"text","text":"hi"}]}}`; !answered || w.Body.String() != want {
				t.Fatalf("answered %v: %q; want %q", answered, w.Body.String(), want)
			}
			hub.mu.Lock()
			convs := slices.Clone(hub.convs)
			hub.mu.Unlock()
			if len(convs) != 1 || convs[0].Mode != "direct" {
				t.Errorf("conversations asked for: %+v", convs)
			}
		})
	}
}

// A fast call that ends in a JSON-RPC error is answered with it, with
// the HTTP status protocol 2026-07-28 gives that error.
func TestServeSessionlessFastError(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a_x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	for _, tc := range []struct {
		err    error
		status int
		want   string
	}{
		{&jsonrpc.Error{Code: -32021, Message: "needs sampling"}, http.StatusBadRequest, `{"jsonrpc":"2.0","id":3,"error":{"code":-32021,"message":"needs sampling"}}`},
		{&jsonrpc.Error{Code: -32601, Message: "no such method"}, http.StatusNotFound, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no such method"}}`},
		{&jsonrpc.Error{Code: -32000, Message: "tampered"}, http.StatusOK, `{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"tampered"}}`},
		{errors.New("broken"), http.StatusOK, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"broken"}}`},
	} {
		ss := &fakeSession{fast: true, err: tc.err}
		tr := New(&fakeHub{ss: ss}, Options{Protocols: []string{"2026-07-28"}})
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(call))
		for k, v := range map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "a_x"} {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		if !tr.serveFast(w, r, []byte(call), 0) {
			t.Fatalf("%v: not answered", tc.err)
		}
		if w.Code != tc.status || w.Body.String() != tc.want {
			t.Errorf("%v: %d %s; want %d %s", tc.err, w.Code, w.Body.String(), tc.status, tc.want)
		}
	}
}
