package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestClient2026 drives the TypeScript SDK 2.x client pinned to protocol
// 2026-07-28 (no fallback to the 2025 handshake) against a daemon, over
// HTTP and through the shim, in each mode: it negotiates 2026-07-28,
// lists, and calls a tool of an upstream. Over HTTP toolsearch is served
// as proxy (a request has no session whose activations it could list);
// over the shim a connection is one client's, and the mode is as asked.
func TestClient2026(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	if _, err := os.Stat(e2e.Path("node_modules/@modelcontextprotocol/client/package.json")); err != nil {
		t.Skipf("@modelcontextprotocol/client not installed (%v); install with: %s", err, e2e.NPMInstallHint)
	}
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
	}, nil)
	d := e2e.StartDaemon(t, dir, config)
	shim := func(mode string) []string {
		return []string{bin, "stdio", "--socket", d.Socket, "--no-start", "--mode", mode}
	}
	echo := func(mode string) e2e.Step {
		if mode == "direct" {
			return e2e.Call("go_echo", map[string]any{"message": "2026"})
		}
		return e2e.MCPCall(map[string]any{"tool": "go_echo", "args": map[string]any{"message": "2026"}})
	}
	for _, tc := range []struct {
		name   string
		target e2e.Target
		mode   string   // the mode it is served in
		tools  []string // what it lists (all of them, or some for direct)
	}{
		{"http-proxy", e2e.Target{URL: d.MCPURL()}, "proxy", []string{"mcp"}},
		{"http-toolsearch", e2e.Target{URL: d.MCPURL() + "?mode=toolsearch"}, "proxy", []string{"mcp"}},
		{"http-direct", e2e.Target{URL: d.MCPURL() + "?mode=direct"}, "direct", []string{"go_add", "go_echo"}},
		{"shim-proxy", e2e.Target{Command: shim("proxy")}, "proxy", []string{"mcp"}},
		{"shim-toolsearch", e2e.Target{Command: shim("toolsearch")}, "toolsearch", []string{"ToolSearch", "mcp_script"}},
		{"shim-direct", e2e.Target{Command: shim("direct")}, "direct", []string{"go_add", "go_echo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.target.Driver = "client2026.mjs"
			steps := []e2e.Step{{Op: "serverInfo"}, {Op: "listTools"}}
			if tc.mode != "toolsearch" {
				steps = append(steps, echo(tc.mode))
			}
			res := e2e.RunClient(t, tc.target, steps)
			if len(res) != len(steps) {
				t.Fatalf("%d results for %d steps: %v", len(res), len(steps), res)
			}
			for _, r := range res {
				if !r.OK {
					t.Fatalf("step %d (%s) failed: %v", r.Step, r.Op, r)
				}
			}
			var info struct {
				ProtocolVersion string
				Era             string
				Server          struct{ Name string }
			}
			res[0].Decode(t, &info)
			if info.ProtocolVersion != "2026-07-28" || info.Era != "modern" || info.Server.Name != "mcpgw" {
				t.Errorf("server info %s, want mcpgw at 2026-07-28 (modern)", res[0].Result)
			}
			var list struct{ Tools []struct{ Name string } }
			res[1].Decode(t, &list)
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			for _, want := range tc.tools {
				if !slices.Contains(names, want) {
					t.Errorf("lists %v, want %s among them", names, want)
				}
			}
			if tc.mode != "direct" && !slices.Equal(names, tc.tools) {
				t.Errorf("lists %v, want %v", names, tc.tools)
			}
			if len(res) > 2 {
				if got := res[2].Text(); got != "2026" || res[2].IsError() {
					t.Errorf("calling go_echo: %q (error %v)", got, res[2].IsError())
				}
			}
		})
	}
}

// An upstream's input_required result reaches the TypeScript SDK 2.x
// client at 2026-07-28 through mcpgw, over HTTP and the shim; the client
// answers the sampling request and retries the call itself, and the
// upstream gets the answer (its requestState untouched by mcpgw).
func TestClient2026InputRequired(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	if _, err := os.Stat(e2e.Path("node_modules/@modelcontextprotocol/client/package.json")); err != nil {
		t.Skipf("@modelcontextprotocol/client not installed (%v); install with: %s", err, e2e.NPMInstallHint)
	}
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"fixtures": map[string]any{"command": e2e.TestServerBin, "args": []string{"conformance-upstream"}},
	}, map[string]any{"toolPrefix": "none", "mode": "direct"})
	d := e2e.StartDaemon(t, dir, config)
	for _, tc := range []struct {
		name   string
		target e2e.Target
		proxy  bool // through the mcp tool
	}{
		{"http", e2e.Target{URL: d.MCPURL()}, false},
		{"shim", e2e.Target{Command: []string{bin, "stdio", "--socket", d.Socket, "--no-start"}}, false},
		{"http/mcp tool", e2e.Target{URL: d.MCPURL(), Headers: map[string]string{"Mcp-Gateway-Mode": "proxy"}}, true},
		{"shim/mcp tool", e2e.Target{Command: []string{bin, "stdio", "--socket", d.Socket, "--no-start", "--mode", "proxy"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.target.Driver = "client2026.mjs"
			tc.target.Sample = "sampled by the client"
			step := e2e.Call("test_sampling", map[string]any{"prompt": "a question"})
			if tc.proxy {
				step = e2e.Call("mcp", map[string]any{"tool": "test_sampling", "args": map[string]any{"prompt": "a question"}})
			}
			res := e2e.RunClient(t, tc.target, []e2e.Step{step})
			if len(res) != 1 || !res[0].OK || res[0].IsError() || !strings.Contains(res[0].Text(), "LLM response: sampled by the client") {
				t.Errorf("test_sampling: %v", res)
			}
		})
	}
}
