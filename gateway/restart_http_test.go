package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgw/mcpgw/registry"
)

// After a daemon restart, an HTTP client's old session ID is unknown: the
// spec says 404, after which the client starts a new session, and that
// session works.
func TestUnknownHTTPSessionAfterRestart(t *testing.T) {
	t.Parallel()
	cfg := &registry.Config{Servers: map[string]*registry.Server{}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer}}
	first := New(cfg, &Options{NoBootstrap: true})
	var h atomic.Pointer[http.Handler]
	hf := first.Handler(nil)
	h.Store(&hf)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	defer ts.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.ID()
	if id == "" {
		t.Fatal("no session ID")
	}
	cs.Close()
	first.Close()

	// The "restarted" daemon serves the same address.
	second := New(cfg, &Options{NoBootstrap: true})
	defer second.Close()
	hs := second.Handler(nil)
	h.Store(&hs)

	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("old session ID after a restart: %s, want 404 Not Found", resp.Status)
	}
	cs2, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("re-initializing: %v", err)
	}
	defer cs2.Close()
	res, err := cs2.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 || res.Tools[0].Name != "mcp" {
		t.Fatalf("tools after re-initializing: %v, %v", res, err)
	}
}

// /metrics answers local scrapers but not a page that reached it through
// DNS rebinding (a loopback connection under a foreign Host name).
func TestMetricsRefuseForeignHost(t *testing.T) {
	t.Parallel()
	gw := New(&registry.Config{Servers: map[string]*registry.Server{}}, &Options{NoBootstrap: true})
	defer gw.Close()
	ts := httptest.NewServer(gw.Handler(&HTTPOptions{Gatherer: prometheusRegistry()}))
	defer ts.Close()
	for host, want := range map[string]int{"": 200, "evil.example:7332": 403, "127.1:7332": 200, "localhost.evil.example": 403} {
		req, _ := http.NewRequest("GET", ts.URL+"/metrics", nil)
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("/metrics with Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

func prometheusRegistry() *prometheus.Registry { return prometheus.NewRegistry() }
