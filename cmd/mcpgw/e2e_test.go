//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// daemon is a running `mcpgw serve` under test.
type Daemon struct {
	URL    string // http://127.0.0.1:P
	Dir    string // its private temp dir (HOME, cache, socket)
	Socket string
	Cache  string
	Proc   *Process
}

// mcpURL is the daemon's MCP endpoint.
func (d *Daemon) MCPURL() string { return d.URL + "/mcp" }

// writeConfig writes an mcp.json with the given servers into dir.
func WriteConfig(t testing.TB, dir string, servers map[string]any, settings map[string]any) string {
	t.Helper()
	cfg := map[string]any{"mcpServers": servers}
	if settings != nil {
		cfg["settings"] = settings
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startDaemon runs the mcpgw binary with config in dir, HOME pointed at dir
// so nothing outside the test is read or written, and waits for /healthz.
func StartDaemon(t testing.TB, dir, config string, extra ...string) *Daemon {
	t.Helper()
	bin := BuildMcpgw(t)
	port := FreePort(t)
	d := &Daemon{
		URL:    fmt.Sprintf("http://127.0.0.1:%d", port),
		Dir:    dir,
		Socket: filepath.Join(dir, "run", "mcpgw.sock"),
		Cache:  filepath.Join(dir, "cache.json"),
	}
	args := append([]string{"serve", "--config", config, "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--cache", d.Cache, "--socket", d.Socket, "--log-format", "text", "--log-level", "debug"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_RUNTIME_DIR="+filepath.Join(dir, "run"), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
	d.Proc = StartProcess(t, cmd)
	WaitHTTP(t, d.URL+"/healthz")
	return d
}

func Call(name string, args any) Step {
	return Step{Op: "callTool", Name: name, Arguments: args, TimeoutMs: 60000}
}

func MCPCall(args map[string]any) Step { return Call("mcp", args) }

// TestDaemonEndToEnd drives every mode of the `mcp` tool through the
// official TypeScript SDK client against a real daemon with real upstreams:
// server-everything over stdio, Streamable HTTP and SSE, and mcpgw's own
// test server over stdio.
func TestDaemonEndToEnd(t *testing.T) {
	t.Parallel()
	NeedNode(t)
	BuildMcpgw(t)
	httpURL := StartEverything(t, "streamableHttp")
	sseURL := StartEverything(t, "sse")
	node, args := EverythingStdio()
	dir := t.TempDir()
	config := WriteConfig(t, dir, map[string]any{
		"everything": map[string]any{"command": node, "args": args},
		"ehttp":      map[string]any{"url": httpURL},
		"esse":       map[string]any{"url": sseURL},
		"go":         map[string]any{"command": TestServerBin, "args": []string{"testserver"}},
	}, nil)
	d := StartDaemon(t, dir, config, "--no-bootstrap")

	results := RunClient(t, Target{URL: d.MCPURL()}, []Step{
		{Op: "listTools"},
		MCPCall(map[string]any{}),
		MCPCall(map[string]any{"tool": "everything_echo", "args": map[string]any{"message": "hi"}}),
		MCPCall(map[string]any{"tool": "ehttp_echo", "args": map[string]any{"message": "over http"}}),
		MCPCall(map[string]any{"tool": "esse_echo", "args": `{"message":"over sse"}`}),
		MCPCall(map[string]any{"tool": "go_echo", "args": map[string]any{"message": "from go"}}),
		MCPCall(map[string]any{}),
		MCPCall(map[string]any{"server": "everything"}),
		MCPCall(map[string]any{"search": "echo"}),
		MCPCall(map[string]any{"describe": "everything_echo"}),
		MCPCall(map[string]any{"tool": "everything_ecoh", "args": map[string]any{"message": "x"}}),
		MCPCall(map[string]any{"tool": "go_fail", "args": map[string]any{"message": "boom"}}),
		MCPCall(map[string]any{"tool": "go_echo", "args": map[string]any{"tool": "go_echo", "args": map[string]any{"message": "x"}}}),
		MCPCall(map[string]any{"connect": "go"}),
		MCPCall(map[string]any{"search": "^go_.*", "regex": true, "server": "go"}),
	})
	for i, r := range results {
		if !r.OK {
			t.Fatalf("step %d failed: %v", i, r)
		}
	}

	var tools struct {
		Tools []json.RawMessage `json:"tools"`
	}
	results[0].Decode(t, &tools)
	if len(tools.Tools) != 1 {
		t.Fatalf("client sees %d tools, want exactly 1 (mcp): %s", len(tools.Tools), results[0].Result)
	}
	var def struct{ Name string }
	_ = json.Unmarshal(tools.Tools[0], &def)
	if def.Name != "mcp" {
		t.Fatalf("the one tool is %q, want mcp", def.Name)
	}
	t.Logf("tool surface: %d bytes", len(tools.Tools[0]))
	if len(tools.Tools[0]) >= 1000 {
		t.Errorf("mcp tool definition is %d bytes, want < 1000", len(tools.Tools[0]))
	}

	first := results[1].Text()
	if !strings.HasPrefix(first, "MCP: 0/4 servers, 0 tools") {
		t.Errorf("status before any call = %q, want it to start with %q", first, "MCP: 0/4 servers, 0 tools")
	}
	for _, want := range []string{"- everything: not connected", "- ehttp: not connected", "- go: not connected"} {
		if !strings.Contains(first, want) {
			t.Errorf("status before any call lacks %q:\n%s", want, first)
		}
	}

	wantText := map[int]string{2: "Echo: hi", 3: "Echo: over http", 4: "Echo: over sse", 5: "from go"}
	for i, want := range wantText {
		if r := results[i]; r.IsError() || r.Text() != want {
			t.Errorf("step %d: got %q (isError %v), want %q", i, r.Text(), r.IsError(), want)
		}
	}

	status := results[6].Text()
	if !strings.HasPrefix(status, "MCP: 4/4 servers, ") {
		t.Errorf("status after calls = %q, want 4/4 connected", firstLine(status))
	}
	if !strings.Contains(status, "- everything: connected, ") || !strings.Contains(status, "- esse: connected, ") {
		t.Errorf("status lacks connected lines:\n%s", status)
	}

	list := results[7].Text()
	if !strings.Contains(list, "\neverything_echo - ") {
		t.Errorf("server list lacks everything_echo:\n%s", list)
	}
	search := results[8].Text()
	if !strings.Contains(search, "tools match \"echo\"") {
		t.Errorf("search header missing:\n%s", search)
	}
	for _, want := range []string{"everything_echo", "ehttp_echo", "esse_echo", "go_echo"} {
		if !strings.Contains(search, want) {
			t.Errorf("search for echo lacks %s:\n%s", want, search)
		}
	}
	describe := results[9].Text()
	if !strings.Contains(describe, "\n  message: string;") {
		t.Errorf("describe lacks the message parameter:\n%s", describe)
	}
	if r := results[10]; !r.IsError() || !strings.Contains(r.Text(), "Did you mean: everything_echo") {
		t.Errorf("unknown tool answer = %q, want a suggestion of everything_echo", r.Text())
	}
	if r := results[11]; !r.IsError() || !strings.Contains(r.Text(), "boom") || !strings.Contains(r.Text(), "Parameters of go_fail") {
		t.Errorf("upstream error = %q, want the error and the expected parameters", r.Text())
	}
	if r := results[12]; !r.IsError() || !strings.Contains(r.Text(), "arguments of the mcp tool itself") {
		t.Errorf("nested gateway args = %q, want a clear message", r.Text())
	}
	if r := results[13]; r.IsError() || !strings.Contains(r.Text(), "go: connected") || !strings.Contains(r.Text(), "go_echo - ") {
		t.Errorf("connect go = %q", r.Text())
	}
	if r := results[14]; r.IsError() || !strings.Contains(r.Text(), "go_echo") || strings.Contains(r.Text(), "everything_") {
		t.Errorf("regex search narrowed to go = %q", r.Text())
	}
}

// TestConcurrentSessionsShareOneUpstream: two downstream sessions calling
// the same lazy server at once start exactly one upstream process.
func TestConcurrentSessionsShareOneUpstream(t *testing.T) {
	t.Parallel()
	NeedNode(t)
	BuildMcpgw(t)
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pids")
	config := WriteConfig(t, dir, map[string]any{
		"go": map[string]any{"command": TestServerBin, "args": []string{"testserver"},
			"env": map[string]string{"MCPGW_TESTSERVER_PIDFILE": pidfile}},
	}, nil)
	d := StartDaemon(t, dir, config, "--no-bootstrap")

	runs := make([]<-chan ClientRun, 4)
	for i := range runs {
		runs[i] = GoClient(t, Target{URL: d.MCPURL()}, []Step{MCPCall(map[string]any{"tool": "go_pid"})})
	}
	pids := make([]string, len(runs))
	for i, run := range runs {
		pids[i] = (<-run).Check(t)[0].Text()
	}
	data, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatalf("upstream never started: %v", err)
	}
	started := strings.Fields(string(data))
	if len(started) != 1 {
		t.Fatalf("%d upstream processes started (%v), want 1", len(started), started)
	}
	for i, p := range pids {
		if p != started[0] {
			t.Errorf("session %d reached pid %q, want %s", i, p, started[0])
		}
	}
	if slices.Contains(pids, "") {
		t.Errorf("some session got no answer: %q", pids)
	}
}
