package upstream

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// recordedRequest is what a recordingHandler saw.
type recordedRequest struct {
	Method, Path, Auth, Custom string
	Status                     int
}

// recordingHandler records every request and the status it was answered with.
type recordingHandler struct {
	h    http.Handler
	mu   sync.Mutex
	reqs []*recordedRequest
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.ResponseWriter.(http.Flusher).Flush()
}

func (h *recordingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	rr := &recordedRequest{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Custom: r.Header.Get("X-Custom")}
	h.mu.Lock()
	h.reqs = append(h.reqs, rr)
	h.mu.Unlock()
	h.h.ServeHTTP(sw, r)
	h.mu.Lock()
	rr.Status = cmp.Or(sw.status, http.StatusOK)
	h.mu.Unlock()
}

func (h *recordingHandler) requests() []recordedRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]recordedRequest, len(h.reqs))
	for i, r := range h.reqs {
		out[i] = *r
	}
	return out
}

func (h *recordingHandler) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reqs = nil
}

func httpServer(t *testing.T, h http.Handler) (*httptest.Server, *recordingHandler) {
	rh := &recordingHandler{h: h}
	ts := httptest.NewServer(rh)
	t.Cleanup(ts.Close)
	return ts, rh
}

func TestStreamableHTTPSendsHeaders(t *testing.T) {
	ts, rec := httpServer(t, fakeupstream.Handler(nil))
	t.Setenv("UPSTREAM_TEST_TOKEN", "first")
	srv := &registry.Server{
		Name:           "remote",
		URL:            ts.URL + "/mcp",
		Headers:        map[string]string{"X-Custom": "yes"},
		BearerTokenEnv: "UPSTREAM_TEST_TOKEN",
		Hash:           "remote",
	}
	p := newPool(t, nil)
	u := p.Upstream(srv)
	if got := call(t, u, "echo", map[string]any{"message": "over http"}); got != "over http" {
		t.Errorf("echo = %q", got)
	}
	st := u.Status()
	if st.State != StateConnected || st.PID != 0 || st.Tools != len(fakeupstream.ToolNames) {
		t.Errorf("status = %+v", st)
	}
	reqs := rec.requests()
	if len(reqs) < 3 {
		t.Fatalf("requests = %v, want at least connect and call", reqs)
	}
	for _, r := range reqs {
		if r.Auth != "Bearer first" || r.Custom != "yes" {
			t.Errorf("request %s %s: Authorization %q, X-Custom %q; want the configured ones", r.Method, r.Path, r.Auth, r.Custom)
		}
		if r.Path != "/mcp" {
			t.Errorf("request to %s: want only /mcp (no SSE fallback)", r.Path)
		}
	}

	// The token env var is read at connect time.
	t.Setenv("UPSTREAM_TEST_TOKEN", "second")
	u.dropSession(u.currentSession(), "test")
	rec.reset()
	call(t, u, "echo", map[string]any{"message": "again"})
	for _, r := range rec.requests() {
		if r.Method == http.MethodDelete {
			continue // the old session's goodbye may race the new connect
		}
		if r.Auth != "Bearer second" {
			t.Errorf("after reconnect: %s %s sent %q, want Bearer second", r.Method, r.Path, r.Auth)
		}
	}
}

func TestLegacySSEFallback(t *testing.T) {
	t.Parallel()
	ts, rec := httpServer(t, fakeupstream.Handler(nil))
	srv := &registry.Server{Name: "old", URL: ts.URL + "/sse", BearerToken: "tok", Hash: "old"}
	p := newPool(t, nil)
	u := p.Upstream(srv)
	if got := call(t, u, "echo", map[string]any{"message": "via sse"}); got != "via sse" {
		t.Errorf("echo = %q", got)
	}
	reqs := rec.requests()
	// Streamable HTTP first: POSTs answered 400, then the SSE GET.
	if len(reqs) == 0 || reqs[0].Method != http.MethodPost || reqs[0].Status != http.StatusBadRequest {
		t.Fatalf("first request = %+v, want a POST answered 400", reqs)
	}
	sawGet := false
	for _, r := range reqs {
		sawGet = sawGet || r.Method == http.MethodGet
		if r.Auth != "Bearer tok" {
			t.Errorf("%s %s: Authorization %q", r.Method, r.Path, r.Auth)
		}
	}
	if !sawGet {
		t.Errorf("requests = %+v: no SSE GET", reqs)
	}

	// The working transport is remembered: a reconnect starts with the GET.
	u.dropSession(u.currentSession(), "test")
	rec.reset()
	call(t, u, "echo", map[string]any{"message": "again"})
	reqs = rec.requests()
	if len(reqs) == 0 || reqs[0].Method != http.MethodGet {
		t.Errorf("after reconnect, first request = %+v, want the SSE GET", reqs)
	}
	for _, r := range reqs {
		if r.Status == http.StatusBadRequest {
			t.Errorf("after reconnect: %s answered 400: streamable was tried again", r.Method)
		}
	}
	if st := u.Status(); st.Connects != 2 {
		t.Errorf("connects = %d, want 2", st.Connects)
	}
	// The SSE stream outlives the startup timeout's context.
	if _, err := u.Connect(context.Background()); err != nil {
		t.Errorf("re-list over SSE: %v", err)
	}
}

func TestUnauthorizedNeedsAuth(t *testing.T) {
	var want atomic.Value
	want.Store("Bearer good")
	inner := fakeupstream.Handler(nil)
	ts, rec := httpServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want.Load().(string) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="test"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	srv := &registry.Server{Name: "auth", URL: ts.URL + "/mcp", BearerTokenEnv: "UPSTREAM_TEST_TOKEN", Hash: "auth"}
	rec2 := newRecorder()
	p := newPool(t, rec2.options(nil))
	u := p.Upstream(srv)

	_, err := u.Call(context.Background(), "echo", map[string]any{"message": "x"}, nil)
	var ae *AuthError
	if !errors.As(err, &ae) || !errors.Is(err, ErrNeedsAuth) || !strings.Contains(err.Error(), `Bearer realm="test"`) {
		t.Fatalf("err = %v, want an AuthError with the challenge", err)
	}
	if !strings.Contains(err.Error(), "no bearer token is configured") {
		t.Errorf("err = %v, want a hint that no token is set", err)
	}
	st := u.Status()
	if st.State != StateNeedsAuth || !strings.Contains(st.LastError, "401") {
		t.Errorf("status = %+v, want needs-auth", st)
	}
	// No retries: calls fail fast without a request.
	n := len(rec.requests())
	if n != 1 {
		t.Errorf("the server was asked %d times before needs-auth, want once: %v", n, rec.requests())
	}
	for range 3 {
		if _, err := u.Call(context.Background(), "echo", nil, nil); !errors.Is(err, ErrNeedsAuth) {
			t.Errorf("call while needs-auth: %v", err)
		}
	}
	if got := len(rec.requests()); got != n {
		t.Errorf("requests while needs-auth: %d, want none", got-n)
	}

	// Connect retries (and reads the token env var again).
	t.Setenv("UPSTREAM_TEST_TOKEN", "good")
	if _, err := u.Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	call(t, u, "echo", map[string]any{"message": "x"})

	// A token revoked mid-session: the call fails, the upstream needs auth.
	want.Store("Bearer better")
	if _, err := u.Call(context.Background(), "echo", map[string]any{"message": "x"}, nil); !errors.Is(err, ErrNeedsAuth) {
		t.Errorf("call with a revoked token: %v, want ErrNeedsAuth", err)
	}
	if st := u.Status(); st.State != StateNeedsAuth {
		t.Errorf("state = %s, want needs-auth", st.State)
	}
}

func TestExpiredSessionReconnectsOnce(t *testing.T) {
	t.Parallel()
	shared := fakeupstream.NewServer(nil)
	newHandler := func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return shared }, nil)
	}
	var current atomic.Pointer[http.Handler]
	h := newHandler()
	current.Store(&h)
	ts, rec := httpServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Refuse the stateless probe so the client makes a (stateful)
		// session with initialize.
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"server/discover"`)) {
				http.Error(w, "unknown method", http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		(*current.Load()).ServeHTTP(w, r)
	}))
	srv := &registry.Server{Name: "sess", URL: ts.URL + "/mcp", Hash: "sess"}
	p := newPool(t, nil)
	u := p.Upstream(srv)
	call(t, u, "echo", map[string]any{"message": "x"})
	if s := u.currentSession(); s.cs.ID() == "" {
		t.Fatal("no Mcp-Session-Id: the test needs a stateful session")
	}

	// The server restarts and forgets every session: 404 on the next call,
	// which reconnects and is retried.
	h2 := newHandler()
	current.Store(&h2)
	rec.reset()
	if got := call(t, u, "echo", map[string]any{"message": "after restart"}); got != "after restart" {
		t.Errorf("echo = %q", got)
	}
	if st := u.Status(); st.Connects != 2 || st.Errors != 0 || st.State != StateConnected {
		t.Errorf("status = %+v, want 2 connects, no errors", st)
	}
	saw404 := false
	for _, r := range rec.requests() {
		saw404 = saw404 || r.Status == http.StatusNotFound
	}
	if !saw404 {
		t.Error("the server never answered 404: the test did not exercise expiry")
	}
}

// TestSSEStreamOutlivesStartupTimeout: the SSE GET must not be bound to the
// connect's deadline.
func TestSSEStreamOutlivesStartupTimeout(t *testing.T) {
	t.Parallel()
	ts, _ := httpServer(t, fakeupstream.Handler(nil))
	// Long enough for the connect to finish on a busy machine, which
	// this test needs; the stream must then outlive it.
	const startup = 3 * time.Second
	srv := &registry.Server{Name: "old", URL: ts.URL + "/sse", Hash: "old", StartupTimeout: startup}
	p := newPool(t, nil)
	u := p.Upstream(srv)
	started := time.Now()
	call(t, u, "echo", map[string]any{"message": "x"})
	time.Sleep(time.Until(started.Add(startup + 200*time.Millisecond))) // past the startup deadline
	if got := call(t, u, "echo", map[string]any{"message": "later"}); got != "later" {
		t.Errorf("echo = %q", got)
	}
	if st := u.Status(); st.Connects != 1 {
		t.Errorf("connects = %d, want 1 (the stream survived)", st.Connects)
	}
}

// TestOlderServerAskedOnceNextTime: a server on an older protocol than the
// SDK's server/discover probe is probed at the first connect only; later
// connects go straight to initialize.
func TestOlderServerAskedOnceNextTime(t *testing.T) {
	t.Parallel()
	old := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "old", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-06-18"}})
	}, nil)
	var mu sync.Mutex
	var methods []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var msg struct{ Method string }
			_ = json.Unmarshal(body, &msg)
			mu.Lock()
			methods = append(methods, msg.Method)
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		old.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	p := newPool(t, nil)
	u := p.Upstream(&registry.Server{Name: "old", URL: ts.URL, Hash: "old"})
	count := func(method string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, m := range methods {
			if m == method {
				n++
			}
		}
		return n
	}
	for i := range 3 {
		snap, err := u.Reconnect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if snap.ProtocolVersion != "2025-06-18" {
			t.Fatalf("connect %d: protocol %q", i, snap.ProtocolVersion)
		}
	}
	if d, in := count("server/discover"), count("initialize"); d > 1 || in != 3 {
		t.Errorf("three connects sent %d server/discover and %d initialize; want at most 1 and 3", d, in)
	}
}
