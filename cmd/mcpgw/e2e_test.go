//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestDaemonEndToEnd drives every mode of the `mcp` tool through the
// official TypeScript SDK client against a real daemon with real upstreams:
// server-everything over stdio, Streamable HTTP and SSE, and mcpgw's own
// test server over stdio.
func TestDaemonEndToEnd(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	e2e.BuildMcpgw(t)
	httpURL := e2e.StartEverything(t, "streamableHttp")
	sseURL := e2e.StartEverything(t, "sse")
	node, args := e2e.EverythingStdio()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"everything": map[string]any{"command": node, "args": args},
		"ehttp":      map[string]any{"url": httpURL},
		"esse":       map[string]any{"url": sseURL},
		"go":         map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
	}, nil)
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")

	results := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{
		{Op: "listTools"},
		e2e.MCPCall(map[string]any{}),
		e2e.MCPCall(map[string]any{"tool": "everything_echo", "args": map[string]any{"message": "hi"}}),
		e2e.MCPCall(map[string]any{"tool": "ehttp_echo", "args": map[string]any{"message": "over http"}}),
		e2e.MCPCall(map[string]any{"tool": "esse_echo", "args": `{"message":"over sse"}`}),
		e2e.MCPCall(map[string]any{"tool": "go_echo", "args": map[string]any{"message": "from go"}}),
		e2e.MCPCall(map[string]any{}),
		e2e.MCPCall(map[string]any{"server": "everything"}),
		e2e.MCPCall(map[string]any{"search": "echo"}),
		e2e.MCPCall(map[string]any{"describe": "everything_echo"}),
		e2e.MCPCall(map[string]any{"tool": "everything_ecoh", "args": map[string]any{"message": "x"}}),
		e2e.MCPCall(map[string]any{"tool": "go_fail", "args": map[string]any{"message": "boom"}}),
		e2e.MCPCall(map[string]any{"tool": "go_echo", "args": map[string]any{"tool": "go_echo", "args": map[string]any{"message": "x"}}}),
		e2e.MCPCall(map[string]any{"connect": "go"}),
		e2e.MCPCall(map[string]any{"search": "^go_.*", "regex": true, "server": "go"}),
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
	e2e.NeedNode(t)
	e2e.BuildMcpgw(t)
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pids")
	config := e2e.WriteConfig(t, dir, map[string]any{
		"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"},
			"env": map[string]string{"MCPGW_TESTSERVER_PIDFILE": pidfile}},
	}, nil)
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")

	runs := make([]<-chan e2e.ClientRun, 4)
	for i := range runs {
		runs[i] = e2e.GoClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{e2e.MCPCall(map[string]any{"tool": "go_pid"})})
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
