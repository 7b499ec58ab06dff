//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestLogFile: serve --log-file writes the daemon's log to that file (the
// shim passes it for the daemons it starts), bounded and rotated by size.
func TestLogFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpgw.log")
	config := filepath.Join(dir, "mcp.json")
	os.WriteFile(config, []byte(`{"mcpServers": {}}`), 0o600)
	cmd := exec.Command(e2e.BuildMcpgw(t), "serve", "--stdio", "--log-file", path, "--config", config, "--cache", filepath.Join(dir, "cache.json"))
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "state"))
	cmd.Stdin = strings.NewReader("")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), `"msg":`) {
		t.Errorf("log file: %v\n%s", err, data)
	}
}
