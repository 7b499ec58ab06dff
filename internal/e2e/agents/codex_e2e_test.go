//go:build unix

package agents

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// Codex end-to-end: mcpgw in ~/.codex/config.toml as the README says
// (proxy mode; required, so that Codex waits for its tools before the
// first request), the model a local provider on the Responses API. Codex
// sends an MCP server's tools as one namespace, mcp__mcpgw, and starts
// MCP servers with only HOME, PATH, SHELL, TERM and LANG of its
// environment: the shim finds the daemon, which runs as a service would,
// through the socket it advertises under $HOME.

const codexCLI = "node_modules/@openai/codex/bin/codex.js"

// newCodexEnv is an agentEnv for Codex: the README's config.toml with the
// fake model as its provider, and mcpgw's daemon started beforehand as a
// service. It returns the command line that runs Codex on prompt.
func newCodexEnv(t *testing.T, servers map[string]any, script ...e2e.ModelStep) (*agentEnv, func(prompt string) []string) {
	t.Helper()
	codex := needAgent(t, codexCLI)
	node := needAgent(t, "node_modules/node/bin/node")
	// Without XDG_RUNTIME_DIR the shim tries the user's own socket before
	// the advertised one: a daemon of this machine's user there would
	// answer instead of the test's.
	uid := strconv.Itoa(os.Getuid())
	for _, own := range []string{filepath.Join("/run/user", uid, "mcpgw", "mcpgw.sock"), filepath.Join("/tmp", "mcpgw-"+uid, "mcpgw.sock")} {
		if _, err := os.Lstat(own); err == nil {
			t.Skipf("a daemon's socket is at %s, which Codex's MCP servers would reach before the test's", own)
		}
	}
	e := newAgentEnv(t, e2e.OpenAIResponses{}, servers, script...)
	config := fmt.Sprintf(`model = "fake"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"

[mcp_servers.mcpgw]
command = %q
args = ["stdio"]
required = true
default_tools_approval_mode = "approve"
`, e.model.BaseURL(), e.bin)
	if err := os.MkdirAll(filepath.Join(e.home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, ".codex", "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	e.serve()
	return e, func(prompt string) []string {
		return []string{node, codex, "exec", "--skip-git-repo-check", prompt}
	}
}

// serve starts the daemon as a service would (with the whole environment)
// and waits until it answers on its socket, where the shim Codex starts
// finds it: another program may have taken the test's port before the
// daemon bound it (the daemon then serves its socket only), and would
// answer there instead.
func (e *agentEnv) serve() {
	e.t.Helper()
	cmd := exec.Command(e.bin, "serve")
	cmd.Env = e.env
	p := e2e.StartProcess(e.t, cmd)
	deadline := time.Now().Add(e2e.WaitLimit)
	for {
		resp, err := e.daemonGet("/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			err = fmt.Errorf("/healthz answered %s", resp.Status)
		}
		select {
		case <-p.Exited:
			e.t.Fatalf("mcpgw serve exited (%v); its output:\n%s", p.Err, p.Output.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("mcpgw did not answer on %s within %v: %v; its output:\n%s", e.sock, e2e.WaitLimit, err, p.Output.String())
		}
	}
}

// codexResult is how Codex hands the model an MCP tool's text: after the
// call's wall time, which the test cannot know.
func codexResult(t *testing.T, got string) string {
	t.Helper()
	_, text, ok := strings.Cut(got, " seconds\nOutput:")
	if !strings.HasPrefix(got, "Wall time: ") || !ok {
		t.Errorf("Codex's tool result %q does not read \"Wall time: N seconds\\nOutput:…\"", got)
	}
	return text
}

// TestCodexProxySearchThenCall: Codex's first request offers mcpgw's one
// tool in the mcp__mcpgw namespace; the model searches, calls go_echo and
// gets its text. Started again, on a new daemon answering from the cache,
// the first request offers the same.
func TestCodexProxySearchThenCall(t *testing.T) {
	t.Parallel()
	e, codex := newCodexEnv(t, goServer,
		e2e.ModelStep{Tool: "mcp__mcpgw__mcp", Args: map[string]any{"search": "echo"}},
		e2e.ModelStep{Tool: "mcp__mcpgw__mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "hello from codex"}}},
		e2e.ModelStep{Text: "done"},
		e2e.ModelStep{Text: "warm"},
	)
	cmd := codex("Echo a greeting through the gateway.")
	t.Logf("codex output:\n%s", e.run(cmd[0], cmd[1:]...))
	reqs := e.turns(3)
	want := []string{"mcp__mcpgw__mcp"}
	if got := mcpTools(reqs[0], "mcp__"); !slices.Equal(got, want) {
		t.Errorf("first request offers MCP tools %v, want %v", got, want)
	}
	if got := codexResult(t, reqs[1].LastToolResult()); !strings.Contains(got, "\ngo_echo - Returns the message.\n") {
		t.Errorf("search result:\n%s", got)
	}
	if got := codexResult(t, reqs[2].LastToolResult()); got != "hello from codex" {
		t.Errorf("the call gave %q", got)
	}
	// Through the daemon the test started, found by its advertisement, not
	// one the shim started under Codex's trimmed environment.
	if got := e.metric(`mcpgw_tool_calls_total{outcome="ok",server="go"}`); got != "1" {
		t.Errorf("the test's daemon counted %q calls of go's tools, want 1", got)
	}

	e.stopDaemon()
	e.serve()
	cmd = codex("And now?")
	t.Logf("codex output:\n%s", e.run(cmd[0], cmd[1:]...))
	reqs = e.turns(4)
	if got := mcpTools(reqs[3], "mcp__"); !slices.Equal(got, want) {
		t.Errorf("second start: first request offers MCP tools %v, want %v", got, want)
	}
}

// TestCodexApproval: a tool under approveTools, called from codex exec.
// mcpgw asks Codex with an elicitation form; codex exec has nobody to show
// it to and declines it at once, so the call fails closed and the model is
// told it was denied.
func TestCodexApproval(t *testing.T) {
	t.Parallel()
	servers := map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "approveTools": []string{"echo"}}}
	e, codex := newCodexEnv(t, servers,
		e2e.ModelStep{Tool: "mcp__mcpgw__mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "nobody asked"}}},
		e2e.ModelStep{Text: "done"},
	)
	cmd := codex("Echo, nobody to approve.")
	t.Logf("codex output:\n%s", e.run(cmd[0], cmd[1:]...))
	reqs := e.turns(2)
	want := "The user denied the call of echo on server go (decided by elicitation). Do not retry it unless the user asks."
	if got := codexResult(t, reqs[1].LastToolResult()); got != want {
		t.Errorf("the call gave %q, want %q", got, want)
	}
}
