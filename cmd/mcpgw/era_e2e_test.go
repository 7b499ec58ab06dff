package main

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// need2026Client skips when the TypeScript SDK 2.x client is not installed.
func need2026Client(t *testing.T) {
	t.Helper()
	e2e.NeedNode(t)
	if _, err := os.Stat(e2e.Path("node_modules/@modelcontextprotocol/client/package.json")); err != nil {
		t.Skipf("@modelcontextprotocol/client not installed (%v); install with: %s", err, e2e.NPMInstallHint)
	}
}

// An upstream's input_required result for resources/read and prompts/get,
// not only for a tool call, reaches the TypeScript SDK 2.x client at
// 2026-07-28 through mcpgw, over HTTP and the shim: the client answers the
// elicitation and retries the read itself, and the upstream gets the
// answer with its sealed requestState untouched (it refuses a changed
// one). A 2025 client is asked by elicitation, and one that declared no
// elicitation gets an error that says so.
func TestClient2026InputRequiredReadAndPrompt(t *testing.T) {
	t.Parallel()
	need2026Client(t)
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"fixtures": map[string]any{"command": e2e.TestServerBin, "args": []string{"conformance-upstream"}},
	}, map[string]any{"toolPrefix": "none", "mode": "direct"})
	d := e2e.StartDaemon(t, dir, config)
	const resource = "test://input-required"
	for _, tc := range []struct {
		name   string
		target e2e.Target
	}{
		{"http", e2e.Target{URL: d.MCPURL(), Driver: "client2026.mjs"}},
		{"shim", e2e.Target{Command: []string{bin, "stdio", "--socket", d.Socket, "--no-start"}, Driver: "client2026.mjs"}},
		{"2025 http", e2e.Target{URL: d.MCPURL()}},
		{"2025 shim", e2e.Target{Command: []string{bin, "stdio", "--socket", d.Socket, "--no-start"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.target.Elicit = "accept:" + strings.ReplaceAll(tc.name, " ", "-")
			steps := []e2e.Step{
				{Op: "listTools"}, // waits for the upstream's discovery
				{Op: "readResource", URI: resource},
				{Op: "waitNotification", Method: "elicitation/create"},
			}
			questions := []string{"Which decision should the resource show?"}
			if tc.target.Driver != "" {
				// The prompt's form asks for a "context", which client.mjs
				// does not answer (its answer is a "decision"): a 2025
				// client's answer is checked against the form on its way.
				steps = append(steps, e2e.Step{Op: "getPrompt", Name: "test_input_required_result_prompt"},
					e2e.Step{Op: "waitNotification", Method: "elicitation/create"})
				questions = append(questions, "What context should the prompt use?")
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
			var read struct{ Contents []struct{ URI, Text string } }
			res[1].Decode(t, &read)
			if want := "decision: " + strings.TrimPrefix(tc.target.Elicit, "accept:"); len(read.Contents) != 1 || read.Contents[0].Text != want || read.Contents[0].URI != resource {
				t.Errorf("reading %s: %s, want one text %q", resource, res[1].Result, want)
			}
			if len(res) > 3 && !strings.Contains(string(res[3].Result), "Answer with this context in mind") {
				t.Errorf("getting the prompt: %s", res[3].Result)
			}
			for i, q := range questions {
				if asked := string(res[2+2*i].Result); !strings.Contains(asked, q) {
					t.Errorf("the client was asked %s, want %q", asked, q)
				}
			}
		})
	}
	t.Run("2025 without elicitation", func(t *testing.T) {
		t.Parallel()
		res := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{{Op: "listTools"}, {Op: "readResource", URI: resource}})
		if len(res) != 2 || res[1].OK || !strings.Contains(res[1].Error, "does not support elicitation") {
			t.Errorf("reading %s without elicitation: %v, want an error saying the client does not support elicitation", resource, res)
		}
	})
}

// A 2026-07-28 client's subscriptions/listen stream for a resource hears of
// the upstream's notifications/resources/updated, tagged with the
// stream's subscription ID, over HTTP (a conversation, which has no
// session) and the shim; after the stream closes, the client's later
// calls still work.
func TestClient2026ResourceUpdates(t *testing.T) {
	t.Parallel()
	need2026Client(t)
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
	}, map[string]any{"mode": "direct"})
	d := e2e.StartDaemon(t, dir, config)
	for _, tc := range []struct {
		name   string
		target e2e.Target
	}{
		{"http", e2e.Target{URL: d.MCPURL()}},
		{"shim", e2e.Target{Command: []string{bin, "stdio", "--socket", d.Socket, "--no-start"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.target.Driver = "client2026.mjs"
			touch := e2e.Call("go_touch", map[string]any{"uri": "test://hello"})
			res := e2e.RunClient(t, tc.target, []e2e.Step{
				{Op: "listTools"}, // waits for the upstream's discovery
				{Op: "listen", URI: "test://hello"},
				touch,
				{Op: "waitNotification", Method: "notifications/resources/updated", TimeoutMs: 30000},
				{Op: "unlisten", URI: "test://hello"},
				touch,
			})
			if len(res) != 6 {
				t.Fatalf("%d results for 6 steps: %v", len(res), res)
			}
			for _, r := range res {
				if !r.OK {
					t.Fatalf("step %d (%s) failed: %v", r.Step, r.Op, r)
				}
			}
			var ack struct {
				HonoredFilter struct{ ResourceSubscriptions []string }
			}
			res[1].Decode(t, &ack)
			if len(ack.HonoredFilter.ResourceSubscriptions) != 1 || ack.HonoredFilter.ResourceSubscriptions[0] != "test://hello" {
				t.Errorf("listen: %s, want test://hello honoured", res[1].Result)
			}
			var update struct {
				Params struct {
					URI  string
					Meta map[string]any `json:"_meta"`
				}
			}
			res[3].Decode(t, &update)
			if update.Params.URI != "test://hello" || update.Params.Meta["io.modelcontextprotocol/subscriptionId"] == nil {
				t.Errorf("update %s, want test://hello tagged with its subscription", res[3].Result)
			}
			for _, i := range []int{2, 5} {
				if res[i].IsError() || res[i].Text() != "touched" {
					t.Errorf("go_touch: %s", res[i])
				}
			}
		})
	}
}
