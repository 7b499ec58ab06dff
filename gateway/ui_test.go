package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/statuspage"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// The hub gives the page its facts: each server's definition, counts,
// listing and policy, its tools as the model sees them, the sessions and
// the servers they called, the search's hits with why they ranked. The
// tools come from the cache, so no server runs; how the page shows the
// facts is statuspage's test.
func TestPageHubFacts(t *testing.T) {
	cfg := &registry.Config{Servers: map[string]*registry.Server{
		"alpha": {Name: "alpha", Command: "alpha-mcp", Enabled: true, Hash: "alpha-hash", Source: "/home/u/mcp.json", Line: 4,
			ExcludeTools: []string{"hidden"}},
		"off": {Name: "off", Command: "off-mcp", Hash: "off-hash", Source: "/home/u/mcp.json"},
	}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeProxy}}
	gw := New(cfg, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Catalog().SetListings(map[string]*registry.Listing{"alpha-hash": {Source: registry.SourceCache, Tools: []*mcp.Tool{
		{Name: "echo", Description: "Echoes a message back.\nAny text.", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"message": map[string]any{"type": "string"}}, "required": []any{"message"}}},
		{Name: "hidden", Description: "Never shown.", InputSchema: map[string]any{"type": "object"}},
	}}})
	c := connect(t, gw, SessionOptions{Cwd: "/home/u/project"})
	h := pageHub{gw}

	servers := h.Servers(t.Context())
	if len(servers) != 2 {
		t.Fatalf("servers %+v", servers)
	}
	a, off := servers[0], servers[1]
	if a.Name != "alpha" || !a.Enabled || a.Tools != 1 || a.Listing != registry.SourceCache || a.Source != "/home/u/mcp.json" || a.Line != 4 ||
		a.Upstream == nil || a.Upstream.Name != "alpha" || a.Upstream.State != "idle" ||
		!slices.ContainsFunc(a.Policy, func(it registry.PolicyItem) bool { return it.Rule == registry.RuleExcludeTools }) {
		t.Errorf("alpha: %+v", a)
	}
	if off.Name != "off" || off.Enabled || off.Upstream != nil || h.Stderr(t.Context(), "off", 20) != nil {
		t.Errorf("off: %+v", off)
	}
	if got := statuspage.Report(context.Background(), h).Servers[0].State; got != "cached" {
		t.Errorf("alpha's state %q, want cached", got)
	}
	tools := h.Tools(t.Context(), "alpha")
	if len(tools) != 1 || tools[0].Name != "alpha_echo" || tools[0].Description != "Echoes a message back.\nAny text." || tools[0].Params != "message*" {
		t.Errorf("tools %+v", tools)
	}
	if h.Tools(t.Context(), "nothing") != nil {
		t.Error("tools of no server")
	}
	hits := h.Search(t.Context(), "echo", 10)
	if len(hits) == 0 || hits[0].Tool != "alpha_echo" || hits[0].Why == "" || hits[0].Score <= 0 {
		t.Errorf("hits %+v", hits)
	}

	c.call(t, "mcp", map[string]any{"search": "echo"})
	sessions := h.Sessions(context.Background())
	if len(sessions) != 1 {
		t.Fatalf("sessions %+v", sessions)
	}
	if s := sessions[0]; s.ClientName != "test" || s.Mode != "proxy" || s.Dir != "/home/u/project" || s.HTTP || s.Shim ||
		s.LastActive.IsZero() || s.Project != nil {
		t.Errorf("session %+v", s)
	}
	if d := h.Daemon(context.Background()); d.Sessions != 1 || d.PID != os.Getpid() {
		t.Errorf("daemon %+v", d)
	}
}

// Disabling a server from the page takes its tools from sessions and
// closes it, survives a reload, and enabling brings it back; the report
// has the p50 of its calls, and the page the sessions that called it.
func TestPageDisableEnable(t *testing.T) {
	t.Parallel()
	gw, pids := newTestGateway(t, registry.Settings{Mode: ModeDirect}, "alpha", "beta")
	connectNow(t, gw, "alpha")
	connectNow(t, gw, "beta")
	c := connect(t, gw, SessionOptions{})
	if text, isErr := c.call(t, "alpha_echo", map[string]any{"message": "x"}); isErr || text != "x" {
		t.Fatalf("alpha_echo: %q", text)
	}
	h := gw.Handler(&HTTPOptions{Token: pageToken})
	post := func(path string) int { return postForm(h, path, "server=alpha") }
	report := func() api.ServerReport {
		for _, sr := range gw.Status().Servers {
			if sr.Name == "alpha" {
				return sr
			}
		}
		t.Fatal("no alpha in status")
		return api.ServerReport{}
	}
	if sr := report(); sr.P50Ms <= 0 || sr.Calls != 1 {
		t.Errorf("after one call: p50 %v ms, %d calls", sr.P50Ms, sr.Calls)
	}
	{
		var d struct {
			Servers []struct {
				Name     string
				Sessions []string
			}
		}
		pageJSON(t, h, &d)
		for _, sv := range d.Servers {
			want := map[string]int{"alpha": 1, "beta": 0}[sv.Name]
			if len(sv.Sessions) != want || want == 1 && sv.Sessions[0] != "test 1" {
				t.Errorf("sessions that used %s: %q", sv.Name, sv.Sessions)
			}
		}
	}
	if code := post("/-/disable"); code != http.StatusSeeOther {
		t.Fatalf("POST /-/disable: %d", code)
	}
	c.waitListChanged(t)
	c.waitTools(t, func(tools []string) bool {
		return !slices.Contains(tools, "alpha_echo") && slices.Contains(tools, "beta_echo")
	})
	if sr := report(); sr.State != "disabled" || !sr.DisabledHere {
		t.Errorf("alpha after disabling: %+v", sr)
	}
	ps, _ := fakeupstream.ReadPIDs(pids["alpha"])
	if len(ps) != 1 || !waitExit(ps[0]) {
		t.Errorf("alpha's process %v still runs after disabling", ps)
	}
	// A reload (same config) keeps it disabled.
	gw.Reload(gw.base.Load())
	if sr := report(); sr.State != "disabled" {
		t.Errorf("alpha after a reload: %s", sr.State)
	}
	if code := post("/-/enable"); code != http.StatusSeeOther {
		t.Fatalf("POST /-/enable: %d", code)
	}
	if text, isErr := c.call(t, "alpha_echo", map[string]any{"message": "back"}); isErr || text != "back" {
		t.Errorf("alpha_echo after enabling: %q", text)
	}
}

// waitExit waits, bounded, for pid to be gone.
func waitExit(pid int) bool {
	for range 500 {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// BenchmarkStatusPage100 renders the status page of a daemon with 100
// servers of 20 cached tools each: the time to first render.
func BenchmarkStatusPage100(b *testing.B) {
	cfg := &registry.Config{Servers: map[string]*registry.Server{}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer}}
	for i := range 100 {
		name := fmt.Sprintf("server%03d", i)
		cfg.Servers[name] = &registry.Server{Name: name, Command: "server-" + name, Enabled: true, Hash: fmt.Sprintf("%064d", i), Source: "/home/u/.config/mcpgw/mcp.json", Line: i + 2}
	}
	gw := New(cfg, &Options{NoBootstrap: true})
	defer gw.Close()
	ls := map[string]*registry.Listing{}
	for _, srv := range cfg.Servers {
		l := &registry.Listing{Source: registry.SourceCache}
		for j := range 20 {
			l.Tools = append(l.Tools, &mcp.Tool{Name: fmt.Sprintf("tool_%d", j), Description: "Does thing number " + fmt.Sprint(j) + " for the user.",
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}})
		}
		ls[srv.Hash] = l
	}
	gw.Catalog().SetListings(ls)
	h := pageHandler(gw)
	var size int
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil))
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size)/1024, "KiB/page")
}

// pageHandler serves the status page of gw without the control API's
// protection (tested in hostile_page_test.go).
func pageHandler(gw *Hub) http.Handler {
	mux := http.NewServeMux()
	statuspage.Register(mux, pageHub{gw}, func(h http.HandlerFunc) http.Handler { return h })
	return mux
}

// pageToken is the token the page tests' handlers require.
const pageToken = "t"

// postForm posts a form to h as the page's own buttons do (same origin,
// with the token) and returns the status.
func postForm(h http.Handler, path, form string) int {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1"+path, strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Authorization", "Bearer "+pageToken)
	h.ServeHTTP(rec, req)
	return rec.Code
}

// pageJSON gets the page's data from h as JSON into v.
func pageJSON(t *testing.T, h http.Handler, v any) {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+pageToken)
	h.ServeHTTP(rec, req)
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("%v: %s", err, rec.Body.String())
	}
}

// The page lists the protocol each live session speaks: a session of the
// 2025 era and a 2026-07-28 client over one connection (the shim's) what
// they negotiated, an HTTP conversation (2026-07-28, no session) as served
// over http.
func TestPageSessionProtocols(t *testing.T) {
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeProxy}, "alpha")
	for dir, version := range map[string]string{"/old": "2025-11-25", "/new": sessionless} {
		ct, st := mcp.NewInMemoryTransports()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = gw.ServeSession(ctx, st, SessionOptions{Cwd: dir}, nil)
		}()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close(); cancel(); <-done })
		listedTools(t, cs)
	}
	listedTools(t, connectHTTP(t, gw, sessionless, "", nil))

	got := map[string]string{}
	for _, s := range (pageHub{gw}).Sessions(context.Background()) {
		transport := "stdio"
		if s.HTTP {
			transport = "http"
		}
		got[s.Dir] = transport + " " + s.Protocol
	}
	want := map[string]string{"/old": "stdio 2025-11-25", "/new": "stdio 2026-07-28", "": "http 2026-07-28"}
	if !maps.Equal(got, want) {
		t.Errorf("sessions by directory: %q, want %q", got, want)
	}
}
