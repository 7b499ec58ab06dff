package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
)

// No secret of the config is ever among the facts the hub gives the page:
// not in the page (HTML or JSON), the status report or a server's log.
// That the page's routes are protected (token, owner, cross-site,
// rebinding) is tested on fakes, in transport and statuspage.
func TestPageShowsNoSecret(t *testing.T) {
	srv := &registry.Server{Name: "gh", URL: "https://api.example.com/mcp?api_key=s3cr3t-query", Enabled: true, Auth: registry.AuthOAuth,
		Headers: map[string]string{"Authorization": "Bearer s3cr3t-header"}, BearerToken: "s3cr3t-bearer", Hash: "gh-hash"}
	local := &registry.Server{Name: "local", Command: "tool", Args: []string{"--token=s3cr3t-arg"}, Env: map[string]string{"API_KEY": "s3cr3t-env"}, Enabled: true, Hash: "local-hash"}
	cfg := &registry.Config{Servers: map[string]*registry.Server{"gh": srv, "local": local}}
	gw := New(cfg, &Options{NoBootstrap: true})
	defer gw.Close()
	h := pageHandler(gw)
	for _, r := range []struct{ target, accept string }{
		{"/", "text/html"},
		{"/", "application/json"},
		{"/-/logs?server=gh", ""},
		{"/-/logs?server=local", ""},
	} {
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+r.target, nil)
		req.Header.Set("Accept", r.accept)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkNoSecret(t, r.target+" "+r.accept, rec)
	}
	rec := httptest.NewRecorder()
	gw.serveStatus(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/-/status", nil))
	checkNoSecret(t, "/-/status", rec)
}

func checkNoSecret(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", what, rec.Code, body)
	}
	if i := strings.Index(body, "s3cr3t"); i >= 0 {
		t.Errorf("%s shows a secret: …%s…", what, body[max(0, i-60):min(len(body), i+20)])
	}
}
