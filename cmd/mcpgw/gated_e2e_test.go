//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestEveryRequestGatedAndAuditedE2E: under approveTools true, a client's
// resources/read and prompts/get wait for the same approval as the mcp
// tool's read of the resource and its prompt action; completion and
// subscription are not asked about. Every request that reaches the
// upstream, and every refusal (unknown tool, a tool excludeTools hides,
// invalid arguments, denied), is on the audit log, with its method and
// never an argument's value; `mcpgw audit` shows the method.
func TestEveryRequestGatedAndAuditedE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"g": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"},
			"env":          map[string]any{fakeupstream.EnvPolicy: "1"},
			"approveTools": true, "excludeTools": []string{"delete_thing"}},
	}, map[string]any{"approvalTimeoutMs": 120000})
	d := e2e.StartDaemon(t, dir, config)
	const secret = "secret-value-7f3a"

	// A client that declines every approval.
	declined := e2e.RunClient(t, e2e.Target{URL: d.MCPURL(), Elicit: "decline"}, []e2e.Step{
		e2e.MCPCall(map[string]any{"prompts": true}), // waits for discovery
		{Op: "readResource", URI: "test://hello"},
		{Op: "readResource", URI: "test://item/" + secret},
		{Op: "getPrompt", Name: "g_greet", Arguments: map[string]any{"name": secret}},
		e2e.MCPCall(map[string]any{"prompt": "g_greet", "args": map[string]any{"name": secret}}),
		e2e.MCPCall(map[string]any{"tool": "g_read_hello"}),
		{Op: "complete", Ref: map[string]any{"type": "ref/prompt", "name": "g_greet"}, Argument: map[string]any{"name": "name", "value": "A"}},
		{Op: "subscribe", URI: "test://hello"},
		e2e.MCPCall(map[string]any{"tool": "g_nope", "args": map[string]any{"x": secret}}),
		e2e.MCPCall(map[string]any{"tool": "g_delete_thing", "args": map[string]any{"name": secret}}),
		e2e.MCPCall(map[string]any{"tool": "g_echo", "args": []any{secret}}),
		{Op: "notifications"},
	})
	if !strings.Contains(declined[0].Text(), "g_greet") {
		t.Fatalf("prompts: %s", declined[0])
	}
	for _, i := range []int{1, 2, 3} {
		if r := declined[i]; r.OK || !strings.Contains(r.Error, "denied") {
			t.Errorf("a declined client request answered: %s", r)
		}
	}
	for _, i := range []int{4, 5} {
		if r := declined[i]; !r.IsError() || !strings.Contains(r.Text(), "denied") {
			t.Errorf("a declined request through the mcp tool: %s", r)
		}
	}
	for _, i := range []int{6, 7} {
		if r := declined[i]; !r.OK {
			t.Errorf("%s, which no approval covers: %s", r.Op, r)
		}
	}
	for _, i := range []int{8, 9, 10} {
		if r := declined[i]; !r.IsError() {
			t.Errorf("a refused call answered: %s", r)
		}
	}
	if asked := elicitations(t, declined[11]); len(asked) != 5 {
		t.Errorf("the client was asked %d times, want 5 (two reads, two prompt gets, the mcp tool's read): %q", len(asked), asked)
	}

	// A client that allows them once gets the answers.
	allowed := e2e.RunClient(t, e2e.Target{URL: d.MCPURL(), Elicit: "accept:once"}, []e2e.Step{
		{Op: "readResource", URI: "test://hello"},
		{Op: "getPrompt", Name: "g_greet", Arguments: map[string]any{"name": "Ada"}},
	})
	if r := allowed[0]; !r.OK || !strings.Contains(string(r.Result), "hello, world") {
		t.Errorf("an allowed read: %s", r)
	}
	if r := allowed[1]; !r.OK || !strings.Contains(string(r.Result), "Say hello to Ada.") {
		t.Errorf("an allowed prompt get: %s", r)
	}

	logPath := filepath.Join(dir, "state", "mcpgw", "audit.jsonl")
	want := []string{ // sorted
		" g_delete_thing unknown_tool",
		" g_nope unknown_tool",
		"completion/complete g greet ok",
		"g echo invalid_args",
		"g read_hello denied",
		"prompts/get g greet denied",
		"prompts/get g greet denied",
		"prompts/get g greet ok",
		"resources/read g test://hello denied",
		"resources/read g test://hello ok",
		"resources/read g test://item/{id} denied",
		"resources/subscribe g test://hello ok",
	}
	var got []string
	var data []byte
	e2e.PollUntil(t, "the audit log's lines", func() bool {
		data, _ = os.ReadFile(logPath)
		got = got[:0]
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			var r audit.Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("audit line %q: %v", sc.Text(), err)
			}
			if r.Event != audit.EventCall || r.Tool == "prompts" || (r.Method == "" && r.Tool == "read_hello" && r.Outcome == "ok") {
				continue
			}
			line := strings.TrimSpace(r.Method + " " + r.Server + " " + r.Tool + " " + r.Outcome)
			if r.Server == "" {
				line = " " + r.Tool + " " + r.Outcome
			} else if r.Method == "" {
				line = r.Server + " " + r.Tool + " " + r.Outcome
			}
			got = append(got, line)
		}
		slices.Sort(got)
		return len(got) >= len(want)
	})
	if !slices.Equal(got, want) {
		t.Errorf("audit log:\n got %q\nwant %q", got, want)
	}
	if bytes.Contains(data, []byte(secret)) {
		t.Errorf("the audit log holds an argument's value:\n%s", data)
	}
	out, err := exec.Command(e2e.BuildMcpgw(t), "audit", "--server", "g", "--file", logPath).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "resources/read denied") || !strings.Contains(string(out), "prompts/get ok") {
		t.Errorf("mcpgw audit: %v\n%s", err, out)
	}
}
