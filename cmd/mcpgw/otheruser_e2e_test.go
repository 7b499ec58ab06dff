//go:build linux

package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestOtherUserRefused: another local account reaches the daemon's
// loopback port but may not use /mcp or the control endpoints (the daemon
// holds its owner's credentials); /healthz and /metrics stay open to local
// scrapers. Runs as root, which can act as the nobody account.
func TestOtherUserRefused(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to connect as another user")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not found")
	}
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{}, nil)
	d := e2e.StartDaemon(t, dir, config)
	status := func(uid uint32, method, path, body string) string {
		t.Helper()
		args := []string{"-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", method, d.URL + path}
		socket := strings.HasPrefix(path, "unix:") // the shim's socket
		if socket {
			path = strings.TrimPrefix(path, "unix:")
			args = []string{"-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", method, "--unix-socket", d.Socket, "http://localhost" + path}
		}
		if body != "" {
			args = append(args, "-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream", "--data", body)
		}
		cmd := exec.Command(curl, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.Output()
		if socket {
			// The socket speaks lines, not HTTP: what matters is whether
			// curl could connect (its exit status 7 says it could not).
			if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 7 {
				return "no connection"
			}
			return "connected"
		}
		if err != nil {
			t.Fatalf("curl as uid %d: %v", uid, err)
		}
		return strings.TrimSpace(string(out))
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		uid                uint32
		method, path, body string
		want               string
	}{
		{65534, "POST", "/mcp", initialize, "403"},
		{65534, "GET", "/-/status", "", "403"},
		{65534, "POST", "/-/reload", "", "403"},
		{65534, "GET", "/healthz", "", "200"},
		{65534, "GET", "/metrics", "", "200"},
		{0, "POST", "/mcp", initialize, "200"},
		{0, "GET", "/-/status", "", "200"},
		// The socket is the owner's alone (0600 in a 0700 directory, and
		// the peer's UID checked): another user cannot even connect.
		{65534, "POST", "unix:/mcp", initialize, "no connection"},
		{0, "POST", "unix:/mcp", initialize, "connected"},
	} {
		if got := status(tc.uid, tc.method, tc.path, tc.body); got != tc.want {
			t.Errorf("uid %d %s %s: %s, want %s", tc.uid, tc.method, tc.path, got, tc.want)
		}
	}
}

func TestAllowRemoteNeedsToken(t *testing.T) {
	t.Setenv("MCPGW_TOKEN", "")
	dir := t.TempDir()
	_, _, err := runCmd(t, "serve", "--listen", "0.0.0.0:0", "--allow-remote", "--config", dir+"/mcp.json", "--socket", "")
	if err == nil || !strings.Contains(err.Error(), "--allow-remote needs a token") {
		t.Errorf("serve --allow-remote without a token: %v", err)
	}
}

// serve -h never prints the token's value.
func TestServeHelpHidesToken(t *testing.T) {
	t.Setenv("MCPGW_TOKEN", "s3cr3t-value")
	_, stderr, _ := runCmd(t, "serve", "-h")
	if strings.Contains(stderr, "s3cr3t-value") || !strings.Contains(stderr, "now set") {
		t.Errorf("serve -h:\n%s", stderr)
	}
}

// `mcpgw help CMD` shows that command's flags, as `mcpgw CMD -h` does.
func TestHelpCommand(t *testing.T) {
	t.Parallel()
	out, _, err := runCmd(t, "help", "stdio")
	if err != nil || !strings.Contains(out, "-client-prefix") || strings.Contains(out, "mcpgw serve [--config FILE]") {
		t.Errorf("help stdio: %v\n%s", err, out)
	}
	out, _, err = runCmd(t, "help")
	if err != nil || !strings.Contains(out, "mcpgw serve [--config FILE]") {
		t.Errorf("help: %v\n%s", err, out)
	}
}
