//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/internal/shim/wire"
)

// TestShimAutoStartSharedDaemon: `mcpgw stdio` finds no daemon (only a
// stale socket file), starts one, and serves a real client; a second shim
// from another working directory reaches the same daemon and the same
// upstream process.
func TestShimAutoStartSharedDaemon(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
	}, nil)
	runDir := filepath.Join(dir, "run")
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(runDir, "mcpgw.sock")

	// A stale socket: a file nobody listens on.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	if err := os.Chmod(sock, 0o600); err != nil {
		t.Fatal(err)
	}

	port := e2e.FreePort(t)
	env := []string{
		"HOME=" + dir,
		"XDG_RUNTIME_DIR=" + dir, // the socket is $XDG_RUNTIME_DIR/mcpgw/mcpgw.sock by default; we pass --socket anyway
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		fmt.Sprintf("MCPGW_LISTEN=127.0.0.1:%d", port),
	}
	shim := []string{bin, "stdio", "--socket", sock, "--config", config}
	t.Cleanup(func() {
		e2e.StopDaemonOn(t, sock)
		e2e.StopDaemonAt(t, fmt.Sprintf("http://127.0.0.1:%d", port))
	})

	projA, projB := filepath.Join(dir, "projA"), filepath.Join(dir, "projB")
	for _, p := range []string{projA, projB} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	steps := []e2e.Step{
		{Op: "listTools"},
		e2e.MCPCall(map[string]any{"tool": "go_pid"}),
		e2e.MCPCall(map[string]any{"tool": "go_cwd"}),
	}
	a := e2e.RunClient(t, e2e.Target{Command: shim, Dir: projA, Env: env}, steps)
	for i, r := range a {
		if !r.OK || r.IsError() {
			t.Fatalf("first shim, step %d: %v", i, r)
		}
	}
	if got := e2e.ToolNames(t, a[0]); len(got) != 1 || got[0] != "mcp" {
		t.Errorf("shim session lists %v, want [mcp]", got)
	}
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("daemon socket %s: %v, mode %v; want a 0600 socket", sock, err, fi.Mode())
	}

	// Two shims at once from different directories: one daemon, one upstream.
	var runs []<-chan e2e.ClientRun
	for _, p := range []string{projA, projB} {
		runs = append(runs, e2e.GoClient(t, e2e.Target{Command: shim, Dir: p, Env: env}, steps[1:2]))
	}
	for _, run := range runs {
		res := (<-run).Check(t)
		if got := res[0].Text(); got != a[1].Text() {
			t.Errorf("a later shim reached upstream pid %q, want the shared %q", got, a[1].Text())
		}
	}
	// The daemon knows one session per shim: each said where it runs.
	st := e2e.DaemonStatus(t, fmt.Sprintf("http://127.0.0.1:%d", port))
	if len(st.Servers) != 1 || st.Servers[0].Calls < 4 {
		t.Errorf("daemon status servers = %+v, want go with ≥ 4 calls", st.Servers)
	}
}

// TestShimNewerHandshake: handshake fields are only ever added, so a
// shim of a later version (a higher protocol, fields this daemon does not
// know) is served, and a line that is no handshake is refused clearly.
func TestShimNewerHandshake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{}, nil)
	d := e2e.StartDaemon(t, dir, config)
	for _, tc := range []struct {
		line   string
		ok     bool
		errHas string
	}{
		{`{"mcpgw":7,"version":"9.9.9","someFutureField":{"x":1}}`, true, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, false, "not an mcpgw shim handshake"},
	} {
		conn, err := net.Dial("unix", d.Socket)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte(tc.line + "\n")); err != nil {
			t.Fatal(err)
		}
		var wel wire.Welcome
		if err := json.NewDecoder(conn).Decode(&wel); err != nil {
			t.Fatal(err)
		}
		conn.Close()
		if wel.OK != tc.ok || !strings.Contains(wel.Error, tc.errHas) {
			t.Errorf("%s: welcome = %+v", tc.line, wel)
		}
	}
}
