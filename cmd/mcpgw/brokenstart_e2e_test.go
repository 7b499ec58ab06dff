package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// A daemon whose config does not load at start keeps running with no
// servers, says why (status, metric), and serves the file once it is fixed,
// rather than exiting into a systemd restart loop.
func TestBrokenConfigAtStart(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	saveFileInPlace(t, path, []byte(`{"mcpServers": {"a": {"command": "x", "lifecycle": "lazzy"}}}`))
	d := e2e.StartDaemon(t, dir, path)

	r := d.Report(t)
	if r.LastReload == nil || r.LastReload.OK || !strings.Contains(r.LastReload.Error, "lifecycle") {
		t.Fatalf("status after a broken start: %+v, want the error naming the field", r.LastReload)
	}
	if len(r.Servers) != 0 {
		t.Errorf("servers while broken: %v", reportServerNames(r))
	}
	if v := d.MetricValue(t, "mcpgw_config_last_reload_successful"); v != "0" {
		t.Errorf("mcpgw_config_last_reload_successful = %s, want 0", v)
	}
	// There was no good config to keep running: status says none runs.
	out, err := exec.Command(bin, "status", "--url", d.URL).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "does NOT load, so no servers run until it is fixed") ||
		!strings.Contains(string(out), "lifecycle") || strings.Contains(string(out), "last good config") ||
		strings.Contains(string(out), "No servers configured") {
		t.Errorf("mcpgw status after a broken start: %v\n%s", err, out)
	}
	// Nor does the mcp tool speak of one.
	if text, _ := connectGateway(t, d).mcp(map[string]any{}); !strings.Contains(text, "The config does not load, so no servers run until it is fixed") ||
		strings.Contains(text, "last good config") || strings.Contains(text, "No servers configured") {
		t.Errorf("mcp({}) after a broken start:\n%s", text)
	}

	start := time.Now()
	saveFileInPlace(t, path, mcpJSON(t, map[string]any{"a": pidServerEntry(bin, dir, "a")}, nil))
	if info := d.WaitReload(t, start); !info.OK {
		t.Fatalf("reload after the fix: %s", info.Error)
	}
	c := connectGateway(t, d)
	if pid := c.pid("a"); pid == 0 {
		t.Error("the fixed file's server does not answer")
	}
	if v := d.MetricValue(t, "mcpgw_config_last_reload_successful"); v != "1" {
		t.Errorf("after the fix mcpgw_config_last_reload_successful = %s, want 1", v)
	}
}
