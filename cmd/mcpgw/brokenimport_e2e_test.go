//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestBrokenImportAtStart: another program's file that does not load (a
// truncated Claude Desktop config) is skipped at start with a warning
// naming it and where it breaks; mcpgw's own servers and the other
// imports run, and status and check say what was skipped. Fixing the file
// brings its servers; breaking it again keeps them (a half-saved file
// keeps the running configuration).
func TestBrokenImportAtStart(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	claude := filepath.Join(dir, "config", "Claude", "claude_desktop_config.json")
	const truncated = `{"mcpServers": {"cd": {"command": "x", "args": [`
	saveFileInPlace(t, claude, []byte(truncated))
	saveFileInPlace(t, filepath.Join(dir, ".cursor", "mcp.json"), mcpJSON(t, map[string]any{"cur": pidServerEntry(bin, dir, "cur")}, nil))
	config := filepath.Join(dir, "mcp.json")
	saveFileInPlace(t, config, mcpJSON(t, map[string]any{"own": pidServerEntry(bin, dir, "own")},
		map[string]any{"imports": []string{"claude-desktop", "cursor"}}))
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")

	status := func() string {
		t.Helper()
		out, err := exec.Command(bin, "status", "--url", d.URL).CombinedOutput()
		if err != nil {
			t.Fatalf("mcpgw status: %v\n%s", err, out)
		}
		return string(out)
	}
	out := status()
	t.Logf("mcpgw status:\n%s", out)
	if got := reportServerNames(d.Report(t)); strings.Join(got, " ") != "cur own" {
		t.Errorf("servers with the Claude Desktop file broken: %v, want cur and own", got)
	}
	if !strings.Contains(out, claude+":2:1: unexpected end of file") || !strings.Contains(out, "skipped") {
		t.Errorf("status does not say the broken file, where, and that it was skipped:\n%s", out)
	}
	if strings.Contains(out, "last good config") || strings.Contains(out, "No servers") {
		t.Errorf("status speaks of a last good config or no servers:\n%s", out)
	}
	c := connectGateway(t, d)
	if c.pid("own") == 0 || c.pid("cur") == 0 {
		t.Error("own or cur does not answer")
	}

	check := exec.Command(bin, "check", "--config", config)
	check.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	cout, err := check.CombinedOutput()
	t.Logf("mcpgw check: %v\n%s", err, cout)
	if err == nil || !strings.Contains(string(cout), claude+":2:1: unexpected end of file; skipped") ||
		!strings.Contains(string(cout), "own") || !strings.Contains(string(cout), "cur") {
		t.Errorf("mcpgw check with a broken import: %v, want a failure naming the file, and the servers that load:\n%s", err, cout)
	}

	// The file still broken does not hold back an edit of mcpgw's own.
	// (Edits below are saved whole, so that no reload sees half a file.)
	start := time.Now()
	saveFileAtomic(t, config, mcpJSON(t, map[string]any{"own": pidServerEntry(bin, dir, "own"), "own2": pidServerEntry(bin, dir, "own2")},
		map[string]any{"imports": []string{"claude-desktop", "cursor"}}))
	if info := d.WaitReload(t, start); !info.OK {
		t.Fatalf("reload of mcpgw's own file while the import stays broken: %s", info.Error)
	}
	if got := reportServerNames(d.Report(t)); strings.Join(got, " ") != "cur own own2" {
		t.Errorf("servers after adding own2: %v, want cur, own and own2", got)
	}

	start = time.Now()
	saveFileAtomic(t, claude, mcpJSON(t, map[string]any{"cd": pidServerEntry(bin, dir, "cd")}, nil))
	if info := d.WaitReload(t, start); !info.OK {
		t.Fatalf("reload after fixing the file: %s", info.Error)
	}
	if got := reportServerNames(d.Report(t)); strings.Join(got, " ") != "cd cur own own2" {
		t.Errorf("servers once the file is fixed: %v, want cd, cur, own and own2", got)
	}

	start = time.Now()
	saveFileAtomic(t, claude, []byte(truncated))
	if info := d.WaitReload(t, start); info.OK || info.NoConfig {
		t.Fatalf("reload of a half-saved file: %+v, want a failure that keeps the running config", info)
	}
	if got := reportServerNames(d.Report(t)); strings.Join(got, " ") != "cd cur own own2" {
		t.Errorf("servers after the file broke again: %v, want the last good config's cd, cur, own and own2", got)
	}
	if out := status(); !strings.Contains(out, "running the last good config") {
		t.Errorf("status after a failed reload:\n%s", out)
	}
}
