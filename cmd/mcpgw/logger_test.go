//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLogDurations: durations read as durations in every log format, not
// as nanoseconds.
func TestLogDurations(t *testing.T) {
	for _, format := range []string{"json", "text", "auto"} {
		var buf bytes.Buffer
		log, err := newLogger(&buf, "info", format)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("call", "duration", 1234567*time.Nanosecond, "took", 2*time.Second+345*time.Millisecond+6*time.Microsecond)
		out := buf.String()
		for _, want := range []string{"1.23ms", "2.345s"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %q lacks %s", format, out, want)
			}
		}
		if strings.Contains(out, "1234567") {
			t.Errorf("%s: nanoseconds in %q", format, out)
		}
	}
}

// TestLogFile: serve --log-file writes the daemon's log to that file (the
// shim passes it for the daemons it starts), bounded and rotated by size.
func TestLogFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcpgw.log")
	config := filepath.Join(dir, "mcp.json")
	os.WriteFile(config, []byte(`{"mcpServers": {}}`), 0o600)
	cmd := exec.Command(buildMcpgw(t), "serve", "--stdio", "--log-file", path, "--config", config, "--cache", filepath.Join(dir, "cache.json"))
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
