//go:build unix

package agents

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// opencode end-to-end: mcpgw in opencode.json as the README says (proxy
// mode: the model sees one tool of mcpgw's, mcpgw_mcp), the model an
// OpenAI-compatible local provider.

// opencode-ai takes its binary from one of twelve platform packages, and a
// lock file cannot name them all where not every one is published: the
// tests take the Linux binary that runs on any x86-64 (optional, so that
// npm ci elsewhere skips it) and run it directly.
const opencodeCLI = "node_modules/opencode-linux-x64-baseline/bin/opencode"

// newOpencodeEnv is an agentEnv for opencode: the README's opencode.json
// with the fake model as its provider, and what opencode fetches besides
// turned off: the models.dev catalogue, updates, default plugins, language
// servers, sharing. At start opencode installs its plugin package into its
// config directory with npm; npm is kept offline, the install fails, and
// opencode goes on without it. It returns the command line that runs
// opencode on prompt.
func newOpencodeEnv(t *testing.T, servers map[string]any, script ...e2e.ModelStep) (*agentEnv, func(prompt string) []string) {
	t.Helper()
	opencode := needAgent(t, opencodeCLI)
	e := newAgentEnv(t, e2e.OpenAIChat{}, servers, script...)
	e.setenv("OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1", "npm_config_offline=true")
	e2e.WriteJSON(t, filepath.Join(e.home, ".config", "opencode", "opencode.json"), map[string]any{
		"$schema": "https://opencode.ai/config.json",
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "fake",
			"options": map[string]any{"baseURL": e.model.BaseURL(), "apiKey": "fake"},
			"models":  map[string]any{"fake": map[string]any{"name": "fake"}},
		}},
		"model": "fake/fake",
		"mcp":   map[string]any{"mcpgw": map[string]any{"type": "local", "command": []string{e.bin, "stdio"}}},
	})
	return e, func(prompt string) []string { return []string{opencode, "run", prompt} }
}

// TestOpencodeProxySearchThenCall: from a cold daemon, opencode's first
// request offers mcpgw's one tool; the model searches, calls go_echo and
// gets its text. Started again, on a new daemon answering from the cache,
// the first request offers the same.
func TestOpencodeProxySearchThenCall(t *testing.T) {
	t.Parallel()
	e, opencode := newOpencodeEnv(t, goServer,
		e2e.ModelStep{Tool: "mcpgw_mcp", Args: map[string]any{"search": "echo"}},
		e2e.ModelStep{Tool: "mcpgw_mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "hello from opencode"}}},
		e2e.ModelStep{Text: "done"},
		e2e.ModelStep{Text: "warm"},
	)
	cmd := opencode("Echo a greeting through the gateway.")
	t.Logf("opencode output:\n%s", e.run(cmd[0], cmd[1:]...))
	reqs := e.turns(3)
	want := []string{"mcpgw_mcp"}
	if got := mcpTools(reqs[0], "mcpgw_"); !slices.Equal(got, want) {
		t.Errorf("first request offers mcpgw's tools %v, want %v", got, want)
	}
	if got := reqs[1].LastToolResult(); !strings.Contains(got, "\ngo_echo - Returns the message.\n") {
		t.Errorf("search result:\n%s", got)
	}
	if got := reqs[2].LastToolResult(); got != "hello from opencode" {
		t.Errorf("the call gave %q", got)
	}

	e.stopDaemon()
	cmd = opencode("And now?")
	t.Logf("opencode output:\n%s", e.run(cmd[0], cmd[1:]...))
	reqs = e.turns(4)
	if got := mcpTools(reqs[3], "mcpgw_"); !slices.Equal(got, want) {
		t.Errorf("second start: first request offers mcpgw's tools %v, want %v", got, want)
	}
}

// TestOpencodeApproval: a tool under approveTools, called from opencode.
// The person allows it with `mcpgw approve`, and the model gets the
// result.
func TestOpencodeApproval(t *testing.T) {
	t.Parallel()
	servers := map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "approveTools": []string{"echo"}}}
	e, opencode := newOpencodeEnv(t, servers,
		e2e.ModelStep{Tool: "mcpgw_mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "approved"}}},
		e2e.ModelStep{Text: "done"},
	)
	cmd := opencode("Echo after approval.")
	wait := e.start(cmd[0], cmd[1:]...)
	list := e.approveFromCLI("echo")
	t.Logf("opencode output:\n%s", wait())
	reqs := e.turns(2)
	if !strings.Contains(list, `message: "approved"`) {
		t.Errorf("mcpgw approve --list does not show the call's argument:\n%s", list)
	}
	if got := reqs[1].LastToolResult(); got != "approved" {
		t.Errorf("the approved call gave %q", got)
	}
}
