package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
)

// TestPageRenders renders the page (HTML and JSON) with sessions, servers
// and a search, so that a template mistake fails here rather than in a
// browser.
func TestPageRenders(t *testing.T) {
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeProxy}, "alpha")
	connectNow(t, gw, "alpha")
	connect(t, gw, SessionOptions{Cwd: "/home/u/project"})
	h := http.HandlerFunc(gw.servePage)
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
		SessionList []struct{ Mode string } `json:"sessionList"`
		Results     []struct {
			Tool, Why string
			Score     float64
		} `json:"results"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &data); err != nil {
		t.Fatalf("JSON: %v\n%s", err, rec.Body.String())
	}
	if len(data.Servers) != 1 || len(data.Servers[0].ToolList) == 0 || len(data.SessionList) != 1 || len(data.Results) == 0 || data.Results[0].Tool != "alpha_echo" || data.Results[0].Why == "" {
		t.Errorf("JSON data: %+v", data)
	}
}
