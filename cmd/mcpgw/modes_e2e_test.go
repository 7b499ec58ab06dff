//go:build linux

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/internal/proctest"
)

// TestToolSearchTwoSessions: session A searches, hears list_changed and
// calls the tool it activated; session B sees none of A's tools and gets a
// clear error calling one. Both over HTTP with the TypeScript SDK client,
// choosing the mode by query parameter (A) and by header (B).
func TestToolSearchTwoSessions(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
	}, nil)
	d := e2e.StartDaemon(t, dir, config)
	e2e.WaitCached(t, d.Cache, "go")

	a := e2e.RunClient(t, e2e.Target{URL: d.MCPURL() + "?mode=toolsearch"}, []e2e.Step{
		{Op: "listTools"},
		e2e.Call("ToolSearch", map[string]any{"query": "add two numbers", "max_results": 2}),
		{Op: "waitNotification", Method: "notifications/tools/list_changed", TimeoutMs: 10000},
		{Op: "listTools"},
		e2e.Call("go_add", map[string]any{"a": 20, "b": 22}),
		e2e.Call("ToolSearch", map[string]any{"query": "select:go_echo,go_ecko"}),
	})
	for i, r := range a {
		if !r.OK {
			t.Fatalf("session A step %d: %v", i, r)
		}
	}
	if got := e2e.ToolNames(t, a[0]); !slices.Equal(got, []string{"ToolSearch", "mcp_script"}) {
		t.Errorf("A starts with %v, want [ToolSearch]", got)
	}
	if txt := a[1].Text(); !strings.Contains(txt, "go_add") || !strings.Contains(txt, "call them directly") && !strings.Contains(txt, "call it directly") {
		t.Errorf("ToolSearch answer = %q", txt)
	}
	if got := e2e.ToolNames(t, a[3]); !slices.Contains(got, "go_add") || !slices.Contains(got, "ToolSearch") {
		t.Errorf("after ToolSearch A lists %v", got)
	}
	if r := a[4]; r.IsError() || !strings.Contains(r.Text(), "42") {
		t.Errorf("A calls go_add = %v", r)
	}
	if txt := a[5].Text(); !strings.Contains(txt, "Activated 1 tool") || !strings.Contains(txt, `Unknown tool "go_ecko". Did you mean: go_echo`) {
		t.Errorf("select with a typo = %q", txt)
	}

	b := e2e.RunClient(t, e2e.Target{URL: d.MCPURL(), Headers: map[string]string{"Mcp-Gateway-Mode": "toolsearch"}}, []e2e.Step{
		{Op: "listTools"},
		e2e.Call("go_add", map[string]any{"a": 1, "b": 2}),
	})
	if got := e2e.ToolNames(t, b[0]); !slices.Equal(got, []string{"ToolSearch", "mcp_script"}) {
		t.Errorf("B lists %v, want only ToolSearch", got)
	}
	if r := b[1]; !r.IsError() || !strings.Contains(r.Text(), "not active in this session") || !strings.Contains(r.Text(), "select:go_add") {
		t.Errorf("B calls A's tool = %v", r)
	}
}

// children returns the PIDs whose parent is pid.
func children(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at the last ')'.
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[0] != "Z" {
			if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
				out = append(out, p)
			}
		}
	}
	return out
}

// TestWarmCacheStartsNothing: a daemon started with a warm cache answers
// status, list, search and describe with zero child processes.
func TestWarmCacheStartsNothing(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	e2e.BuildMcpgw(t)
	node, args := e2e.EverythingStdio()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"go":         map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
		"everything": map[string]any{"command": node, "args": args},
	}, nil)
	first := e2e.StartDaemon(t, dir, config) // bootstraps: connects both once
	e2e.WaitCached(t, first.Cache, "go", "everything")
	first.Proc.Stop()

	d := e2e.StartDaemon(t, dir, config)
	res := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{
		e2e.MCPCall(map[string]any{}),
		e2e.MCPCall(map[string]any{"server": "everything"}),
		e2e.MCPCall(map[string]any{"search": "add numbers"}),
		e2e.MCPCall(map[string]any{"describe": "go_add"}),
	})
	pid := d.Proc.Cmd.Process.Pid
	if kids := children(pid); len(kids) != 0 {
		t.Errorf("daemon with a warm cache runs %d child processes %v, want 0", len(kids), kids)
	}
	status := res[0].Text()
	if !strings.Contains(status, "- everything: cached, ") || !strings.Contains(status, "- go: cached, ") {
		t.Errorf("status with a warm cache:\n%s", status)
	}
	if !strings.HasPrefix(status, "MCP: 0/2 servers, ") || strings.HasPrefix(status, "MCP: 0/2 servers, 0 tools") {
		t.Errorf("status head = %q", firstLine(status))
	}
	if txt := res[1].Text(); !strings.Contains(txt, "everything_echo - ") {
		t.Errorf("list from cache = %q", txt)
	}
	if txt := res[2].Text(); !strings.Contains(txt, "go_add") {
		t.Errorf("search from cache = %q", txt)
	}
	if txt := res[3].Text(); !strings.Contains(txt, "Parameters of go_add:") {
		t.Errorf("describe from cache = %q", txt)
	}
}

// TestKillDaemonLeavesNoUpstream: kill -9 of the daemon takes its upstream
// processes (and their children) with it.
func TestKillDaemonLeavesNoUpstream(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	e2e.BuildMcpgw(t)
	dir := t.TempDir()
	node, args := e2e.EverythingStdio()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"go":         map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
		"everything": map[string]any{"command": node, "args": args},
	}, nil)
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	res := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{
		e2e.MCPCall(map[string]any{"tool": "go_pid"}),
		e2e.MCPCall(map[string]any{"tool": "everything_echo", "args": map[string]any{"message": "x"}}),
	})
	upPID, err := strconv.Atoi(strings.TrimSpace(res[0].Text()))
	if err != nil {
		t.Fatalf("go_pid answered %q", res[0].Text())
	}
	daemonPID := d.Proc.Cmd.Process.Pid
	kids := children(daemonPID)
	// Two upstreams, plus the reaper that ends their process groups.
	if len(kids) < 2 || !slices.Contains(kids, upPID) {
		t.Fatalf("daemon children = %v, want at least 2 including %d", kids, upPID)
	}
	if err := syscall.Kill(daemonPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(e2e.WaitLimit)
	for {
		var alive []int
		for _, k := range kids {
			if proctest.Alive(k) {
				alive = append(alive, k)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("upstream processes %v still alive after the daemon was killed", alive)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
