//go:build unix

package pi

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/statuspage"
	"github.com/mcpgw/mcpgw/internal/e2e"
)

// pi-mcp-adapter at protocol 2026-07-28 against mcpgw: the README's Pi
// entry with the adapter's per-server "protocolVersion", over the shim and
// over HTTP, the real Pi driven by the scripted fake model. The adapter's
// "tasks" option stays at its default (on): it takes the tasks extension's
// path only with a server that advertises the extension, which mcpgw does
// not, so every call here is a plain tools/call.

// pi2026Upstream is the upstream behind mcpgw: the fake test server.
var pi2026Upstream = map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}

// sessionsSeen keeps the daemon's live sessions as its status page lists
// them, read while Pi is connected (from a model step's Before hook, on
// the fake model's goroutine).
type sessionsSeen struct {
	mu   sync.Mutex
	runs [][]statuspage.Session
}

func (s *sessionsSeen) read(t *testing.T, base string) {
	req, _ := http.NewRequest("GET", base+"/", nil)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("reading the status page: %v", err)
		return
	}
	defer resp.Body.Close()
	var d statuspage.Data
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Errorf("decoding the status page: %v", err)
	}
	s.mu.Lock()
	s.runs = append(s.runs, d.SessionList)
	s.mu.Unlock()
}

func (s *sessionsSeen) all() [][]statuspage.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs)
}

// pi2026Turns is one Pi run's script: a search through mcpgw's mcp tool,
// a call of go_echo with message through it (the daemon's sessions read
// just before it is answered), and done.
func pi2026Turns(t *testing.T, base *string, seen *sessionsSeen, message string) []e2e.ModelStep {
	return []e2e.ModelStep{
		{ToolFrom: "mcp", Args: map[string]any{"search": "echo"}},
		{ToolFrom: "mcp", Args: map[string]any{"tool": "go_echo", "args": map[string]any{"message": message}},
			Before: func() { seen.read(t, *base) }},
		{Text: "done"},
	}
}

// checkPi2026Runs asserts what the model got in each run of messages
// (three requests a run, as pi2026Turns scripts): offered mcpgw_mcp and
// none of the adapter's own tools, the search found go_echo, the call gave
// the message back.
func checkPi2026Runs(t *testing.T, e *piEnv, messages ...string) {
	t.Helper()
	reqs := e.model.Requests()
	for i, r := range reqs {
		t.Logf("request %d tools %v\nlast tool result: %s", i, r.Tools, r.LastToolResult())
	}
	if len(reqs) != 3*len(messages) {
		t.Fatalf("the model was asked %d times, want %d", len(reqs), 3*len(messages))
	}
	for i, r := range reqs {
		if got := mcpToolsOffered(r); !slices.Equal(got, []string{"mcpgw_mcp"}) {
			t.Errorf("request %d: the model is offered %v besides Pi's own tools, want [mcpgw_mcp]", i, got)
		}
	}
	for run, message := range messages {
		if got := reqs[3*run+1].LastToolResult(); !strings.Contains(got, "\ngo_echo - Returns the message.") {
			t.Errorf("run %d: the search through mcpgw_mcp gave %q, want go_echo among its results", run, got)
		}
		if got := reqs[3*run+2].LastToolResult(); got != message {
			t.Errorf("run %d: calling go_echo through mcpgw_mcp gave %q, want %q", run, got, message)
		}
	}
}

// piEntry2026 is the README's Pi file, with mcpgw's entry given
// protocolVersion.
func piEntry2026(t *testing.T, protocolVersion string) map[string]any {
	t.Helper()
	cfg := readmePiFile(t, 0)
	entry, _ := cfg["mcpServers"].(map[string]any)["mcpgw"].(map[string]any)
	if entry == nil {
		t.Fatalf("the README's Pi file has no mcpgw entry: %v", cfg)
	}
	entry["protocolVersion"] = protocolVersion
	return cfg
}

// checkShimSessions asserts that while each run called, the daemon had
// the adapter's session over the shim, speaking 2026-07-28, and no other
// kind.
func checkShimSessions(t *testing.T, seen *sessionsSeen, runs int) {
	t.Helper()
	all := seen.all()
	if len(all) != runs {
		t.Fatalf("the daemon's sessions were read in %d runs, want %d", len(all), runs)
	}
	for run, list := range all {
		t.Logf("run %d: the daemon's sessions: %+v", run, list)
		if len(list) == 0 {
			t.Errorf("run %d: the daemon lists no session while Pi calls", run)
		}
		for _, s := range list {
			if s.Client != "pi-mcp-mcpgw 1.0.0" || s.Transport != "socket" || s.Protocol != "2026-07-28" || s.Mode != "proxy" {
				t.Errorf("run %d: session %+v, want pi-mcp-mcpgw's over the shim (socket) at 2026-07-28, in proxy mode", run, s)
			}
		}
	}
}

// TestPi2026ShimPinned: the README's Pi entry (mcpgw stdio) with the
// adapter pinned to 2026-07-28, which has no fallback to the 2025
// handshake, from a cold start (no daemon, nothing cached: the shim
// starts the daemon) and warm (the adapter's cache holds mcpgw's tools,
// the daemon runs): the model is offered mcpgw_mcp alone, a search and a
// call through it reach the upstream, and the daemon serves the adapter's
// connection at 2026-07-28.
func TestPi2026ShimPinned(t *testing.T) {
	t.Parallel()
	needPi(t)
	var base string
	seen := &sessionsSeen{}
	e := newPiEnv(t, pi2026Upstream, nil, nil, nil,
		append(pi2026Turns(t, &base, seen, "cold at 2026-07-28"), pi2026Turns(t, &base, seen, "warm at 2026-07-28")...)...)
	base = e.url
	e.usePiFile(piEntry2026(t, "2026-07-28"))

	e.runPi("Echo a greeting through the gateway.")
	e2e.WaitCached(t, filepath.Join(e.home, ".pi", "agent", "mcp-cache.json"), "mcpgw")
	e.runPi("Echo a greeting through the gateway.")
	checkPi2026Runs(t, e, "cold at 2026-07-28", "warm at 2026-07-28")
	checkShimSessions(t, seen, 2)
}

// TestPi2026ShimAuto: with "protocolVersion": "auto" over the shim the
// adapter probes mcpgw (a sibling shim, then its own) and settles on
// 2026-07-28.
func TestPi2026ShimAuto(t *testing.T) {
	t.Parallel()
	needPi(t)
	var base string
	seen := &sessionsSeen{}
	e := newPiEnv(t, pi2026Upstream, nil, nil, nil, pi2026Turns(t, &base, seen, "auto settles on 2026-07-28")...)
	base = e.url
	e.usePiFile(piEntry2026(t, "auto"))

	e.runPi("Echo a greeting through the gateway.")
	checkPi2026Runs(t, e, "auto settles on 2026-07-28")
	checkShimSessions(t, seen, 1)
}

// serve starts e's daemon as a service runs it (mcpgw serve; no shim
// starts one when Pi reaches mcpgw by URL) and waits until it answers.
func (e *piEnv) serve() {
	e.t.Helper()
	cmd := exec.Command(e.bin, "serve", "--socket", e.sock, "--config", e.config)
	cmd.Env = e.env
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		e2e.StopDaemonAt(e.t, e.url)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	e2e.WaitHTTP(e.t, e.url+"/healthz")
}

// TestPi2026HTTPPinned: the README's Pi entry with mcpgw's /mcp as its
// url instead of the shim, pinned to 2026-07-28, cold (the daemon just
// started, nothing cached) and warm. No request has a session: each is
// served by the conversation its headers describe, here the working
// directory Mcp-Gateway-Cwd names, which the daemon lists as one
// conversation over HTTP at 2026-07-28 and no 2025-era session beside it.
// (The adapter cancels its first connect at Pi's start, at every protocol
// version, and then probes the URL without its headers: a bare
// server/discover, which opens a conversation of no directory, and an
// initialize it never follows up, which leaves no session.)
// pi-mcp-adapter makes a tool of each resource it is listed; a
// conversation lists it none in proxy mode, as a session does.
func TestPi2026HTTPPinned(t *testing.T) {
	t.Parallel()
	needPi(t)
	var base string
	seen := &sessionsSeen{}
	e := newPiEnv(t, pi2026Upstream, nil, nil, nil,
		append(pi2026Turns(t, &base, seen, "cold over HTTP"), pi2026Turns(t, &base, seen, "warm over HTTP")...)...)
	base = e.url
	cfg := piEntry2026(t, "2026-07-28")
	entry := cfg["mcpServers"].(map[string]any)["mcpgw"].(map[string]any)
	delete(entry, "command")
	delete(entry, "args")
	entry["url"] = e.url + "/mcp"
	entry["headers"] = map[string]any{"Mcp-Gateway-Cwd": e.home}
	e2e.WriteJSON(t, filepath.Join(e.home, ".pi", "agent", "mcp.json"), cfg)
	e.serve()

	e.runPi("Echo a greeting through the gateway.")
	e2e.WaitCached(t, filepath.Join(e.home, ".pi", "agent", "mcp-cache.json"), "mcpgw")
	e.runPi("Echo a greeting through the gateway.")
	checkPi2026Runs(t, e, "cold over HTTP", "warm over HTTP")

	all := seen.all()
	if len(all) != 2 {
		t.Fatalf("the daemon's sessions were read in %d runs, want 2", len(all))
	}
	for run, list := range all {
		t.Logf("run %d: the daemon's sessions: %+v", run, list)
		var ours []statuspage.Session
		for _, s := range list {
			if s.Dir == e.home {
				ours = append(ours, s)
			}
			if s.Protocol != "2026-07-28" || s.Transport != "http" {
				t.Errorf("run %d: session %+v, want conversations over HTTP at 2026-07-28 only", run, s)
			}
		}
		if len(ours) != 1 || ours[0].Mode != "proxy" {
			t.Errorf("run %d: sessions in %s: %+v, want one conversation, in proxy mode", run, e.home, ours)
		}
	}
}
