//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/internal/proctest"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// foreignPage is what another program on mcpgw's port answers.
const foreignPage = "<html>another program's 404 page</html>"

// listenForeign runs another program's HTTP server on a loopback port and
// returns its address.
func listenForeign(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "another-program/1.0")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, foreignPage)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestDaemonWithoutHTTPReachable: a daemon the shim started while another
// program held the HTTP port serves the socket only; the CLI reaches it
// there (status, tools, logs, approve: a call waiting for approval is
// approved and answers), says why it has no page, and never shows the
// other program's page as mcpgw's. With no daemon at all, the CLI says
// what answers on the port is not mcpgw.
func TestDaemonWithoutHTTPReachable(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	addr := listenForeign(t)
	config := e2e.WriteConfig(t, dir, map[string]any{
		"g": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "approveTools": []string{"echo"}},
	}, map[string]any{"approvalTimeoutMs": 120000})
	env := []string{"MCPGW_TOKEN=", "MCPGW_URL=", "HOME=" + dir, "XDG_RUNTIME_DIR=" + filepath.Join(dir, "run"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"), "MCPGW_LISTEN=" + addr}
	cli := func(args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if strings.Contains(string(out), foreignPage) {
			t.Errorf("mcpgw %s shows the other program's page:\n%s", strings.Join(args, " "), out)
		}
		return string(out), err
	}

	// The shim starts the daemon (its environment is the client's); the
	// daemon is stopped after the shim has gone (else it starts another).
	t.Cleanup(func() {
		if pid := socketPeerPID(filepath.Join(dir, "run", "mcpgw", "mcpgw.sock")); pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			e2e.PollUntil(t, "the daemon to stop", func() bool { return !proctest.Alive(pid) })
		}
	})
	shim := exec.Command(bin, "stdio", "--config", config)
	shim.Env = append(os.Environ(), env...)
	c := startShimCmd(t, shim)
	c.initialize("socket-only-test")

	out, err := cli("status", "--json")
	var r api.Report
	if err != nil || json.Unmarshal([]byte(out), &r) != nil || r.PID <= 0 {
		t.Fatalf("mcpgw status --json: %v\n%s", err, out)
	}
	if r.HTTP != "" || r.HTTPError != addr+" is taken by another program" {
		t.Errorf("report: HTTP %q, HTTPError %q", r.HTTP, r.HTTPError)
	}
	out, err = cli("status")
	t.Logf("mcpgw status:\n%s", out)
	if err != nil || !strings.Contains(out, fmt.Sprintf("pid %d", r.PID)) ||
		!strings.Contains(out, "http:   none, "+addr+" is taken by another program") {
		t.Errorf("mcpgw status: %v\n%s", err, out)
	}
	// Its tools, and a read_ tool for each resource.
	want := fmt.Sprintf("- g: connected, %d tools", len(fakeupstream.ToolNames)+len(fakeupstream.ResourceURIs))
	if out, err = cli("tools"); err != nil || !strings.Contains(out, want) {
		t.Errorf("mcpgw tools: %v\n%s", err, out)
	}
	if out, err = cli("logs", "g"); err != nil || !strings.Contains(out, "upstream connected") {
		t.Errorf("mcpgw logs g: %v\n%s", err, out)
	}
	out, err = cli("ui", "--no-open")
	t.Logf("mcpgw ui: %v\n%s", err, out)
	if err == nil || !strings.Contains(out, fmt.Sprintf("mcpgw's daemon (pid %d) runs without HTTP, so it has no page: %s is taken by another program", r.PID, addr)) {
		t.Errorf("mcpgw ui: %v\n%s", err, out)
	}

	// A call that waits for approval is approved through the socket.
	call := c.send("tools/call", map[string]any{"name": "mcp", "arguments": map[string]any{"tool": "g_echo", "args": map[string]any{"message": "approved"}}})
	var id string
	e2e.PollUntil(t, "the call to wait for approval", func() bool {
		out, err := cli("approve", "--list")
		if err != nil {
			t.Fatalf("mcpgw approve --list: %v\n%s", err, out)
		}
		if f := strings.Fields(out); len(f) > 2 && f[1] == "echo" {
			id = f[0]
		}
		return id != ""
	})
	if out, err := cli("approve", id); err != nil {
		t.Fatalf("mcpgw approve %s: %v\n%s", id, err, out)
	}
	ans := c.answer(call)
	if res, _ := ans["result"].(map[string]any); res == nil || res["isError"] == true || !strings.Contains(fmt.Sprint(res["content"]), "approved") {
		t.Errorf("the approved call: %v", ans)
	}

	// No daemon (another runtime directory, so no socket): what answers
	// on the port is not mcpgw, and is not shown.
	env = append(env, "XDG_RUNTIME_DIR="+filepath.Join(dir, "elsewhere"))
	out, err = cli("status")
	t.Logf("mcpgw status with no daemon: %v\n%s", err, out)
	if err == nil || !strings.Contains(out, "what answers at http://"+addr+" is not one: it answered 404 Not Found") {
		t.Errorf("mcpgw status with no daemon and another program on the port: %v\n%s", err, out)
	}
	out, err = cli("status", "--url", "http://"+addr)
	if err == nil || !strings.Contains(out, "what answers at http://"+addr+" is not an mcpgw daemon: it answered 404 Not Found") {
		t.Errorf("mcpgw status --url (another program): %v\n%s", err, out)
	}
}

// socketPeerPID is the PID of the process listening on the unix socket
// path, 0 if none answers.
func socketPeerPID(path string) int {
	conn, err := net.Dial("unix", path)
	if err != nil {
		return 0
	}
	defer conn.Close()
	raw, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		return 0
	}
	var cred *syscall.Ucred
	_ = raw.Control(func(fd uintptr) {
		cred, _ = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	})
	if cred == nil {
		return 0
	}
	return int(cred.Pid)
}
