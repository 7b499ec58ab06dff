package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// scriptOutput is a script's answer as the mcp tool and mcp_script give it.
type scriptOutput struct {
	ID      string            `json:"id"`
	Result  json.RawMessage   `json:"result"`
	Emitted []json.RawMessage `json:"emitted"`
	Console []string          `json:"console"`
	Error   *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Calls []struct {
		Tool  string `json:"tool"`
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	} `json:"calls"`
}

func decodeScriptOutput(t *testing.T, text string) scriptOutput {
	t.Helper()
	var o scriptOutput
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		t.Fatalf("script answer is not JSON (%v):\n%s", err, text)
	}
	return o
}

// TestCodeModeE2E: the TypeScript SDK client runs scripts against the real
// server-everything (stdio) through the daemon — in proxy mode with the
// mcp tool, in toolsearch mode with mcp_script — reading a structured
// result and a text one, with a guarded tool's approval asked of the
// very session whose script made the call. Then `mcpgw script` runs one
// from the command line, and `mcpgw audit` names the scripts' calls.
func TestCodeModeE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	dir := t.TempDir()
	node, args := e2e.EverythingStdio()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"everything": map[string]any{"command": node, "args": args},
		"p":          e2e.PolicyServer(map[string]any{"approveTools": []string{"delete_*"}}),
	}, map[string]any{"approvalTimeoutMs": 120000})
	d := e2e.StartDaemon(t, dir, config)
	e2e.WaitCached(t, d.Cache, "everything")

	const weather = `
		const hits = tools.search("weather structured content", {limit: 5});
		const name = hits.map(h => h.name).find(n => n.includes("structured"));
		const sig = tools.describe(name).signature;
		const [w, sum, echo] = await Promise.all([
			tools.call(name, {location: "Chicago"}),
			tools.call("everything_get-sum", {a: 20, b: 22}),
			tools.call("everything_echo", {message: "hello"}),
		]);
		const del = await tools.call("p_delete_thing", {name: "from-script"});
		emit({signatureHasLocation: sig.includes("location")});
		return {temp: w.data.temperature, conditions: w.data.conditions, sum: sum.data, echo: echo.data, deleted: del.ok && del.data};`
	res := e2e.RunClient(t, e2e.Target{URL: d.MCPURL(), Elicit: "accept:once"}, []e2e.Step{
		e2e.MCPCall(map[string]any{"script": weather}),
		{Op: "notifications"},
	})
	if !res[0].OK || res[0].IsError() {
		t.Fatalf("script through the mcp tool: %v", res[0])
	}
	out := decodeScriptOutput(t, res[0].Text())
	var got struct {
		Temp       float64 `json:"temp"`
		Conditions string  `json:"conditions"`
		Sum        string  `json:"sum"`
		Echo       string  `json:"echo"`
		Deleted    string  `json:"deleted"`
	}
	if err := json.Unmarshal(out.Result, &got); err != nil {
		t.Fatalf("result %s: %v", out.Result, err)
	}
	if got.Temp != 36 || got.Conditions != "Light rain / drizzle" || !strings.Contains(got.Sum, "42") ||
		!strings.Contains(got.Echo, "hello") || !strings.Contains(got.Deleted, "deleted from-script") {
		t.Errorf("script result = %s", out.Result)
	}
	if len(out.Emitted) != 1 || string(out.Emitted[0]) != `{"signatureHasLocation":true}` {
		t.Errorf("emitted = %s", out.Emitted)
	}
	if len(out.Calls) != 4 {
		t.Errorf("trace = %+v, want 4 calls", out.Calls)
	}
	asked := elicitations(t, res[1])
	if len(asked) != 1 || !strings.Contains(asked[0], "from-script") {
		t.Errorf("the script's session was asked %q, want once about its delete_thing call", asked)
	}

	// toolsearch mode: mcp_script is listed and works the same way; a
	// script that fails says why, and its calls so far are in the trace.
	ts := e2e.RunClient(t, e2e.Target{URL: d.MCPURL() + "?mode=toolsearch"}, []e2e.Step{
		{Op: "listTools"},
		e2e.Call("mcp_script", map[string]any{"script": `return (await tools.call("everything_get-sum", {a: 1, b: 2})).data`}),
		e2e.Call("mcp_script", map[string]any{"script": `await tools.call("everything_echo", {message: "x"}); null.boom`}),
	})
	if names := e2e.ToolNames(t, ts[0]); strings.Join(names, ",") != "ToolSearch,mcp_script" {
		t.Errorf("toolsearch session lists %v", names)
	}
	if o := decodeScriptOutput(t, ts[1].Text()); ts[1].IsError() || !strings.Contains(string(o.Result), "3") {
		t.Errorf("mcp_script: %s", ts[1].Text())
	}
	if o := decodeScriptOutput(t, ts[2].Text()); !ts[2].IsError() || o.Error == nil || o.Error.Code != "exception" ||
		!strings.Contains(o.Error.Message, "TypeError") || len(o.Calls) != 1 || !o.Calls[0].OK {
		t.Errorf("failing script: %s", ts[2].Text())
	}

	// The command line: -e, a file, stdin.
	bin := e2e.BuildMcpgw(t)
	cli, err := exec.Command(bin, "script", "--url", d.URL, "-e",
		`const r = await tools.call("everything_echo", {message: "from the CLI"}); console.log("len", r.data.length); return r.data`).CombinedOutput()
	if err != nil || !strings.Contains(string(cli), `"result": "Echo: from the CLI"`) || !strings.Contains(string(cli), `"len 18"`) {
		t.Errorf("mcpgw script -e: %v\n%s", err, cli)
	}
	file := filepath.Join(dir, "busy.js")
	if err := os.WriteFile(file, []byte("while (true) {}"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli, err = exec.Command(bin, "script", "--url", d.URL, file, "--timeout", "300ms").CombinedOutput()
	if err == nil || !strings.Contains(string(cli), `"code": "timeout"`) {
		t.Errorf("mcpgw script FILE --timeout: %v\n%s", err, cli)
	}
	stdin := exec.Command(bin, "script", "--url", d.URL, "-")
	stdin.Stdin = strings.NewReader(`return tools.search("sum of two numbers", {limit: 1}).map(t => t.signature)`)
	cli, err = stdin.CombinedOutput()
	if err != nil || !strings.Contains(string(cli), `everything_get-sum(args: { a: number; b: number })`) {
		t.Errorf("mcpgw script -: %v\n%s", err, cli)
	}

	// mcpgw status lists the scripts run, newest first: the five latest
	// (the CLI's three first), then how many more.
	status, err := exec.Command(bin, "status", "--url", d.URL).CombinedOutput()
	if err != nil || !strings.Contains(string(status), "recent scripts") || !strings.Contains(string(status), "  ok  0 calls") ||
		!strings.Contains(string(status), "the script ran past its deadline of 300ms") || !strings.Contains(string(status), "  and 1 more") {
		t.Errorf("mcpgw status: %v\n%s", err, status)
	}

	// The audit log names the script of each call.
	audit, err := exec.Command(bin, "audit", "--file", filepath.Join(dir, "state", "mcpgw", "audit.jsonl")).CombinedOutput()
	if err != nil || !strings.Contains(string(audit), "script "+out.ID) || !strings.Contains(string(audit), "p/delete_thing") {
		t.Errorf("mcpgw audit: %v\n%s", err, audit)
	}
}
