//go:build unix

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Root is the module's directory, an absolute path.
var Root = func() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("e2e: no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}()

// nodeDir holds the node package of the end-to-end tests, with the
// clients and servers they run.
var nodeDir = filepath.Join(Root, "cmd", "mcpgw", "testdata", "e2e")

// NPMInstallHint is the command that installs nodeDir's packages.
const NPMInstallHint = "(cd cmd/mcpgw/testdata/e2e && npm ci --no-audit --no-fund)"

const everythingPkg = "node_modules/@modelcontextprotocol/server-everything"

// Path returns the absolute path of rel inside the end-to-end tests' node
// package (cmd/mcpgw/testdata/e2e).
func Path(rel string) string { return filepath.Join(nodeDir, rel) }

// NeedNode returns the path of node after checking that the e2e node
// packages are installed. When either is missing it fails the test if the
// environment variable CI is set, and skips it otherwise.
func NeedNode(t testing.TB) string {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") != "" {
			t.Fatalf("%s; install with: %s", msg, NPMInstallHint)
		}
		t.Skipf("%s; install with: %s", msg, NPMInstallHint)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found on PATH (Node.js 20 or later)")
	}
	for _, f := range []string{
		"node_modules/@modelcontextprotocol/sdk/package.json",
		everythingPkg + "/dist/index.js",
	} {
		if _, err := os.Stat(Path(f)); err != nil {
			missing("e2e node packages not installed: %v", err)
		}
	}
	return node
}

// everythingStdioCommand returns the command line that runs server-everything
// over stdio, with absolute paths, for an upstream's "command" and "args".
// Call needNode first.
func EverythingStdio() (cmd string, args []string) {
	node, err := exec.LookPath("node")
	if err != nil {
		node = "node"
	}
	return node, []string{Path(everythingPkg + "/dist/index.js"), "stdio"}
}

// startEverything starts server-everything on a free loopback port in mode
// "streamableHttp" or "sse", waits until it answers HTTP and returns its MCP
// endpoint: http://127.0.0.1:P/mcp or http://127.0.0.1:P/sse. The process
// group is ended when the test finishes.
func StartEverything(t testing.TB, mode string) (url string) {
	t.Helper()
	node := NeedNode(t)
	var path string
	switch mode {
	case "streamableHttp":
		path = "/mcp"
	case "sse":
		path = "/sse"
	default:
		t.Fatalf("startEverything: unknown mode %q (want streamableHttp or sse)", mode)
	}
	// freePort's port can be taken again before node binds it; a process that
	// exits before it is ready is retried on another port. It is ready when
	// it holds a socket listening on the port: not when something answers
	// there (that could be the process that took it), nor when it says it
	// listens (it says so when it failed to, too).
	var lastErr error
	for range 3 {
		port := pickPort(t)
		cmd := exec.Command(node, Path(everythingPkg+"/dist/index.js"), mode)
		cmd.Dir = Path(".")
		cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
		p := StartProcess(t, cmd)
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		if lastErr = waitListening(p, port, base, WaitLimit); lastErr == nil {
			return base + path
		}
		p.Stop()
		t.Logf("server-everything %s on port %d: %v; output:\n%s", mode, port, lastErr, p.Output.String())
	}
	t.Fatalf("starting server-everything %s: %v", mode, lastErr)
	return ""
}

// waitListening waits until p holds a TCP socket listening on port, p
// exits, or timeout passes. Without /proc (not Linux) it waits for an
// answer at base instead.
func waitListening(p *Process, port int, base string, timeout time.Duration) error {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		return WaitHTTPOrExit(base+"/", p.Exited, timeout)
	}
	deadline := time.Now().Add(timeout)
	for !listensOn(p.Cmd.Process.Pid, port) {
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on port %d after %v", port, timeout)
		}
		select {
		case <-p.Exited:
			return fmt.Errorf("it exited before listening on port %d", port)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// listensOn reports whether process pid has a socket listening on TCP
// port: one of its descriptors is a socket that /proc/net/tcp or tcp6
// lists in state LISTEN on that port.
func listensOn(pid, port int) bool {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			if len(f) < 10 || f[3] != "0A" {
				continue
			}
			if _, hexPort, ok := strings.Cut(f[1], ":"); ok && hexPort == fmt.Sprintf("%04X", port) {
				inodes[f[9]] = true
			}
		}
	}
	if len(inodes) == 0 {
		return false
	}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok && inodes[strings.TrimSuffix(inode, "]")] {
			return true
		}
	}
	return false
}
