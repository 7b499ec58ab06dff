//go:build unix

package e2e

import (
	"fmt"
	"slices"
	"testing"
)

// TestE2EHarness checks the harness itself: server-everything over each
// transport, driven through client.mjs.
func TestE2EHarness(t *testing.T) {
	t.Parallel()
	NeedNode(t)
	echo := func(msg string) Step {
		return Step{Op: "callTool", Name: "echo", Arguments: map[string]any{"message": msg}}
	}
	listChanged := Step{Op: "waitNotification", Method: "notifications/tools/list_changed", TimeoutMs: 10000}
	check := func(t *testing.T, target Target, steps []Step, msg string) []StepResult {
		t.Helper()
		results := RunClient(t, target, steps)
		var tools struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		results[0].Decode(t, &tools)
		if !slices.ContainsFunc(tools.Tools, func(tool struct{ Name string }) bool { return tool.Name == "echo" }) {
			t.Errorf("listTools: no echo tool in %s", results[0].Result)
		}
		if r := results[1]; !r.OK || r.IsError() || r.Text() != "Echo: "+msg {
			t.Errorf("callTool echo = %v, want text %q", r, "Echo: "+msg)
		}
		return results
	}

	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		name, args := EverythingStdio()
		steps := []Step{{Op: "listTools"}, echo("over stdio"), listChanged, {Op: "callTool", Name: "no-such-tool"}}
		results := check(t, Target{Command: append([]string{name}, args...)}, steps, "over stdio")
		if r := results[2]; !r.OK {
			t.Errorf("waitNotification tools/list_changed: %s", r.Error)
		}
		if r := results[3]; !r.OK || !r.IsError() {
			t.Errorf("callTool no-such-tool = %v, want a result with isError", r)
		}
	})
	t.Run("streamableHttp", func(t *testing.T) {
		t.Parallel()
		url := StartEverything(t, "streamableHttp")
		check(t, Target{URL: url}, []Step{{Op: "listTools"}, echo("over streamable http"), {Op: "terminateSession"}}, "over streamable http")
	})
	t.Run("sse", func(t *testing.T) {
		t.Parallel()
		url := StartEverything(t, "sse")
		results := check(t, Target{URL: url, SSE: true}, []Step{{Op: "listTools"}, echo("over sse"), listChanged}, "over sse")
		if r := results[2]; !r.OK {
			t.Errorf("waitNotification tools/list_changed: %s", r.Error)
		}
	})
	t.Run("transport failure", func(t *testing.T) {
		t.Parallel()
		url := fmt.Sprintf("http://127.0.0.1:%d/mcp", FreePort(t))
		results, _, err := TryClient(t.Context(), Target{URL: url}, []Step{{Op: "ping"}})
		if err == nil {
			t.Fatalf("client.mjs against %s with nothing listening: no error, results %v", url, results)
		}
		if len(results) != 1 || results[0].Op != "connect" || results[0].OK {
			t.Errorf("results = %v, want one failed connect", results)
		}
	})
}
