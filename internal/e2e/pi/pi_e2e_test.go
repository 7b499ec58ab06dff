//go:build unix

package pi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// Pi end-to-end: the real Pi from the npm registry, with pi-mcp-adapter,
// configured as the README says, against the real daemon (started by the
// shim, from an empty cache), with the model replaced by a scripted fake
// model on loopback. Each test asserts what the model received.

const (
	piCLI        = "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js"
	piAdapterExt = "node_modules/pi-mcp-adapter/index.ts"
	pi15CLI      = "pi15/package/dist/bundle/cli.js" // installed by install-pi15.mjs
)

// piEnv is a fresh home for one Pi run and the daemon its shim starts.
type piEnv struct {
	t      *testing.T
	bin    string // mcpgw
	home   string
	config string // mcpgw's config
	sock   string
	url    string // the daemon's HTTP base
	model  *e2e.FakeModel
	env    []string
	pi15   bool // Pi 1.5 with its built-in MCP instead of Pi 0.86 + pi-mcp-adapter
}

func needPi(t *testing.T) (node string) {
	t.Helper()
	node = e2e.Path("node_modules/node/bin/node")
	for _, f := range []string{node, e2e.Path(piCLI), e2e.Path(piAdapterExt), e2e.Path(pi15CLI)} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("Pi not installed (%v); install with: %s", err, e2e.NPMInstallHint)
			}
			t.Skipf("Pi not installed (%v); install with: %s", err, e2e.NPMInstallHint)
		}
	}
	return node
}

// newPiEnv writes mcpgw's config (servers), Pi's model config (the fake
// model) and the adapter's mcp.json with mcpgw as its only server, run
// through `mcpgw stdio shimArgs...`.
func newPiEnv(t *testing.T, servers map[string]any, settings map[string]any, shimArgs []string, adapterSettings map[string]any, script ...e2e.ModelStep) *piEnv {
	t.Helper()
	e := &piEnv{t: t, bin: e2e.BuildMcpgw(t), home: t.TempDir()}
	e.config = e2e.WriteConfig(t, e.home, servers, settings)
	e.sock = filepath.Join(e.home, "run", "mcpgw", "mcpgw.sock")
	port := e2e.FreePort(t)
	e.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	e.model = e2e.NewFakeModel(t, script...)
	agent := filepath.Join(e.home, ".pi", "agent")
	e2e.WriteJSON(t, filepath.Join(agent, "models.json"), map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": e.model.BaseURL(), "api": "openai-completions", "apiKey": "fake",
		"compat": map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false, "supportsUsageInStreaming": false},
		"models": []any{map[string]any{"id": "fake", "contextWindow": 128000, "maxTokens": 4096}},
	}}})
	args := append([]string{"stdio", "--socket", e.sock, "--config", e.config}, shimArgs...)
	entry := map[string]any{"command": e.bin, "args": args, "lifecycle": "eager", "directTools": true}
	if exposure, ok := adapterSettings["pi15Exposure"]; ok {
		// Pi 1.x's built-in MCP reads the same file, with its own fields.
		e.pi15 = true
		entry = map[string]any{"command": e.bin, "args": args, "exposure": exposure}
		adapterSettings = nil
		e2e.WriteJSON(t, filepath.Join(agent, "settings.json"), map[string]any{"defaultTools": []string{"+tool_search"}})
	}
	mcp := map[string]any{"mcpServers": map[string]any{"mcpgw": entry}}
	if adapterSettings != nil {
		mcp["settings"] = adapterSettings
	}
	e2e.WriteJSON(t, filepath.Join(agent, "mcp.json"), mcp)
	e.env = append(os.Environ(), "HOME="+e.home, "XDG_RUNTIME_DIR="+filepath.Join(e.home, "run"),
		"XDG_STATE_HOME="+filepath.Join(e.home, "state"), "XDG_CONFIG_HOME="+filepath.Join(e.home, "config"),
		"MCPGW_LISTEN=127.0.0.1:"+fmt.Sprint(port), "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "NO_COLOR=1")
	t.Cleanup(func() {
		// The daemon the shim started serves the socket whether or not
		// it got the port.
		e2e.StopDaemonOn(t, e.sock)
		e2e.StopDaemonAt(t, e.url)
		if t.Failed() {
			// What the daemon the shim started said, for the failure's why.
			if log, err := os.ReadFile(filepath.Join(e.home, "state", "mcpgw", "mcpgw.log")); err == nil {
				t.Logf("daemon log:\n%s", log)
			}
		}
	})
	return e
}

// runTurns runs Pi on prompt, logs each request the model got and Pi's
// output, and fails the test unless the model was asked want times.
func (e *piEnv) runTurns(prompt string, want int) []e2e.ModelRequest {
	e.t.Helper()
	out := e.runPi(prompt)
	reqs := e.model.Requests()
	for i, r := range reqs {
		e.t.Logf("request %d tools %v\nlast tool result: %s", i, r.Tools, r.LastToolResult())
	}
	e.t.Logf("pi output:\n%s", out)
	if len(reqs) != want {
		e.t.Fatalf("the model was asked %d times, want %d", len(reqs), want)
	}
	return reqs
}

// runPi runs one Pi turn in print mode and returns its output.
func (e *piEnv) runPi(prompt string) string {
	e.t.Helper()
	return e.runPiIn(e.home, prompt)
}

// runPiIn is runPi with Pi working in dir.
func (e *piEnv) runPiIn(dir, prompt string) string {
	e.t.Helper()
	node := needPi(e.t)
	defer e2e.Heavy()()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := []string{e2e.Path(piCLI), "-p", prompt, "--model", "fake/fake", "--no-session", "-e", e2e.Path(piAdapterExt)}
	if e.pi15 {
		args = []string{e2e.Path(pi15CLI), "-p", prompt, "--model", "fake/fake", "--no-session"}
	}
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	cmd.Env = e.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("pi: %v\n%s", err, out)
	}
	return string(out)
}

func TestPiProxySearchThenCall(t *testing.T) {
	t.Parallel()
	needPi(t)
	e := newPiEnv(t, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil, nil,
		map[string]any{"disableProxyTool": true, "scriptMode": false},
		e2e.ModelStep{ToolFrom: "mcp", Args: map[string]any{"search": "echo"}},
		e2e.ModelStep{ToolFrom: "mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "hello from pi"}}},
		e2e.ModelStep{Text: "done"},
	)
	reqs := e.runTurns("Echo a greeting through the gateway.", 3)
	if got := reqs[1].LastToolResult(); !strings.Contains(got, "go_echo - ") {
		t.Errorf("search from cold did not find go_echo:\n%s", got)
	}
	if got := reqs[2].LastToolResult(); !strings.Contains(got, "hello from pi") {
		t.Errorf("the call's result:\n%s", got)
	}
}

// TestPiToolSearchActivatesForNextTurn: in toolsearch mode the model
// activates a tool with ToolSearch and calls it, by the name the result
// gives, in the very next turn.
func TestPiToolSearchActivatesForNextTurn(t *testing.T) {
	t.Parallel()
	needPi(t)
	e := newPiEnv(t, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil,
		[]string{"--mode", "toolsearch"}, map[string]any{"disableProxyTool": true, "scriptMode": false},
		e2e.ModelStep{ToolFrom: "ToolSearch", Args: map[string]any{"query": "echo a message back"}},
		e2e.ModelStep{Tool: "mcpgw_go_echo", Args: map[string]any{"message": "activated"}},
		e2e.ModelStep{Text: "done"},
	)
	start := time.Now()
	out := e.runPi("Find a tool that echoes and use it.")
	reqs := e.model.Requests()
	for i, r := range reqs {
		t.Logf("request %d tools %v\nlast tool result: %s", i, r.Tools, r.LastToolResult())
	}
	t.Logf("pi output (%v):\n%s", time.Since(start).Round(time.Millisecond), out)
	if len(reqs) != 3 {
		t.Fatalf("the model was asked %d times, want 3", len(reqs))
	}
	if got := reqs[1].LastToolResult(); !strings.Contains(got, "- mcpgw_go_echo - ") {
		t.Errorf("ToolSearch result does not name the tool as Pi offers it:\n%s", got)
	}
	if !slices.Contains(reqs[1].Tools, "mcpgw_go_echo") {
		t.Errorf("the turn after ToolSearch offers %v, without the activated mcpgw_go_echo", reqs[1].Tools)
	}
	if got := reqs[2].LastToolResult(); got != "activated" {
		t.Errorf("calling the activated tool in the next turn gave %q", got)
	}
	t.Logf("ToolSearch answer held for the re-list: %s", e.metric("mcpgw_toolsearch_hold_seconds_sum"))
}

// metric returns a sample of the daemon's /metrics by its full name.
func (e *piEnv) metric(name string) string {
	e.t.Helper()
	resp, err := http.Get(e.url + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			return f[1] + " s"
		}
	}
	return "(absent)"
}

// TestPi15DeferredToolSearch: Pi 1.5's built-in MCP with the README's
// "exposure": "deferred" and mcpgw in direct mode: Pi's tool_search finds
// the tool from a cold daemon and the model calls it by Pi's name.
func TestPi15DeferredToolSearch(t *testing.T) {
	t.Parallel()
	needPi(t)
	e := newPiEnv(t, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil,
		[]string{"--mode", "direct"}, map[string]any{"pi15Exposure": "deferred"},
		e2e.ModelStep{ToolFrom: "tool_search", Args: map[string]any{"query": "echo message", "limit": 3}},
		e2e.ModelStep{Tool: "mcp__mcpgw__go_echo", Args: map[string]any{"message": "from pi 1.5"}},
		e2e.ModelStep{Text: "done"},
	)
	reqs := e.runTurns("Echo something.", 3)
	if !slices.Contains(reqs[1].Tools, "mcp__mcpgw__go_echo") {
		t.Errorf("after tool_search the model is offered %v, without mcp__mcpgw__go_echo", reqs[1].Tools)
	}
	if got := reqs[2].LastToolResult(); got != "from pi 1.5" {
		t.Errorf("mcp__mcpgw__go_echo gave %q", got)
	}
}

// TestPi15ToolSearchMode: Pi 1.5 with mcpgw's ToolSearch exposed directly:
// the result names tools as Pi calls them (mcp__mcpgw__...), and the tool
// is there in the next turn.
func TestPi15ToolSearchMode(t *testing.T) {
	t.Parallel()
	needPi(t)
	e := newPiEnv(t, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil,
		[]string{"--mode", "toolsearch"}, map[string]any{"pi15Exposure": "direct"},
		e2e.ModelStep{ToolFrom: "ToolSearch", Args: map[string]any{"query": "select:go_echo"}},
		e2e.ModelStep{Tool: "mcp__mcpgw__go_echo", Args: map[string]any{"message": "next turn"}},
		e2e.ModelStep{Text: "done"},
	)
	reqs := e.runTurns("Use the echo tool.", 3)
	if got := reqs[1].LastToolResult(); !strings.Contains(got, "- mcp__mcpgw__go_echo - ") {
		t.Errorf("ToolSearch result does not name the tool as Pi 1.5 offers it:\n%s", got)
	}
	if got := reqs[2].LastToolResult(); got != "next turn" {
		t.Errorf("the activated tool in the next turn gave %q", got)
	}
	t.Logf("ToolSearch answer held for the re-list: %s", e.metric("mcpgw_toolsearch_hold_seconds_sum"))
}

// TestPiSessionSurvivesDaemonRestart: the daemon is stopped between two
// turns of one Pi session; the next call works, through a daemon the shim
// started again, without Pi noticing.
func TestPiSessionSurvivesDaemonRestart(t *testing.T) {
	t.Parallel()
	needPi(t)
	// The hook runs on the fake model's goroutine, which the race detector
	// cannot see synchronised with this one through Pi's requests.
	var env atomic.Pointer[piEnv]
	var downFor atomic.Int64
	restart := func() {
		stopped := time.Now()
		e2e.StopDaemonOn(t, env.Load().sock)
		downFor.Store(int64(time.Since(stopped)))
	}
	e := newPiEnv(t, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil, nil,
		map[string]any{"disableProxyTool": true, "scriptMode": false},
		e2e.ModelStep{ToolFrom: "mcp", Args: map[string]any{"tool": "go_pid"}},
		e2e.ModelStep{ToolFrom: "mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": "after the restart"}}, Before: restart},
		e2e.ModelStep{ToolFrom: "mcp", Args: map[string]any{"tool": "go_pid"}},
		e2e.ModelStep{Text: "done"},
	)
	env.Store(e)
	e.runPi("Call a tool, then another.")
	reqs := e.model.Requests()
	for i, r := range reqs {
		t.Logf("request %d last tool result: %s", i, r.LastToolResult())
	}
	if len(reqs) != 4 {
		t.Fatalf("the model was asked %d times, want 4", len(reqs))
	}
	if got := reqs[2].LastToolResult(); got != "after the restart" {
		t.Errorf("the call after the daemon restart gave %q", got)
	}
	if a, b := reqs[1].LastToolResult(), reqs[3].LastToolResult(); a == b || a == "" {
		t.Errorf("upstream pid before %q and after %q: want two processes (a new daemon)", a, b)
	}
	t.Logf("stopping the daemon took %v", time.Duration(downFor.Load()).Round(time.Millisecond))
}

// TestPiPerProjectServers: two Pi sessions in two trusted project
// directories, each with its own .mcp.json server of the same name; each
// session's server runs in its own project directory.
func TestPiPerProjectServers(t *testing.T) {
	t.Parallel()
	needPi(t)
	e := newPiEnv(t, map[string]any{}, nil, nil, map[string]any{"disableProxyTool": true, "scriptMode": false},
		e2e.ModelStep{ToolFrom: "mcp", Args: map[string]any{"tool": "proj_cwd"}},
		e2e.ModelStep{Text: "done"},
		e2e.ModelStep{ToolFrom: "mcp", Args: map[string]any{"tool": "proj_cwd"}},
		e2e.ModelStep{Text: "done"},
	)
	var dirs []string
	for _, name := range []string{"alpha", "beta"} {
		dir := filepath.Join(e.home, "src", name)
		e2e.WriteJSON(t, filepath.Join(dir, ".mcp.json"), map[string]any{"mcpServers": map[string]any{
			"proj": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
		}})
		trust := exec.Command(e.bin, "trust", dir)
		trust.Env = e.env
		if out, err := trust.CombinedOutput(); err != nil {
			t.Fatalf("mcpgw trust: %v\n%s", err, out)
		}
		dirs = append(dirs, dir)
	}
	for _, dir := range dirs {
		e.runPiIn(dir, "Where does the project server run?")
	}
	reqs := e.model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the model was asked %d times, want 4", len(reqs))
	}
	for i, dir := range dirs {
		got := reqs[2*i+1].LastToolResult()
		want, _ := filepath.EvalSymlinks(dir)
		if got != dir && got != want {
			t.Errorf("session in %s: proj_cwd = %q", dir, got)
		}
	}
}

// TestPi15DirectListsOnce: Pi 1.5 lists a server's tools once, before its
// first prompt, when the server's exposure is direct. From a cold daemon
// that first tools/list waits for discovery, so the model's very first
// request already offers the upstream's tools.
func TestPi15DirectListsOnce(t *testing.T) {
	t.Parallel()
	needPi(t)
	e := newPiEnv(t, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil,
		[]string{"--mode", "direct"}, map[string]any{"pi15Exposure": "direct"},
		e2e.ModelStep{Tool: "mcp__mcpgw__go_echo", Args: map[string]any{"message": "first turn"}},
		e2e.ModelStep{Text: "done"},
	)
	e.runPi("Echo at once.")
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(reqs))
	}
	if !slices.Contains(reqs[0].Tools, "mcp__mcpgw__go_echo") {
		t.Errorf("the first request offers %v, without the upstream's tools", reqs[0].Tools)
	}
	if got := reqs[1].LastToolResult(); got != "first turn" {
		t.Errorf("mcp__mcpgw__go_echo = %q", got)
	}
}

// TestPi15SessionSurvivesDaemonRestart: the same restart as with the
// adapter, with Pi 1.5's own MCP client.
func TestPi15SessionSurvivesDaemonRestart(t *testing.T) {
	t.Parallel()
	needPi(t)
	var env atomic.Pointer[piEnv]
	restart := func() { e2e.StopDaemonOn(t, env.Load().sock) }
	e := newPiEnv(t, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil,
		[]string{"--mode", "direct"}, map[string]any{"pi15Exposure": "direct"},
		e2e.ModelStep{Tool: "mcp__mcpgw__go_pid", Args: map[string]any{}},
		e2e.ModelStep{Tool: "mcp__mcpgw__go_echo", Args: map[string]any{"message": "after the restart"}, Before: restart},
		e2e.ModelStep{Text: "done"},
	)
	env.Store(e)
	e.runPi("Call two tools.")
	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("the model was asked %d times, want 3", len(reqs))
	}
	if got := reqs[2].LastToolResult(); got != "after the restart" {
		t.Errorf("the call after the daemon restart gave %q", got)
	}
}

// TestPi15HiddenToolNeverReachesModel: Pi 1.5's own mcp.json hides a
// tool (toolExposure) of a server mcpgw imports from that file; from a
// cold cache, the model is never offered it through mcpgw, and a call the
// model makes of it anyway does not reach the upstream.
func TestPi15HiddenToolNeverReachesModel(t *testing.T) {
	t.Parallel()
	needPi(t)
	e := newPiEnv(t, nil, nil, []string{"--mode", "direct"}, map[string]any{"pi15Exposure": "direct"},
		e2e.ModelStep{Tool: "mcp__mcpgw__go_delete_thing", Args: map[string]any{"name": "prod"}},
		e2e.ModelStep{Text: "done"},
	)
	agentFile := filepath.Join(e.home, ".pi", "agent", "mcp.json")
	data, err := os.ReadFile(agentFile)
	if err != nil {
		t.Fatal(err)
	}
	var piCfg map[string]map[string]any
	if err := json.Unmarshal(data, &piCfg); err != nil {
		t.Fatal(err)
	}
	piCfg["mcpServers"]["go"] = e2e.PolicyServer(map[string]any{"toolExposure": map[string]any{"delete_*": "hidden"}})
	e2e.WriteJSON(t, agentFile, piCfg)
	e2e.WriteJSON(t, e.config, map[string]any{"imports": []string{"pi"}})

	reqs := e.runTurns("Delete the thing called prod.", 2)
	if !slices.Contains(reqs[0].Tools, "mcp__mcpgw__go_read_thing") {
		log, _ := os.ReadFile(filepath.Join(e.home, "state", "mcpgw", "mcpgw.log"))
		t.Errorf("the model is offered %v, without go's visible tools through mcpgw; the daemon's log:\n%s", reqs[0].Tools, log)
	}
	for _, name := range reqs[0].Tools {
		if strings.Contains(name, "delete_thing") {
			t.Errorf("the model is offered the hidden tool as %s", name)
		}
	}
	if got := reqs[1].LastToolResult(); strings.Contains(got, "deleted") {
		t.Errorf("the hidden tool ran: %q", got)
	}
}

// TestPi15Codemode: Pi 1.5's default MCP exposure, codemode, over mcpgw
// in direct mode from a cold daemon: the (scripted) model writes one
// script that searches, calls two mcpgw tools and combines them — the
// structured result of one, the text of the other — in a single turn.
func TestPi15Codemode(t *testing.T) {
	t.Parallel()
	needPi(t)
	code := `const hits = await searchTools("echo a message", { limit: 5 });
const echo = await tools.mcp__mcpgw__go_echo({ message: "from codemode" });
const sum = await tools.mcp__mcpgw__go_add({ a: 20, b: 22 });
return JSON.stringify({ found: hits.map(h => h.name).includes("mcp__mcpgw__go_echo"), echo, sum });`
	e := newPiEnv(t, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil,
		[]string{"--mode", "direct"}, map[string]any{"pi15Exposure": "codemode"},
		e2e.ModelStep{Tool: "codemode", Args: map[string]any{"code": code}},
		e2e.ModelStep{Text: "done"},
	)
	reqs := e.runTurns("Echo something and add two numbers.", 2)
	if !slices.Contains(reqs[0].Tools, "codemode") || slices.Contains(reqs[0].Tools, "mcp__mcpgw__go_echo") {
		t.Errorf("the model is offered %v, want codemode and not the MCP tools themselves", reqs[0].Tools)
	}
	// Pi resolves a call to the tool's whole result when it declares no
	// output; the structured content is there when it does.
	if got := reqs[1].LastToolResult(); !strings.Contains(got, `"found":true`) || !strings.Contains(got, `"text":"from codemode"`) || !strings.Contains(got, `"structuredContent":{"sum":42}`) {
		t.Errorf("codemode gave %q", got)
	}
}

// TestPiAdapterScriptGetsStructuredResults: pi-mcp-adapter's mcpScript
// over mcpgw in direct mode (the adapter then knows each tool and its
// output schema): a script's call returns the structured content, not
// the mcp tool's text.
func TestPiAdapterScriptGetsStructuredResults(t *testing.T) {
	t.Parallel()
	needPi(t)
	code := `const sum = await tools.call("mcpgw_go_add", { a: 20, b: 22 });
const echo = await tools.call("mcpgw_go_echo", { message: "from mcpScript" });
emit({ sum: sum.ok && sum.data.structuredContent.sum, echo: echo.ok && echo.data.content[0].text });`
	e := newPiEnv(t, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil,
		[]string{"--mode", "direct"}, map[string]any{"disableProxyTool": true},
		e2e.ModelStep{Tool: "mcpScript", Args: map[string]any{"code": code}},
		e2e.ModelStep{Text: "done"},
	)
	reqs := e.runTurns("Add two numbers and echo something.", 2)
	if got := strings.Join(strings.Fields(reqs[1].LastToolResult()), ""); !strings.Contains(got, `"sum":42`) || !strings.Contains(got, `"echo":"frommcpScript"`) {
		t.Errorf("mcpScript gave %q", got)
	}
}
