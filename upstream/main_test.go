package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/proctest"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream/testmain"
)

// testMode selects what a re-executed test binary does (see TestMain).
const testMode = "MCPGW_UPSTREAM_TEST_MODE"

func TestMain(m *testing.M) {
	switch os.Getenv(testMode) {
	case "legacy":
		runLegacyServer()
		return
	case "poolhelper":
		runPoolHelper()
		return
	}
	// Children (servers, the reaper) are this binary; under -race each would
	// otherwise sleep a second at exit.
	os.Setenv("GORACE", "atexit_sleep_ms=0")
	testmain.Run(m) // serves when fakeupstream.EnvServe is set
}

// runLegacyServer is a hand-written stdio MCP server of the kind built on
// older SDKs: it knows initialize, ping, tools/list and tools/call, and
// exits on any other method (such as server/discover). Its one tool,
// "version", returns the protocol version the client asked for. With
// MCPGW_LEGACY_SILENT set it ignores unknown methods instead of exiting.
func runLegacyServer() {
	if path := os.Getenv(fakeupstream.EnvPIDFile); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
		}
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	reply := func(id json.RawMessage, result any) {
		_ = out.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	}
	var version string
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			fmt.Fprintln(os.Stderr, "legacy: bad message:", err)
			os.Exit(5)
		}
		switch msg.Method {
		case "initialize":
			version = msg.Params.ProtocolVersion
			reply(msg.ID, map[string]any{
				"protocolVersion": version,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "legacy", "version": "0.1"},
			})
		case "notifications/initialized", "notifications/cancelled":
		case "ping":
			reply(msg.ID, map[string]any{})
		case "tools/list":
			reply(msg.ID, map[string]any{"tools": []any{
				map[string]any{"name": "version", "inputSchema": map[string]any{"type": "object"}},
			}})
		case "tools/call":
			reply(msg.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": version}}})
		default:
			fmt.Fprintf(os.Stderr, "legacy: unknown method %q\n", msg.Method)
			if os.Getenv("MCPGW_LEGACY_SILENT") != "" {
				continue // never answer
			}
			os.Exit(4)
		}
	}
}

// testServer returns a stdio server running this test binary as the test
// server, appending its PIDs to a fresh pid file (returned).
func testServer(t testing.TB, name string, env map[string]string) (*registry.Server, string) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pids")
	e := map[string]string{fakeupstream.EnvPIDFile: pidFile}
	for k, v := range env {
		e[k] = v
	}
	srv := fakeupstream.Server(name, e)
	srv.IdleTimeout = 0
	return srv, pidFile
}

func newPool(t testing.TB, opts *Options) *Pool {
	t.Helper()
	p := New(opts)
	t.Cleanup(func() { p.Close() })
	return p
}

func pids(t testing.TB, path string) []int {
	t.Helper()
	ps, err := fakeupstream.ReadPIDs(path)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// textOf returns the text of a result's only text content.
func textOf(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) != 1 {
		t.Fatalf("result %+v: want one content item", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// resultText returns the text of a result's first content item ("" if none).
func resultText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func call(t testing.TB, u *Upstream, tool string, args any) string {
	t.Helper()
	res, err := u.Call(context.Background(), tool, args, nil)
	if err != nil {
		t.Fatalf("Call(%s): %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("Call(%s): error result %q", tool, textOf(t, res))
	}
	return textOf(t, res)
}

func (u *Upstream) currentSession() *session {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sess
}

// waitGone waits until none of pids is alive, failing after a generous
// deadline (a liveness bound, not a speed assertion).
func waitGone(t testing.TB, pids ...int) {
	t.Helper()
	if left := proctest.WaitGone(20*time.Second, pids...); len(left) > 0 {
		t.Fatalf("processes still alive: %v", left)
	}
}

// stateRecorder collects OnState and OnUpdate deliveries.
type stateRecorder struct {
	mu      sync.Mutex
	states  []Status
	updates []*Snapshot
	changed chan struct{} // signalled on every delivery
}

func newRecorder() *stateRecorder { return &stateRecorder{changed: make(chan struct{}, 1000)} }

func (r *stateRecorder) options(o *Options) *Options {
	if o == nil {
		o = &Options{}
	}
	o.OnState = func(_ *registry.Server, st Status) {
		r.mu.Lock()
		r.states = append(r.states, st)
		r.mu.Unlock()
		r.changed <- struct{}{}
	}
	o.OnUpdate = func(_ *registry.Server, snap *Snapshot) {
		r.mu.Lock()
		r.updates = append(r.updates, snap)
		r.mu.Unlock()
		r.changed <- struct{}{}
	}
	return o
}

// waitFor waits until cond holds over the recorded deliveries.
func (r *stateRecorder) waitFor(t testing.TB, what string, cond func(states []Status, updates []*Snapshot) bool) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		states, updates := slices.Clone(r.states), slices.Clone(r.updates)
		r.mu.Unlock()
		ok := cond(states, updates)
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (r *stateRecorder) stateNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.states {
		out = append(out, string(s.State))
	}
	return out
}

func atoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var _ = errors.New
