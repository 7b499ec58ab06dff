//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProjectOverlay: a project's .mcp.json adds a server for sessions
// working there, only once the directory is trusted; sessions elsewhere
// never see it, and an untrusted project's server is listed but never
// started.
func TestProjectOverlay(t *testing.T) {
	t.Parallel()
	needNode(t)
	buildMcpgw(t)
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "proj.pids")
	config := writeConfig(t, dir, map[string]any{
		"go": map[string]any{"command": testServerBin, "args": []string{"testserver"}},
	}, nil)
	proj := filepath.Join(dir, "proj")
	other := filepath.Join(dir, "other")
	for _, p := range []string{proj, other} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	projCfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"proj": map[string]any{"command": testServerBin, "args": []string{"testserver"},
			"env": map[string]string{"MCPGW_TESTSERVER_PIDFILE": pidfile}},
	}})
	if err := os.WriteFile(filepath.Join(proj, ".mcp.json"), projCfg, 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemonProc(t, dir, config, "--no-bootstrap")
	in := func(cwd string) Target {
		return Target{URL: d.mcpURL(), Headers: map[string]string{"Mcp-Gateway-Cwd": cwd}}
	}

	untrusted := runClient(t, in(proj), []Step{
		mcpCall(map[string]any{}),
		mcpCall(map[string]any{"tool": "proj_pid"}),
	})
	if st := untrusted[0].Text(); !strings.Contains(st, "- proj: untrusted") || !strings.HasPrefix(st, "MCP: 0/1 servers") {
		t.Errorf("untrusted project status:\n%s", st)
	}
	if r := untrusted[1]; !r.IsError() || !strings.Contains(r.Text(), "not trusted") {
		t.Errorf("calling an untrusted project's tool = %v", r)
	}
	if _, err := os.Stat(pidfile); err == nil {
		t.Fatal("an untrusted project's server was started")
	}

	trust, _ := json.Marshal(map[string]any{"version": 1, "trusted": []string{proj}})
	trustPath := filepath.Join(dir, "state", "mcpgw", "trust.json")
	if err := os.MkdirAll(filepath.Dir(trustPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(trustPath, trust, 0o600); err != nil {
		t.Fatal(err)
	}

	trusted := runClient(t, in(proj), []Step{
		mcpCall(map[string]any{"tool": "proj_echo", "args": map[string]any{"message": "from the project"}}),
		mcpCall(map[string]any{"tool": "go_echo", "args": map[string]any{"message": "from the daemon"}}),
	})
	if r := trusted[0]; r.IsError() || r.Text() != "from the project" {
		t.Errorf("trusted project's tool = %v", r)
	}
	if r := trusted[1]; r.IsError() || r.Text() != "from the daemon" {
		t.Errorf("daemon's tool from a project session = %v", r)
	}
	elsewhere := runClient(t, in(other), []Step{
		mcpCall(map[string]any{}),
		mcpCall(map[string]any{"tool": "proj_echo", "args": map[string]any{"message": "x"}}),
	})
	if st := elsewhere[0].Text(); strings.Contains(st, "proj") {
		t.Errorf("a session in another directory sees the project's server:\n%s", st)
	}
	if r := elsewhere[1]; !r.IsError() {
		t.Errorf("a session elsewhere called the project's tool: %v", r)
	}
}
