//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestProjectOverlay: a project's .mcp.json adds a server for sessions
// working there, only once the directory is trusted; sessions elsewhere
// never see it, and an untrusted project's server is listed but never
// started.
func TestProjectOverlay(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	e2e.BuildMcpgw(t)
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "proj.pids")
	config := e2e.WriteConfig(t, dir, map[string]any{
		"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
	}, nil)
	proj := filepath.Join(dir, "proj")
	other := filepath.Join(dir, "other")
	for _, p := range []string{proj, other} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	projCfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"proj": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"},
			"env": map[string]string{"MCPGW_TESTSERVER_PIDFILE": pidfile}},
	}})
	if err := os.WriteFile(filepath.Join(proj, ".mcp.json"), projCfg, 0o644); err != nil {
		t.Fatal(err)
	}
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	in := func(cwd string) e2e.Target {
		return e2e.Target{URL: d.MCPURL(), Headers: map[string]string{"Mcp-Gateway-Cwd": cwd}}
	}

	untrusted := e2e.RunClient(t, in(proj), []e2e.Step{
		e2e.MCPCall(map[string]any{}),
		e2e.MCPCall(map[string]any{"tool": "proj_pid"}),
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

	trusted := e2e.RunClient(t, in(proj), []e2e.Step{
		e2e.MCPCall(map[string]any{"tool": "proj_echo", "args": map[string]any{"message": "from the project"}}),
		e2e.MCPCall(map[string]any{"tool": "go_echo", "args": map[string]any{"message": "from the daemon"}}),
	})
	if r := trusted[0]; r.IsError() || r.Text() != "from the project" {
		t.Errorf("trusted project's tool = %v", r)
	}
	if r := trusted[1]; r.IsError() || r.Text() != "from the daemon" {
		t.Errorf("daemon's tool from a project session = %v", r)
	}
	elsewhere := e2e.RunClient(t, in(other), []e2e.Step{
		e2e.MCPCall(map[string]any{}),
		e2e.MCPCall(map[string]any{"tool": "proj_echo", "args": map[string]any{"message": "x"}}),
	})
	if st := elsewhere[0].Text(); strings.Contains(st, "proj") {
		t.Errorf("a session in another directory sees the project's server:\n%s", st)
	}
	if r := elsewhere[1]; !r.IsError() {
		t.Errorf("a session elsewhere called the project's tool: %v", r)
	}
}

// TestProjectOnlyRestrictsE2E: a trusted project's .mcp.json that defines
// a server of the same name as the user's does not replace it: in that
// directory the user's excludeTools still hide a tool, the user's
// approveTools still ask (and a declined call never reaches the
// upstream), the user's command and env run, and the project's own
// excludeTools apply on top. `mcpgw check --project` shows the result.
func TestProjectOnlyRestrictsE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"p": e2e.PolicyServer(map[string]any{"excludeTools": []string{"echo"}, "approveTools": "destructive"}),
	}, map[string]any{"approvalTimeoutMs": 120000})
	proj := filepath.Join(dir, "proj")
	e2e.WriteJSON(t, filepath.Join(proj, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
		"p": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"},
			"env":          map[string]string{fakeupstream.EnvPolicy: "1", "FROM_PROJECT": "1"},
			"excludeTools": []string{"read_thing"}},
	}})
	e2e.WriteJSON(t, filepath.Join(dir, "state", "mcpgw", "trust.json"), map[string]any{"version": 1, "trusted": []string{proj}})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")

	r := e2e.RunClient(t, e2e.Target{URL: d.MCPURL(), Headers: map[string]string{"Mcp-Gateway-Cwd": proj}, Elicit: "decline"}, []e2e.Step{
		e2e.MCPCall(map[string]any{"tool": "p_echo", "args": map[string]any{"message": "excluded by the user"}}),
		e2e.MCPCall(map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "alpha"}}),
		e2e.MCPCall(map[string]any{"tool": "p_read_thing", "args": map[string]any{"name": "x"}}),
		e2e.MCPCall(map[string]any{"tool": "p_environ"}),
		e2e.MCPCall(map[string]any{"tool": "p_delete_count"}),
		{Op: "notifications"},
	})
	if got := r[0].Text(); !r[0].IsError() || strings.Contains(got, "excluded by the user") {
		t.Errorf("the user's excluded tool ran in the project: %v", r[0])
	}
	if got := r[1].Text(); !r[1].IsError() || !strings.Contains(got, "denied") {
		t.Errorf("a destructive call the user asks about, declined: %v", r[1])
	}
	if !r[2].IsError() || strings.Contains(r[2].Text(), "read x") {
		t.Errorf("the project's excluded tool ran: %v", r[2])
	}
	if got := r[3].Text(); r[3].IsError() || !strings.Contains(got, fakeupstream.EnvPolicy) || strings.Contains(got, "FROM_PROJECT") {
		t.Errorf("the upstream's environment: %q (isError %v); want the user's definition's, without FROM_PROJECT", got, r[3].IsError())
	}
	if got := r[4].Text(); got != "0" {
		t.Errorf("delete_thing calls that reached the upstream: %q, want 0", got)
	}
	if asked := elicitations(t, r[5]); len(asked) != 1 || !strings.Contains(asked[0], "delete_thing") {
		t.Errorf("the session was asked %q, want once about delete_thing", asked)
	}

	cmd := exec.Command(bin, "check", "--config", config, "--project", proj)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mcpgw check --project: %v\n%s", err, out)
	}
	for _, want := range []string{
		"project: " + proj + ", trusted",
		"  p (" + config + "):",
		`    approveTools "destructive" (mcpServers.p.approveTools; overrides settings)`,
		`    excluded: ["echo", "read_thing"]`,
		`    from restricted by ` + filepath.Join(proj, ".mcp.json") + `: excludeTools ["read_thing"]`,
		filepath.Join(proj, ".mcp.json") + ": mcpServers.p: env ignored: the server is yours (" + config + ")",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("mcpgw check --project lacks %q:\n%s", want, out)
		}
	}
}
