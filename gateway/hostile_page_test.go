package gateway

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
)

// Every state-changing request of the status page is refused from a
// hostile origin (a cross-site form or fetch), under a foreign Host name (DNS
// rebinding) and without the token; and no secret of the config is ever
// rendered, in HTML or JSON.
func TestPageRefusesHostileRequests(t *testing.T) {
	t.Parallel()
	srv := &registry.Server{Name: "gh", URL: "https://api.example.com/mcp?api_key=s3cr3t-query", Enabled: true,
		Headers: map[string]string{"Authorization": "Bearer s3cr3t-header"}, BearerToken: "s3cr3t-bearer", Hash: "gh-hash"}
	local := &registry.Server{Name: "local", Command: "tool", Args: []string{"--token=s3cr3t-arg"}, Env: map[string]string{"API_KEY": "s3cr3t-env"}, Enabled: true, Hash: "local-hash"}
	cfg := &registry.Config{Servers: map[string]*registry.Server{"gh": srv, "local": local}}
	gw := New(cfg, &Options{NoBootstrap: true})
	defer gw.Close()
	reloads := 0
	ts := httptest.NewUnstartedServer(gw.Handler(&HTTPOptions{Token: "tok", Reload: func() error { reloads++; return nil }}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.Listener = ln
	ts.Start()
	defer ts.Close()

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, body string, h map[string]string) int {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range h {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	auth := map[string]string{"Authorization": "Bearer tok"}
	crossSite := map[string]string{"Authorization": "Bearer tok", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
	rebinding := map[string]string{"Authorization": "Bearer tok", "Host": "evil.example:7332"}
	for _, ep := range []struct{ path, body string }{
		{"/-/connect", "server=local"},
		{"/-/disable", "server=local"},
		{"/-/enable", "server=local"},
		{"/-/trust", "dir=/tmp"},
		{"/-/refuse", "dir=/tmp"},
		{"/-/login", "server=gh"},
		{"/-/reload", ""},
		{"/", "token=tok"},
	} {
		for name, h := range map[string]map[string]string{"cross-site": crossSite, "rebinding": rebinding, "no token": nil} {
			if ep.path == "/" && name == "no token" {
				continue // the page's token form: posting the right token is how one gets in
			}
			if code := do(http.MethodPost, ep.path, ep.body, h); code != http.StatusForbidden && code != http.StatusUnauthorized {
				t.Errorf("POST %s (%s): %d, want 403 or 401", ep.path, name, code)
			}
		}
	}
	if reloads != 0 || gw.disabledHere("local") {
		t.Errorf("a hostile request took effect: %d reloads, local disabled %v", reloads, gw.disabledHere("local"))
	}
	// The same requests, legitimately, do take effect.
	if code := do(http.MethodPost, "/-/disable", "server=local", auth); code != http.StatusSeeOther || !gw.disabledHere("local") {
		t.Errorf("a same-origin disable with the token: %d", code)
	}
	for _, accept := range []string{"text/html", "application/json"} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+"/", nil)
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Accept", accept)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readBody(resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET / (%s): %d", accept, resp.StatusCode)
		}
		if strings.Contains(body, "s3cr3t") {
			i := strings.Index(body, "s3cr3t")
			t.Errorf("GET / (%s) renders a secret: …%s…", accept, body[max(0, i-60):min(len(body), i+20)])
		}
	}
}

func readBody(resp *http.Response) string {
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}
