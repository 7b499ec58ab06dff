//go:build unix

package agents

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// Gemini CLI end-to-end: mcpgw in ~/.gemini/settings.json as the README
// says, in proxy mode: the model sees one tool of mcpgw's,
// mcp_mcpgw_mcp, searches through it, then calls a tool through it.

const geminiCLI = "node_modules/@google/gemini-cli/bundle/gemini.js"

// newGeminiEnv is an agentEnv for Gemini CLI: its model API at the fake
// model with an API key, usage statistics and update checks off, the
// working directory trusted, and the README's mcpServers entry. It
// returns the command line that runs Gemini CLI on prompt.
func newGeminiEnv(t *testing.T, servers map[string]any, script ...e2e.ModelStep) (*agentEnv, func(prompt string) []string) {
	t.Helper()
	gemini := needAgent(t, geminiCLI)
	node := needAgent(t, "node_modules/node/bin/node")
	e := newAgentEnv(t, e2e.GeminiContent{}, servers, script...)
	e.setenv("GOOGLE_GEMINI_BASE_URL="+e.model.RootURL(), "GEMINI_API_KEY=fake")
	e2e.WriteJSON(t, filepath.Join(e.home, ".gemini", "settings.json"), map[string]any{
		"security":   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"mcpServers": map[string]any{"mcpgw": map[string]any{"command": e.bin, "args": []string{"stdio"}}},
	})
	// What trusting the folder in Gemini CLI's interface writes.
	e2e.WriteJSON(t, filepath.Join(e.home, ".gemini", "trustedFolders.json"), map[string]any{e.dir: "TRUST_FOLDER"})
	// A model named, so that Gemini CLI asks no model of its own which
	// model to use (its router's side requests).
	return e, func(prompt string) []string {
		return []string{node, gemini, "-p", prompt, "-m", "gemini-2.5-flash", "--approval-mode", "yolo"}
	}
}

// mcpTools is the tools of a request named with prefix.
func mcpTools(r e2e.ModelRequest, prefix string) []string {
	var names []string
	for _, n := range r.Tools {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	return names
}

// geminiResult is how Gemini CLI hands the model an MCP tool's text.
func geminiResult(text string) string {
	return "<untrusted_context>\n" + text + "\n</untrusted_context>"
}

// TestGeminiProxySearchThenCall: from a cold daemon, Gemini CLI's first
// request offers mcpgw's one tool; the model searches, calls go_echo and
// gets its text. Started again, on a new daemon answering from the cache,
// the first request offers the same.
func TestGeminiProxySearchThenCall(t *testing.T) {
	t.Parallel()
	e, gemini := newGeminiEnv(t, goServer,
		e2e.ModelStep{Tool: "mcp_mcpgw_mcp", Args: map[string]any{"search": "echo"}},
		e2e.ModelStep{Tool: "mcp_mcpgw_mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "hello from gemini"}}},
		e2e.ModelStep{Text: "done"},
		e2e.ModelStep{Text: "warm"},
	)
	cmd := gemini("Echo a greeting through the gateway.")
	t.Logf("gemini output:\n%s", e.run(cmd[0], cmd[1:]...))
	reqs := e.turns(3)
	want := []string{"mcp_mcpgw_mcp"}
	if got := mcpTools(reqs[0], "mcp_"); !slices.Equal(got, want) {
		t.Errorf("first request offers MCP tools %v, want %v", got, want)
	}
	if got := reqs[1].LastToolResult(); !strings.Contains(got, "\ngo_echo - Returns the message.\n") {
		t.Errorf("search result:\n%s", got)
	}
	if got := reqs[2].LastToolResult(); got != geminiResult("hello from gemini") {
		t.Errorf("the call gave %q", got)
	}

	e.stopDaemon()
	cmd = gemini("And now?")
	t.Logf("gemini output:\n%s", e.run(cmd[0], cmd[1:]...))
	reqs = e.turns(4)
	if got := mcpTools(reqs[3], "mcp_"); !slices.Equal(got, want) {
		t.Errorf("second start: first request offers MCP tools %v, want %v", got, want)
	}
}

// TestGeminiApproval: a tool under approveTools, called from Gemini CLI.
// The person allows it with `mcpgw approve`, and the model gets the
// result.
func TestGeminiApproval(t *testing.T) {
	t.Parallel()
	servers := map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "approveTools": []string{"echo"}}}
	e, gemini := newGeminiEnv(t, servers,
		e2e.ModelStep{Tool: "mcp_mcpgw_mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "approved"}}},
		e2e.ModelStep{Text: "done"},
	)
	cmd := gemini("Echo after approval.")
	wait := e.start(cmd[0], cmd[1:]...)
	list := e.approveFromCLI("echo")
	t.Logf("gemini output:\n%s", wait())
	reqs := e.turns(2)
	if !strings.Contains(list, `message: "approved"`) {
		t.Errorf("mcpgw approve --list does not show the call's argument:\n%s", list)
	}
	if got := reqs[1].LastToolResult(); got != geminiResult("approved") {
		t.Errorf("the approved call gave %q", got)
	}
}
