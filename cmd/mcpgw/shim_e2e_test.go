//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/shim/wire"
)

// TestShimAutoStartSharedDaemon: `mcpgw stdio` finds no daemon (only a
// stale socket file), starts one, and serves a real client; a second shim
// from another working directory reaches the same daemon and the same
// upstream process.
func TestShimAutoStartSharedDaemon(t *testing.T) {
	t.Parallel()
	NeedNode(t)
	bin := BuildMcpgw(t)
	dir := t.TempDir()
	config := WriteConfig(t, dir, map[string]any{
		"go": map[string]any{"command": TestServerBin, "args": []string{"testserver"}},
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

	port := FreePort(t)
	env := []string{
		"HOME=" + dir,
		"XDG_RUNTIME_DIR=" + dir, // the socket is $XDG_RUNTIME_DIR/mcpgw/mcpgw.sock by default; we pass --socket anyway
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		fmt.Sprintf("MCPGW_LISTEN=127.0.0.1:%d", port),
	}
	shim := []string{bin, "stdio", "--socket", sock, "--config", config}
	t.Cleanup(func() { StopDaemonAt(t, fmt.Sprintf("http://127.0.0.1:%d", port)) })

	projA, projB := filepath.Join(dir, "projA"), filepath.Join(dir, "projB")
	for _, p := range []string{projA, projB} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	steps := []Step{
		{Op: "listTools"},
		MCPCall(map[string]any{"tool": "go_pid"}),
		MCPCall(map[string]any{"tool": "go_cwd"}),
	}
	a := RunClient(t, Target{Command: shim, Dir: projA, Env: env}, steps)
	for i, r := range a {
		if !r.OK || r.IsError() {
			t.Fatalf("first shim, step %d: %v", i, r)
		}
	}
	if got := ToolNames(t, a[0]); len(got) != 1 || got[0] != "mcp" {
		t.Errorf("shim session lists %v, want [mcp]", got)
	}
	fi, err := os.Lstat(sock)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("daemon socket %s: %v, mode %v; want a 0600 socket", sock, err, fi.Mode())
	}

	// Two shims at once from different directories: one daemon, one upstream.
	var runs []<-chan ClientRun
	for _, p := range []string{projA, projB} {
		runs = append(runs, GoClient(t, Target{Command: shim, Dir: p, Env: env}, steps[1:2]))
	}
	for _, run := range runs {
		res := (<-run).Check(t)
		if got := res[0].Text(); got != a[1].Text() {
			t.Errorf("a later shim reached upstream pid %q, want the shared %q", got, a[1].Text())
		}
	}
	// The daemon knows one session per shim: each said where it runs.
	st := daemonStatus(t, fmt.Sprintf("http://127.0.0.1:%d", port))
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
	config := WriteConfig(t, dir, map[string]any{}, nil)
	d := StartDaemon(t, dir, config)
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

// daemonStatus is GET /-/status of the daemon at base.
func daemonStatus(t testing.TB, base string) *api.Report {
	t.Helper()
	resp, err := http.Get(base + "/-/status")
	if err != nil {
		t.Fatalf("GET /-/status: %v", err)
	}
	defer resp.Body.Close()
	var r api.Report
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("decoding /-/status: %v", err)
	}
	return &r
}

// stopDaemonAt ends a daemon the test did not start itself (one a shim
// started), found by its status endpoint.
func StopDaemonAt(t *testing.T, base string) {
	resp, err := http.Get(base + "/-/status")
	if err != nil {
		return
	}
	var r api.Report
	_ = json.NewDecoder(resp.Body).Decode(&r)
	resp.Body.Close()
	if r.PID <= 0 {
		return
	}
	_ = syscall.Kill(r.PID, syscall.SIGTERM)
	deadline := time.Now().Add(WaitLimit)
	for processAlive(r.PID) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if processAlive(r.PID) {
		_ = syscall.Kill(r.PID, syscall.SIGKILL)
	}
}
