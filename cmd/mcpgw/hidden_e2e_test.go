//go:build unix

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestHiddenServerIsGoneE2E: a server hidden whole (excludeTools ["*"],
// as Pi's "exposure": "hidden" is imported) is gone from every method and
// every text, in each mode, through the TypeScript SDK client: its
// prompts, resources and templates are not listed and cannot be got, read,
// completed or subscribed to (even by the mcpgw://SERVER/ URI its
// resources would have had), its instructions are in no initialize and no
// tool description, its log messages reach no session, the mcp tool does
// not list, show, connect or prompt it, and neither the status page nor
// `mcpgw status` and `mcpgw call` name it. The visible server beside it,
// whose names sort first, shows that each of those works.
func TestHiddenServerIsGoneE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	dir := t.TempDir()
	server := func(instructions string, extra map[string]any) map[string]any {
		s := map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "env": map[string]any{
			// At 2025-11-25 an upstream logs at the level setLevel gave it
			// (at 2026-07-28 only where a request's _meta asks).
			fakeupstream.EnvInstructions: instructions, fakeupstream.EnvLogRequests: "1", fakeupstream.EnvProtocols: "2025-11-25"}}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	config := e2e.WriteConfig(t, dir, map[string]any{
		"alpha": server("ALPHA-INSTRUCTIONS", nil),
		"hush":  server("HUSH-INSTRUCTIONS", map[string]any{"excludeTools": []string{"*"}}),
	}, nil)
	// The daemon connects the servers it knows nothing of at start (on
	// main it did so with the hidden one too); the sessions below start
	// with the catalogue known.
	d := e2e.StartDaemon(t, dir, config)
	e2e.PollUntil(t, "the visible server's prompts", func() bool {
		r := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{e2e.MCPCall(map[string]any{"prompts": true})})
		return strings.Contains(r[0].Text(), "alpha_greet")
	})

	// leaks reports whether b names the hidden server or holds its
	// instructions.
	leaks := func(b []byte) bool {
		s := strings.ToLower(string(b))
		return strings.Contains(s, "hush")
	}
	// The page and the CLI first: the scripts below, which name the
	// hidden server's tool, are on the page.
	t.Run("page and CLI", func(t *testing.T) {
		for _, path := range []string{"/", "/-/status"} {
			resp, err := http.Get(d.URL + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || leaks(body) || !strings.Contains(string(body), "alpha") {
				t.Errorf("GET %s: %s, names the hidden server %v", path, resp.Status, leaks(body))
			}
		}
		bin := e2e.BuildMcpgw(t)
		for _, args := range [][]string{{"status"}, {"status", "--json"}} {
			out, err := exec.Command(bin, append(args, "--url", d.URL)...).CombinedOutput()
			if err != nil || leaks(out) || !strings.Contains(string(out), "alpha") {
				t.Errorf("mcpgw %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		out, err := exec.Command(bin, "call", "--url", d.URL, "hush_echo", `{"message":"x"}`).CombinedOutput()
		if err == nil || strings.Contains(string(out), "HUSH") {
			t.Errorf("mcpgw call of a hidden tool: %v\n%s", err, out)
		}
	})

	common := []e2e.Step{
		{Op: "serverInfo"},
		{Op: "setLoggingLevel", Level: "debug"},
		{Op: "listTools"},
		{Op: "listPrompts"},
		{Op: "listResources"},
		{Op: "listResourceTemplates"},
		{Op: "getPrompt", Name: "alpha_greet", Arguments: map[string]any{"name": "Ada"}},
		{Op: "waitNotification", Method: "notifications/message", TimeoutMs: 20000},
	}
	const firstRefused = 8 // every step from here on must fail
	refused := []e2e.Step{
		{Op: "getPrompt", Name: "hush_greet", Arguments: map[string]any{"name": "Ada"}},
		{Op: "getPrompt", Name: "hush/greet", Arguments: map[string]any{"name": "Ada"}},
		{Op: "readResource", URI: "mcpgw://hush/test://hello"},
		{Op: "readResource", URI: "mcpgw://hush/test://item/7"},
		{Op: "complete", Ref: map[string]any{"type": "ref/prompt", "name": "hush_greet"}, Argument: map[string]any{"name": "name", "value": "A"}},
		{Op: "complete", Ref: map[string]any{"type": "ref/resource", "uri": "mcpgw://hush/test://item/{id}"}, Argument: map[string]any{"name": "id", "value": "4"}},
		{Op: "subscribe", URI: "mcpgw://hush/test://hello"},
	}
	for _, mode := range []struct {
		name  string
		steps []e2e.Step // the mode's own, after the common ones; the check reads them
		check func(t *testing.T, r []e2e.StepResult)
	}{
		{"proxy", []e2e.Step{
			e2e.MCPCall(map[string]any{}),
			e2e.MCPCall(map[string]any{"prompts": true}),
			e2e.MCPCall(map[string]any{"search": "greet echo hello"}),
			e2e.MCPCall(map[string]any{"server": "alpha"}),
			e2e.MCPCall(map[string]any{"server": "hush"}),
			e2e.MCPCall(map[string]any{"connect": "hush"}),
			e2e.MCPCall(map[string]any{"prompt": "hush_greet", "args": map[string]any{"name": "Ada"}}),
			e2e.MCPCall(map[string]any{"tool": "hush_echo", "args": map[string]any{"message": "x"}}),
			e2e.MCPCall(map[string]any{"script": `return await tools.call("hush_echo", {message: "x"})`}),
		}, func(t *testing.T, r []e2e.StepResult) {
			for _, i := range []int{0, 1, 2} {
				if r[i].IsError() || leaks(r[i].Result) {
					t.Errorf("mcp tool answer names the hidden server: %s", r[i])
				}
			}
			if got := r[3].Text(); !strings.Contains(got, "ALPHA-INSTRUCTIONS") {
				t.Errorf("mcp({server:\"alpha\"}) without its instructions: %q", got)
			}
			for _, i := range []int{4, 5} {
				if got := r[i].Text(); !r[i].IsError() || !strings.Contains(got, `Unknown server "hush". Servers: alpha.`) {
					t.Errorf("naming the hidden server: %s", r[i])
				}
			}
			for _, i := range []int{6, 7, 8} {
				got := r[i].Text()
				refused := r[i].IsError()
				if i == 8 { // the script runs; its call does not
					refused = strings.Contains(got, `"code":"unknown_tool"`)
				}
				if !refused || strings.Contains(got, "Say hello") || strings.Contains(got, "HUSH") {
					t.Errorf("reaching the hidden server through the mcp tool: %s", r[i])
				}
			}
		}},
		{"toolsearch", []e2e.Step{
			e2e.Call("ToolSearch", map[string]any{"query": "greet echo hello"}),
			e2e.Call("ToolSearch", map[string]any{"query": "select:hush_echo"}),
		}, func(t *testing.T, r []e2e.StepResult) {
			if leaks(r[0].Result) {
				t.Errorf("ToolSearch found the hidden server: %s", r[0])
			}
			if got := r[1].Text(); strings.Contains(got, "HUSH") || strings.Contains(got, "activated hush_echo") {
				t.Errorf("ToolSearch activated a hidden tool: %s", r[1])
			}
		}},
		{"direct", nil, func(t *testing.T, r []e2e.StepResult) {}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			steps := append(append(append([]e2e.Step{}, common...), refused...), mode.steps...)
			steps = append(steps, e2e.Step{Op: "notifications"})
			r := e2e.RunClient(t, e2e.Target{URL: d.MCPURL() + "?mode=" + mode.name}, steps)
			var info struct {
				Instructions string `json:"instructions"`
			}
			r[0].Decode(t, &info)
			if leaks(r[0].Result) {
				t.Errorf("initialize names the hidden server: %s", r[0])
			}
			if mode.name == "direct" && !strings.Contains(info.Instructions, "ALPHA-INSTRUCTIONS") {
				t.Errorf("direct mode's instructions without the visible server's: %q", info.Instructions)
			}
			for _, i := range []int{2, 3, 4, 5} {
				if !r[i].OK || leaks(r[i].Result) {
					t.Errorf("a list names the hidden server: %s", r[i])
				}
			}
			var lists [3]struct {
				Prompts   []json.RawMessage `json:"prompts"`
				Resources []struct {
					URI string `json:"uri"`
				} `json:"resources"`
				Templates []json.RawMessage `json:"resourceTemplates"`
			}
			for i := range lists {
				r[3+i].Decode(t, &lists[i])
			}
			// The visible server's own: one prompt, three resources under
			// their own URIs (no other server took them), one template.
			if len(lists[0].Prompts) != 1 || len(lists[1].Resources) != 3 || lists[1].Resources[0].URI[:7] != "test://" || len(lists[2].Templates) != 1 {
				t.Errorf("lists: %s / %s / %s", r[3].Result, r[4].Result, r[5].Result)
			}
			if !r[6].OK || !strings.Contains(string(r[6].Result), "Say hello to Ada.") {
				t.Errorf("the visible server's prompt: %s", r[6])
			}
			if !r[7].OK {
				t.Errorf("no log message from the visible server: %s", r[7])
			}
			for i := firstRefused; i < firstRefused+len(refused); i++ {
				if r[i].OK {
					t.Errorf("step %s reached the hidden server: %s", refused[i-firstRefused].Op, r[i])
				}
			}
			mode.check(t, r[firstRefused+len(refused):])
			last := r[len(r)-1]
			var ns []struct {
				Method string `json:"method"`
				Params struct {
					Logger string `json:"logger"`
				} `json:"params"`
			}
			last.Decode(t, &ns)
			for _, n := range ns {
				if n.Method == "notifications/message" && n.Params.Logger != "alpha" {
					t.Errorf("a log message not from the visible server: %+v", n)
				}
			}
		})
	}

}
