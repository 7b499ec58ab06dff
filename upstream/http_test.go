package upstream

import (
	"cmp"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/upstreamtest"
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
	ts, rec := httpServer(t, upstreamtest.Handler(nil))
	t.Setenv("MCPGW_TEST_TOKEN", "first")
	srv := &registry.Server{
		Name:           "remote",
		URL:            ts.URL + "/mcp",
		Headers:        map[string]string{"X-Custom": "yes"},
		BearerTokenEnv: "MCPGW_TEST_TOKEN",
		Hash:           "remote",
	}
	p := newPool(t, nil)
	u := p.Upstream(srv)
	if got := call(t, u, "echo", map[string]any{"message": "over http"}); got != "over http" {
		t.Errorf("echo = %q", got)
	}
	st := u.Status()
	if st.State != StateConnected || st.PID != 0 || st.Tools != len(upstreamtest.ToolNames) {
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
	t.Setenv("MCPGW_TEST_TOKEN", "second")
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
	ts, rec := httpServer(t, upstreamtest.Handler(nil))
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
