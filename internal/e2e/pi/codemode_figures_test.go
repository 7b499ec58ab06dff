//go:build unix

package pi

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestCodemodeFigures prints, for one task done through each Pi setup,
// the turns the model took and the bytes it read (every request body:
// system prompt, tool schemas, conversation), the figures behind the
// README's advice for Pi. The task: echo three messages and add two
// numbers, with server-everything and the Go test server behind mcpgw.
// A figure reporter, not a check: it runs only with MCPGW_FIGURES=1.
//
//	MCPGW_FIGURES=1 go test ./cmd/mcpgw -run TestCodemodeFigures -v
func TestCodemodeFigures(t *testing.T) {
	t.Parallel()
	if os.Getenv("MCPGW_FIGURES") != "1" {
		t.Skip("set MCPGW_FIGURES=1 to print the figures")
	}
	needPi(t)
	node, args := e2e.EverythingStdio()
	servers := map[string]any{
		"go":         map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
		"everything": map[string]any{"command": node, "args": args},
	}
	const mcpgwScript = `const r = await Promise.all([
  tools.call("go_echo", {message: "one"}), tools.call("go_echo", {message: "two"}),
  tools.call("go_echo", {message: "three"}), tools.call("go_add", {a: 20, b: 22})]);
return r.map(x => x.data);`
	calls := func(prefix string) []e2e.ModelStep {
		var steps []e2e.ModelStep
		for _, m := range []string{"one", "two", "three"} {
			steps = append(steps, e2e.ModelStep{Tool: prefix + "go_echo", Args: map[string]any{"message": m}})
		}
		return append(steps, e2e.ModelStep{Tool: prefix + "go_add", Args: map[string]any{"a": 20, "b": 22}}, e2e.ModelStep{Text: "done"})
	}
	setups := []struct {
		name     string
		shim     []string
		settings map[string]any
		steps    []e2e.ModelStep
	}{
		{"Pi 1.5, codemode (its default) + mcpgw direct", []string{"--mode", "direct"}, map[string]any{"pi15Exposure": "codemode"}, []e2e.ModelStep{
			{Tool: "codemode", Args: map[string]any{"code": `return JSON.stringify(await Promise.all([
  tools.mcp__mcpgw__go_echo({message: "one"}), tools.mcp__mcpgw__go_echo({message: "two"}),
  tools.mcp__mcpgw__go_echo({message: "three"}), tools.mcp__mcpgw__go_add({a: 20, b: 22})]));`}},
			{Text: "done"},
		}},
		{"Pi 1.5, direct + mcpgw proxy, mcp({script})", []string{"--mode", "proxy"}, map[string]any{"pi15Exposure": "direct"}, []e2e.ModelStep{
			{Tool: "mcp__mcpgw__mcp", Args: map[string]any{"script": mcpgwScript}}, {Text: "done"},
		}},
		{"Pi 1.5, deferred + tool_search + mcpgw direct", []string{"--mode", "direct"}, map[string]any{"pi15Exposure": "deferred"},
			append([]e2e.ModelStep{{ToolFrom: "tool_search", Args: map[string]any{"query": "echo add numbers", "limit": 3}}}, calls("mcp__mcpgw__")...)},
		{"Pi 1.5, direct + mcpgw direct", []string{"--mode", "direct"}, map[string]any{"pi15Exposure": "direct"}, calls("mcp__mcpgw__")},
		{"Pi 0.86 + adapter, mcpScript + mcpgw direct", []string{"--mode", "direct"}, map[string]any{"disableProxyTool": true}, []e2e.ModelStep{
			{Tool: "mcpScript", Args: map[string]any{"code": `emit(await Promise.all([
  tools.call("mcpgw_go_echo", {message: "one"}), tools.call("mcpgw_go_echo", {message: "two"}),
  tools.call("mcpgw_go_echo", {message: "three"}), tools.call("mcpgw_go_add", {a: 20, b: 22})]));`}},
			{Text: "done"},
		}},
		{"Pi 0.86 + adapter, mcpgw proxy, mcp({script})", nil, map[string]any{"disableProxyTool": true, "scriptMode": false}, []e2e.ModelStep{
			{Tool: "mcpgw_mcp", Args: map[string]any{"script": mcpgwScript}}, {Text: "done"},
		}},
		{"Pi 0.86 + adapter, mcpgw proxy, one call per turn", nil, map[string]any{"disableProxyTool": true, "scriptMode": false}, []e2e.ModelStep{
			{Tool: "mcpgw_mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "one"}}},
			{Tool: "mcpgw_mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "two"}}},
			{Tool: "mcpgw_mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "three"}}},
			{Tool: "mcpgw_mcp", Args: map[string]any{"tool": "go_add", "args": map[string]any{"a": 20, "b": 22}}},
			{Text: "done"},
		}},
	}
	var b strings.Builder
	b.WriteString("| setup | turns | bytes the model read | ≈ tokens | largest turn |\n|---|---|---|---|---|\n")
	for _, s := range setups {
		e := newPiEnv(t, servers, nil, s.shim, s.settings, s.steps...)
		e.runPi("Echo one, two and three, and add 20 and 22.")
		reqs := e.model.Requests()
		total, largest := 0, 0
		for _, r := range reqs {
			total += r.Bytes
			largest = max(largest, r.Bytes)
		}
		last := reqs[len(reqs)-1].LastToolResult()
		if !strings.Contains(last, "42") {
			t.Errorf("%s: the last result lacks 42: %s", s.name, last)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", s.name, len(reqs), total, total/4, largest)
	}
	t.Logf("\n%s", b.String())
}
