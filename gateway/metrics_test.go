package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcpgw/mcpgw/cachefile"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// scrape fetches /metrics from h, offering gzip as Prometheus does, and
// parses it with the Prometheus text parser. The answer must be plain text
// all the same (see transport's Handler).
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	if ce := rec.Header().Get("Content-Encoding"); ce != "" {
		t.Errorf("GET /metrics answered with Content-Encoding %q, want none", ce)
	}
	body, _ := io.ReadAll(rec.Body)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	return fams
}

// value returns the value of the series of family name whose labels include
// labels (name=value pairs), or -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			return m.Untyped.GetValue()
		}
	}
	return -1
}

func TestMetricsMoveAfterACall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := prometheus.NewRegistry()
	srv := fakeupstream.Server("alpha", nil)
	cfg := &registry.Config{Servers: map[string]*registry.Server{"alpha": srv}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer}}
	cache := cachefile.Open(filepath.Join(dir, "cache.json"), nil)
	gw := New(cfg, &Options{Registerer: reg, NoBootstrap: true, Cache: registry.NewListingCache(cache)})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	h := gw.Handler(&HTTPOptions{Gatherer: reg})

	before := scrape(t, h)
	if v := value(before, "mcpgw_tool_calls_total", "server", "alpha", "outcome", "ok"); v > 0 {
		t.Fatalf("calls before any call = %v", v)
	}
	if v := value(before, "mcpgw_config_last_reload_successful"); v != 1 {
		t.Errorf("mcpgw_config_last_reload_successful at start = %v, want 1", v)
	}

	c := connect(t, gw, SessionOptions{})
	if text, isErr := c.call(t, "mcp", map[string]any{"tool": "alpha_echo", "args": map[string]any{"message": "m"}}); isErr || text != "m" {
		t.Fatalf("call = %q (error %v)", text, isErr)
	}
	if _, isErr := c.call(t, "mcp", map[string]any{"tool": "alpha_fail", "args": map[string]any{"message": "x"}}); !isErr {
		t.Fatal("alpha_fail did not fail")
	}
	gw.RecordReload(errTest)

	// The cache is written when the pool reports the connect, which may
	// trail the call's answer.
	after := scrape(t, h)
	for deadline := time.Now().Add(10 * time.Second); value(after, "mcpgw_cache_writes_total", "outcome", "ok") < 1 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		after = scrape(t, h)
	}
	checks := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mcpgw_tool_calls_total", []string{"server", "alpha", "outcome", "ok"}, 1},
		{"mcpgw_tool_calls_total", []string{"server", "alpha", "outcome", "tool_error"}, 1},
		{"mcpgw_tool_call_duration_seconds", []string{"server", "alpha"}, 2},
		{"mcpgw_sessions", nil, 1},
		{"mcpgw_config_last_reload_successful", nil, 0},
		{"mcpgw_config_reloads_total", []string{"outcome", "error"}, 1},
		{"mcpgw_upstream_connects_total", []string{"server", "alpha", "outcome", "success"}, 1},
		{"mcpgw_upstream_state", []string{"server", "alpha", "state", "connected"}, 1},
		{"mcpgw_upstream_processes", nil, 1},
		{"mcpgw_cache_writes_total", []string{"outcome", "ok"}, 1},
	}
	for _, c := range checks {
		if got := value(after, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := value(after, "mcpgw_tools"); got < float64(len(fakeupstream.ToolNames)) {
		t.Errorf("mcpgw_tools = %v, want ≥ %d", got, len(fakeupstream.ToolNames))
	}
	// Labels stay bounded: no series carries tool arguments.
	for name, f := range after {
		for _, m := range f.Metric {
			for _, lp := range m.Label {
				if strings.Contains(lp.GetValue(), "message") || lp.GetValue() == "m" {
					t.Errorf("%s has label %s=%q", name, lp.GetName(), lp.GetValue())
				}
			}
		}
	}
}

var errTest = errString("servers.x.url: bad")

type errString string

func (e errString) Error() string { return string(e) }

func TestControlEndpointsProtected(t *testing.T) {
	t.Parallel()
	gw := New(&registry.Config{Servers: map[string]*registry.Server{}}, nil)
	t.Cleanup(func() { gw.Close() })
	srv := httptest.NewServer(gw.Handler(&HTTPOptions{Token: "s3cret", Reload: func() error { return nil }}))
	defer srv.Close()
	do := func(method, host, token string) int {
		req, _ := http.NewRequest(method, srv.URL+"/-/status", nil)
		if method == "POST" {
			req, _ = http.NewRequest(method, srv.URL+"/-/reload", nil)
		}
		if host != "" {
			req.Host = host
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tests := []struct {
		method, host, token string
		want                int
	}{
		{"GET", "", "s3cret", 200},
		{"GET", "", "", 401},
		{"GET", "", "wrong", 401},
		{"GET", "evil.example:80", "s3cret", 403},
		{"POST", "", "s3cret", 200},
		{"POST", "localhost:1234", "s3cret", 200},
		{"POST", "attacker.test", "s3cret", 403},
	}
	for _, tt := range tests {
		if got := do(tt.method, tt.host, tt.token); got != tt.want {
			t.Errorf("%s host=%q token=%q: %d, want %d", tt.method, tt.host, tt.token, got, tt.want)
		}
	}
}

// BenchmarkMetricsCall measures what counting a call costs, done for
// every call.
func BenchmarkMetricsCall(b *testing.B) {
	m := newMetrics(prometheus.NewRegistry(), false)
	for i := range 20 {
		m.call("server"+strconv.Itoa(i), "", "ok", time.Millisecond)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.call("github", "", "ok", 1500*time.Microsecond)
	}
}
