package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
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

// TestPageRenders renders the page (HTML and JSON) with sessions, servers
// and a search, so that a template mistake fails here rather than in a
// browser.
func TestPageRenders(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeProxy}, "alpha")
	connectNow(t, gw, "alpha")
	connect(t, gw, SessionOptions{Cwd: "/home/u/project"})
	h := pageHandler(gw)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/?q=echo", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /: %d\n%s", rec.Code, body)
	}
	for _, want := range []string{`id="server-alpha"`, "1 session ·", "<code>/home/u/project</code>", `<strong>alpha_echo</strong>`, "<code>alpha_echo</code>(message*)"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	rec = httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/?q=echo", nil)
	req.Header.Set("Accept", "application/json")
	h.ServeHTTP(rec, req)
	var data struct {
		Servers []struct {
			Name     string                  `json:"name"`
			ToolList []struct{ Name string } `json:"toolList"`
		} `json:"servers"`
		SessionList []struct {
			Mode, Transport string
			LastActive      time.Time
		} `json:"sessionList"`
		Results []struct {
			Tool, Why string
			Score     float64
		} `json:"results"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &data); err != nil {
		t.Fatalf("JSON: %v\n%s", err, rec.Body.String())
	}
	if len(data.SessionList) == 1 && (data.SessionList[0].Transport != "stdio" || data.SessionList[0].LastActive.IsZero()) {
		t.Errorf("session: %+v, want transport stdio and a last request", data.SessionList[0])
	}
	if len(data.Servers) != 1 || len(data.Servers[0].ToolList) == 0 || len(data.SessionList) != 1 || len(data.Results) == 0 || data.Results[0].Tool != "alpha_echo" || data.Results[0].Why == "" {
		t.Errorf("JSON data: %+v", data)
	}
}

// Disabling a server from the page takes its tools from sessions and
// closes it, survives a reload, and enabling brings it back; the page
// shows the p50 of its calls and the line of its entry.
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
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	req.Header.Set("Authorization", "Bearer "+pageToken)
	h.ServeHTTP(rec, req)
	if body := rec.Body.String(); !strings.Contains(body, " ms</td>") || !strings.Contains(body, `action="/-/disable"`) {
		t.Errorf("the page lacks the p50 or the Disable button")
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
func pageHandler(gw *Server) http.Handler {
	mux := http.NewServeMux()
	statuspage.Register(mux, pageDaemon{gw}, func(h http.HandlerFunc) http.Handler { return h })
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
