package gateway

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/statuspage"
	"github.com/mcpgw/mcpgw/registry"
)

// A session in a project whose .mcp.json defines servers puts the project
// on the status page with the commands it would run; Trust there trusts it
// (the session's servers become startable, as with `mcpgw trust`), Refuse
// hides another until the daemon stops.
func TestPagePendingProjects(t *testing.T) {
	t.Parallel()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config := filepath.Join(home, "mcp.json")
	write(config, `{"mcpServers": {}}`)
	projA, projB := filepath.Join(root, "src", "a"), filepath.Join(root, "src", "b")
	write(filepath.Join(projA, ".mcp.json"), `{"mcpServers": {"tool": {"command": "node", "args": ["tools/mcp.js"]}}}`)
	write(filepath.Join(projB, ".mcp.json"), `{"mcpServers": {"other": {"command": "other-mcp"}}}`)
	trustFile := filepath.Join(home, "trust.json")
	opts := &registry.LoadOptions{Home: home, TrustFile: trustFile}
	cfg, err := registry.Load(config, opts)
	if err != nil {
		t.Fatal(err)
	}
	gw := New(cfg, &Options{NoBootstrap: true, LoadOptions: opts, Trust: func() *registry.TrustStore {
		ts, err := registry.LoadTrust(trustFile)
		if err != nil {
			t.Error(err)
		}
		return ts
	}})
	defer gw.Close()
	gw.Start()
	connect(t, gw, SessionOptions{Cwd: projA})
	connect(t, gw, SessionOptions{Cwd: projB})

	h := gw.Handler(&HTTPOptions{Token: pageToken})
	page := func() []statuspage.Project {
		t.Helper()
		var d struct {
			Pending []statuspage.Project `json:"pending"`
		}
		pageJSON(t, h, &d)
		return d.Pending
	}
	post := func(path, dir string) int { return postForm(h, path, "dir="+dir) }
	p := page()
	if len(p) != 2 || p[0].Dir != projA || len(p[0].Servers) != 1 || p[0].Servers[0].Run != "node tools/mcp.js" || p[1].Dir != projB {
		t.Fatalf("pending projects: %+v", p)
	}
	if code := post("/-/trust", filepath.Join(root, "elsewhere")); code != http.StatusNotFound {
		t.Errorf("trusting a directory that is not pending: %d", code)
	}
	if code := post("/-/trust", projA); code != http.StatusSeeOther {
		t.Fatalf("POST /-/trust: %d", code)
	}
	if code := post("/-/refuse", projB); code != http.StatusSeeOther {
		t.Fatalf("POST /-/refuse: %d", code)
	}
	if p := page(); len(p) != 0 {
		t.Errorf("pending after trust and refuse: %+v", p)
	}
	ts, err := registry.LoadTrust(trustFile)
	if err != nil || ts.TrustedBy(projA) != projA || ts.TrustedBy(projB) != "" {
		t.Errorf("trust store after the page: %v %v", ts.Dirs(), err)
	}
	var sess *session
	for _, ss := range gw.sessionList() {
		if ss.opts.Cwd == projA {
			sess = ss
		}
	}
	if ov := sess.overlay.Load(); ov == nil || ov.Servers["tool"] == nil || ov.Servers["tool"].Untrusted {
		t.Errorf("the session in the trusted project: %+v", ov)
	}
}
