//go:build unix

package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// Claude Code end-to-end: mcpgw in direct mode from the file the README
// gives to --mcp-config. Claude Code defers MCP tools behind its own
// ToolSearch: the first request names them, the model loads one with
// ToolSearch, then calls it.

const claudeCLI = "node_modules/@anthropic-ai/claude-code/bin/claude.exe"

// newClaudeEnv is an agentEnv for Claude Code: its model API at the fake
// model, its nonessential traffic (telemetry, updates, error reports)
// off, and the README's ~/.claude/mcpgw.json. It returns Claude Code's
// executable.
func newClaudeEnv(t *testing.T, servers map[string]any, script ...e2e.ModelStep) (*agentEnv, string) {
	t.Helper()
	claude := needAgent(t, claudeCLI)
	e := newAgentEnv(t, e2e.AnthropicMessages{}, servers, script...)
	e.setenv("ANTHROPIC_BASE_URL="+e.model.RootURL(), "ANTHROPIC_API_KEY=fake",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1")
	e2e.WriteJSON(t, filepath.Join(e.home, ".claude", "mcpgw.json"), map[string]any{"mcpServers": map[string]any{
		"mcpgw": map[string]any{"command": e.bin, "args": []string{"stdio", "--mode", "direct"}},
	}})
	return e, claude
}

// claudePrint runs one prompt in print mode with the README's
// --mcp-config, mcpgw's tools allowed (Claude Code refuses
// --dangerously-skip-permissions as root).
func claudePrint(e *agentEnv, claude, prompt string) string {
	e.t.Helper()
	out := e.run(claude, "-p", prompt, "--mcp-config", filepath.Join(e.home, ".claude", "mcpgw.json"), "--allowedTools", "mcp__mcpgw")
	e.t.Logf("claude output:\n%s", out)
	return out
}

var claudeMCPName = regexp.MustCompile(`mcp__mcpgw__[A-Za-z0-9_-]+`)

// claudeDeferred is the mcpgw tools a request names, in order, each once:
// Claude Code lists deferred tools by name in a system message.
func claudeDeferred(r e2e.ModelRequest) []string {
	var names []string
	for _, n := range claudeMCPName.FindAllString(r.Body, -1) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

var goServer = map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}

// TestClaudeToolSearchThenCall: from a cold daemon, Claude Code's first
// request names every tool of mcpgw's; the model searches with Claude
// Code's ToolSearch, which finds and loads mcpgw's tool, and the call
// returns the upstream's result. Started again, on a new daemon answering
// from the cache the first one wrote, the first request names the same
// tools. (With --mcp-config, print mode waits for the server before its
// first request; a server added with `claude mcp add` it does not wait
// for.)
func TestClaudeToolSearchThenCall(t *testing.T) {
	t.Parallel()
	e, claude := newClaudeEnv(t, goServer,
		e2e.ModelStep{ToolFrom: "ToolSearch", Args: map[string]any{"query": "echo message", "max_results": 3}},
		e2e.ModelStep{Tool: "mcp__mcpgw__go_echo", Args: map[string]any{"message": "hello from claude"}},
		e2e.ModelStep{Text: "done"},
		e2e.ModelStep{Text: "warm"},
	)
	claudePrint(e, claude, "Echo a greeting through the gateway.")
	reqs := e.turns(3)
	want := []string{"mcp__mcpgw__go_add", "mcp__mcpgw__go_add_tool", "mcp__mcpgw__go_crash", "mcp__mcpgw__go_cwd",
		"mcp__mcpgw__go_echo", "mcp__mcpgw__go_env", "mcp__mcpgw__go_fail", "mcp__mcpgw__go_freeze",
		"mcp__mcpgw__go_image", "mcp__mcpgw__go_log", "mcp__mcpgw__go_meta", "mcp__mcpgw__go_pid",
		"mcp__mcpgw__go_sleep", "mcp__mcpgw__go_spawn", "mcp__mcpgw__go_stderr", "mcp__mcpgw__go_subscriptions", "mcp__mcpgw__go_touch"}
	if cold := claudeDeferred(reqs[0]); !slices.Equal(cold, want) {
		t.Errorf("first start: the first request names %v, want %v", cold, want)
	}
	if got := reqs[1].LastToolResult(); !strings.HasPrefix(got, "mcp__mcpgw__go_echo\n") {
		t.Errorf("ToolSearch found %q, want mcp__mcpgw__go_echo first", got)
	}
	if !slices.Contains(reqs[1].Tools, "mcp__mcpgw__go_echo") {
		t.Errorf("after ToolSearch the model is offered %v, without mcp__mcpgw__go_echo", reqs[1].Tools)
	}
	if got := reqs[2].LastToolResult(); got != "hello from claude" {
		t.Errorf("mcp__mcpgw__go_echo gave %q", got)
	}

	e.stopDaemon()
	claudePrint(e, claude, "What can you do now?")
	reqs = e.turns(4)
	if warm := claudeDeferred(reqs[3]); !slices.Equal(warm, want) {
		t.Errorf("second start: the first request names %v, want %v", warm, want)
	}
}

// TestClaudeApproval: a tool under approveTools. mcpgw asks Claude Code
// with an elicitation form. In print mode nobody is there to answer it:
// Claude Code declines, and the model is told the call was denied. An
// Elicitation hook (Claude Code's way to answer forms without its
// interface) sees the form, with the call's arguments, and allows once.
func TestClaudeApproval(t *testing.T) {
	t.Parallel()
	servers := map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "approveTools": []string{"echo"}}}
	e, claude := newClaudeEnv(t, servers,
		e2e.ModelStep{ToolFrom: "ToolSearch", Args: map[string]any{"query": "select:mcp__mcpgw__go_echo"}},
		e2e.ModelStep{Tool: "mcp__mcpgw__go_echo", Args: map[string]any{"message": "nobody asked"}},
		e2e.ModelStep{Text: "denied"},
		e2e.ModelStep{ToolFrom: "ToolSearch", Args: map[string]any{"query": "select:mcp__mcpgw__go_echo"}},
		e2e.ModelStep{Tool: "mcp__mcpgw__go_echo", Args: map[string]any{"message": "allowed by hook"}},
		e2e.ModelStep{Text: "done"},
	)
	claudePrint(e, claude, "Echo, nobody to approve.")
	reqs := e.turns(3)
	want := "The user denied the call of echo on server go (decided by elicitation). Do not retry it unless the user asks."
	if got := reqs[2].LastToolResult(); got != want {
		t.Errorf("unanswered approval gave %q, want %q", got, want)
	}

	asked := filepath.Join(e.home, "elicitation.json")
	answer := `{"hookSpecificOutput":{"hookEventName":"Elicitation","action":"accept","content":{"decision":"once"}}}`
	e2e.WriteJSON(t, filepath.Join(e.home, ".claude", "settings.json"), map[string]any{"hooks": map[string]any{
		"Elicitation": []any{map[string]any{"matcher": "mcpgw", "hooks": []any{map[string]any{
			"type": "command", "command": "cat > " + asked + "; echo '" + answer + "'",
		}}}},
	}})
	claudePrint(e, claude, "Echo, the hook approves.")
	reqs = e.turns(6)
	if got := reqs[5].LastToolResult(); got != "allowed by hook" {
		t.Errorf("approved call gave %q", got)
	}
	data, err := os.ReadFile(asked)
	if err != nil {
		t.Fatalf("the Elicitation hook was not run: %v", err)
	}
	var form struct {
		Server  string `json:"mcp_server_name"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(data, &form); err != nil {
		t.Fatalf("the hook's input %s: %v", data, err)
	}
	t.Logf("the hook was asked: %s", data)
	if form.Server != "mcpgw" || !strings.HasPrefix(form.Message, "Allow the call of echo on server go?") ||
		!strings.Contains(form.Message, `message: "allowed by hook"`) {
		t.Errorf("the form from server %q says %q; want mcpgw's, naming the tool and the argument", form.Server, form.Message)
	}
}
