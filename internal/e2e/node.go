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
	// it says it listens, not when something answers at the port: that could
	// be the process that took it.
	var lastErr error
	for range 3 {
		port := FreePort(t)
		cmd := exec.Command(node, Path(everythingPkg+"/dist/index.js"), mode)
		cmd.Dir = Path(".")
		cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
		p := StartProcess(t, cmd)
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		if lastErr = waitOutput(p, fmt.Sprintf("on port %d\n", port), WaitLimit); lastErr == nil {
			return base + path
		}
		p.Stop()
		t.Logf("server-everything %s on port %d: %v; output:\n%s", mode, port, lastErr, p.Output.String())
	}
	t.Fatalf("starting server-everything %s: %v", mode, lastErr)
	return ""
}

// waitOutput waits until p's output holds text, p exits, or timeout passes.
func waitOutput(p *Process, text string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.Output.String(), text) {
		if time.Now().After(deadline) {
			return fmt.Errorf("no %q in its output after %v", text, timeout)
		}
		select {
		case <-p.Exited:
			return fmt.Errorf("it exited before saying %q", text)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
