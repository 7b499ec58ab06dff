//go:build unix

package main

// End-to-end tests of config reload: a real daemon, real config files in a
// temporary directory edited the ways users and tools edit them, and
// mcpgw's test server as upstreams, whose pid tool says which process
// answered.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// gwClient is one MCP session with the daemon, through the Go SDK.
type gwClient struct {
	t  testing.TB
	cs *mcp.ClientSession
}

func connectGateway(t testing.TB, d *e2e.Daemon) *gwClient {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "reload-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: d.MCPURL()}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to %s: %v", d.MCPURL(), err)
	}
	t.Cleanup(func() { cs.Close() })
	return &gwClient{t: t, cs: cs}
}

// mcp calls the daemon's mcp tool and returns the text of the answer.
func (c *gwClient) mcp(args map[string]any) (text string, isError bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2e.WaitLimit)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp", Arguments: args})
	if err != nil {
		c.t.Fatalf("mcp(%v): %v", args, err)
	}
	var texts []string
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n"), res.IsError
}

// pid calls SERVER_pid and returns the upstream's process ID.
func (c *gwClient) pid(server string) int {
	c.t.Helper()
	text, isErr := c.mcp(map[string]any{"tool": server + "_pid"})
	pid, err := strconv.Atoi(strings.TrimSpace(text))
	if isErr || err != nil {
		c.t.Fatalf("%s_pid: %q (isError %v)", server, text, isErr)
	}
	return pid
}

// testServer is a config entry for mcpgw's test server that records its
// PIDs in dir/NAME.pids; extra env entries change its identity.
func pidServerEntry(bin, dir, name string, extra ...string) map[string]any {
	env := map[string]string{fakeupstream.EnvPIDFile: filepath.Join(dir, name+".pids")}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "env": env}
}

func mcpJSON(t testing.TB, servers map[string]any, more map[string]any) []byte {
	t.Helper()
	cfg := map[string]any{"mcpServers": servers}
	for k, v := range more {
		cfg[k] = v
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// saveFileAtomic saves data as editors do: a temporary file in the same
// directory, renamed over path.
func saveFileAtomic(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// saveFileInPlace rewrites path in place (truncate, then write), as some tools do.
func saveFileInPlace(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func reportServerNames(r *api.Report) []string {
	var names []string
	for _, s := range r.Servers {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return names
}

func pidsStarted(t testing.TB, dir, name string) []int {
	t.Helper()
	pids, err := fakeupstream.ReadPIDs(filepath.Join(dir, name+".pids"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return pids
}

func pidGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestReloadEndToEnd edits a running daemon's config files and checks that
// exactly the change is applied: an added server is searchable and
// callable, an edited one restarts while the others keep their processes,
// a half-saved file keeps the last good config (and says why), fixing it
// recovers, an editor's atomic save is seen, a removed server's process
// ends, and a server added to an imported tool's file appears.
func TestReloadEndToEnd(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	srv := func(name string, extra ...string) map[string]any { return pidServerEntry(bin, dir, name, extra...) }
	imports := map[string]any{"imports": []string{"cursor"}}
	saveFileInPlace(t, path, mcpJSON(t, map[string]any{"a": srv("a"), "b": srv("b")}, imports))
	// HOME is dir, so the cursor import reads dir/.cursor/mcp.json: its
	// directory does not exist yet.
	d := e2e.StartDaemon(t, dir, path)
	c := connectGateway(t, d)
	pa, pb := c.pid("a"), c.pid("b")

	// Add a server: it becomes searchable (the daemon lists its tools in
	// the background) and callable, through the TypeScript SDK client too.
	start := time.Now()
	saveFileInPlace(t, path, mcpJSON(t, map[string]any{"a": srv("a"), "b": srv("b"), "c": srv("c")}, imports))
	if info := d.WaitReload(t, start); !info.OK {
		t.Fatalf("reload after adding c failed: %s", info.Error)
	}
	e2e.PollUntil(t, "c's tools in search", func() bool {
		text, _ := c.mcp(map[string]any{"search": "pid", "server": "c"})
		return strings.Contains(text, "c_pid")
	})
	if node := tsClientAvailable(); node != "" {
		res := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{
			e2e.MCPCall(map[string]any{"search": "process id"}),
			e2e.MCPCall(map[string]any{"tool": "c_pid"}),
		})
		if !strings.Contains(res[0].Text(), "c_pid") {
			t.Errorf("TypeScript client: search lacks c_pid:\n%s", res[0].Text())
		}
		if _, err := strconv.Atoi(res[1].Text()); err != nil || res[1].IsError() {
			t.Errorf("TypeScript client: c_pid = %q", res[1].Text())
		}
	}
	pc := c.pid("c")
	if got := []int{c.pid("a"), c.pid("b")}; !slices.Equal(got, []int{pa, pb}) {
		t.Errorf("after adding c: a, b answered from %v, want %v", got, []int{pa, pb})
	}

	// Edit b: only b restarts.
	start = time.Now()
	saveFileInPlace(t, path, mcpJSON(t, map[string]any{"a": srv("a"), "b": srv("b", "LEVEL", "2"), "c": srv("c")}, imports))
	if info := d.WaitReload(t, start); !info.OK {
		t.Fatalf("reload after editing b failed: %s", info.Error)
	}
	pb2 := c.pid("b")
	if pb2 == pb {
		t.Errorf("b still answered from %d after its definition changed", pb)
	}
	if got := []int{c.pid("a"), c.pid("c")}; !slices.Equal(got, []int{pa, pc}) {
		t.Errorf("after editing b: a, c answered from %v, want %v (unchanged servers restarted)", got, []int{pa, pc})
	}
	e2e.PollUntil(t, "the old b process to end", func() bool { return pidGone(pb) })
	for name, want := range map[string]int{"a": 1, "b": 2, "c": 1} {
		if n := len(pidsStarted(t, dir, name)); n != want {
			t.Errorf("%s started %d times, want %d", name, n, want)
		}
	}

	// A half-saved file: the last good config keeps running, and the
	// error shows in mcp({}), in the status and in the metric.
	good := mcpJSON(t, map[string]any{"a": srv("a"), "b": srv("b", "LEVEL", "2"), "c": srv("c")}, imports)
	start = time.Now()
	saveFileInPlace(t, path, good[:len(good)/2])
	info := d.WaitReload(t, start)
	if info.OK || !strings.HasPrefix(info.Error, path+":") {
		t.Fatalf("reload of a half-saved file: ok %v, error %q; want a failure naming %s", info.OK, info.Error, path)
	}
	status, _ := c.mcp(map[string]any{})
	if !strings.Contains(status, "Config reload failed") || !strings.Contains(status, info.Error) {
		t.Errorf("mcp({}) does not show the reload error %q:\n%s", info.Error, status)
	}
	if v := d.MetricValue(t, "mcpgw_config_last_reload_successful"); v != "0" {
		t.Errorf("mcpgw_config_last_reload_successful = %q after a failed reload, want 0", v)
	}
	if got := reportServerNames(d.Report(t)); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("servers after a failed reload: %v, want a b c", got)
	}
	if got := []int{c.pid("a"), c.pid("b"), c.pid("c")}; !slices.Equal(got, []int{pa, pb2, pc}) {
		t.Errorf("after a failed reload: pids %v, want %v", got, []int{pa, pb2, pc})
	}

	// Fix it with an editor's atomic save, adding d: recovered.
	start = time.Now()
	saveFileAtomic(t, path, mcpJSON(t, map[string]any{"a": srv("a"), "b": srv("b", "LEVEL", "2"), "c": srv("c"), "d": srv("d")}, imports))
	if info := d.WaitReload(t, start); !info.OK {
		t.Fatalf("reload after the fix failed: %s", info.Error)
	}
	if v := d.MetricValue(t, "mcpgw_config_last_reload_successful"); v != "1" {
		t.Errorf("mcpgw_config_last_reload_successful = %q after recovering, want 1", v)
	}
	if status, _ := c.mcp(map[string]any{}); strings.Contains(status, "Config reload failed") {
		t.Errorf("mcp({}) still reports the failure:\n%s", status)
	}
	pd := c.pid("d")
	if got := []int{c.pid("a"), c.pid("b"), c.pid("c")}; !slices.Equal(got, []int{pa, pb2, pc}) {
		t.Errorf("after the fix: pids %v, want %v", got, []int{pa, pb2, pc})
	}

	// Remove c with an atomic save: its process ends, its tools go.
	start = time.Now()
	saveFileAtomic(t, path, mcpJSON(t, map[string]any{"a": srv("a"), "b": srv("b", "LEVEL", "2"), "d": srv("d")}, imports))
	if info := d.WaitReload(t, start); !info.OK {
		t.Fatalf("reload after removing c failed: %s", info.Error)
	}
	e2e.PollUntil(t, "the removed c process to end", func() bool { return pidGone(pc) })
	if text, isErr := c.mcp(map[string]any{"tool": "c_pid"}); !isErr {
		t.Errorf("c_pid after removing c: %q, want an error", text)
	}

	// A server added to an imported file, in a directory created now.
	start = time.Now()
	saveFileInPlace(t, filepath.Join(dir, ".cursor", "mcp.json"), mcpJSON(t, map[string]any{"cur": srv("cur")}, nil))
	if info := d.WaitReload(t, start); !info.OK {
		t.Fatalf("reload after writing ~/.cursor/mcp.json failed: %s", info.Error)
	}
	c.pid("cur")
	for _, s := range d.Report(t).Servers {
		if s.Name == "cur" && s.Source != filepath.Join(dir, ".cursor", "mcp.json") {
			t.Errorf("cur's source is %q", s.Source)
		}
	}
	if got := []int{c.pid("a"), c.pid("b"), c.pid("d")}; !slices.Equal(got, []int{pa, pb2, pd}) {
		t.Errorf("after the import changed: pids %v, want %v", got, []int{pa, pb2, pd})
	}

	// A broken edit undone by restoring the exact previous content: the
	// failure is over, though nothing changed.
	current := mcpJSON(t, map[string]any{"a": srv("a"), "b": srv("b", "LEVEL", "2"), "d": srv("d")}, imports)
	start = time.Now()
	saveFileInPlace(t, path, append(slices.Clone(current), ",,"...))
	if info := d.WaitReload(t, start); info.OK {
		t.Fatal("a file with trailing garbage loaded")
	}
	start = time.Now()
	saveFileAtomic(t, path, current)
	if info := d.WaitReload(t, start); !info.OK {
		t.Errorf("after restoring the running config's content, the status still says: %s", info.Error)
	}

	// A new import whose file is broken: the reload fails, and fixing
	// that file (not watched before) is seen.
	codexFile := filepath.Join(dir, ".codex", "config.toml")
	saveFileInPlace(t, codexFile, []byte("[mcp_servers.cx]\ncommand = \n"))
	start = time.Now()
	saveFileAtomic(t, path, mcpJSON(t, map[string]any{"a": srv("a"), "b": srv("b", "LEVEL", "2"), "d": srv("d")},
		map[string]any{"imports": []string{"cursor", "codex"}}))
	if info := d.WaitReload(t, start); info.OK || !strings.HasPrefix(info.Error, codexFile+":2:") {
		t.Fatalf("reload with a broken codex config: ok %v, error %q", info.OK, info.Error)
	}
	start = time.Now()
	saveFileInPlace(t, codexFile, []byte(fmt.Sprintf("[mcp_servers.cx]\ncommand = %q\nargs = [\"testserver\"]\nenv = { %s = %q }\n",
		e2e.TestServerBin, fakeupstream.EnvPIDFile, filepath.Join(dir, "cx.pids"))))
	if info := d.WaitReload(t, start); !info.OK {
		t.Fatalf("reload after fixing the codex config: %s", info.Error)
	}
	c.pid("cx")

	for name, want := range map[string]int{"a": 1, "b": 2, "c": 1, "d": 1, "cur": 1, "cx": 1} {
		if n := len(pidsStarted(t, dir, name)); n != want {
			t.Errorf("%s started %d times, want %d", name, n, want)
		}
	}
}

// tsClientAvailable returns node's path when the TypeScript client can run.
func tsClientAvailable() string {
	node, err := exec.LookPath("node")
	if err != nil {
		return ""
	}
	if _, err := os.Stat(e2e.Path("node_modules/@modelcontextprotocol/sdk/package.json")); err != nil {
		return ""
	}
	return node
}

// TestReloadFigures measures, on a real daemon, the time from a config
// write to the new server's tool answering (median of 20), and checks
// across 100 reloads that no unchanged upstream restarted. It prints the
// figures; it asserts counts, never times. Run it with
//
//	MCPGW_RELOAD_FIGURES=1 go test ./cmd/mcpgw -run TestReloadFigures -v
func TestReloadFigures(t *testing.T) {
	t.Parallel()
	if os.Getenv("MCPGW_RELOAD_FIGURES") == "" {
		t.Skip("set MCPGW_RELOAD_FIGURES=1 to measure")
	}
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	srv := func(name string, extra ...string) map[string]any { return pidServerEntry(bin, dir, name, extra...) }
	base := map[string]any{"u1": srv("u1"), "u2": srv("u2"), "u3": srv("u3")}
	saveFileInPlace(t, path, mcpJSON(t, base, nil))
	d := e2e.StartDaemon(t, dir, path, "--no-bootstrap", "--log-level", "warn")
	c := connectGateway(t, d)
	unchanged := map[string]int{}
	for name := range base {
		unchanged[name] = c.pid(name)
	}

	// Write → callable.
	var lat []time.Duration
	for i := range 20 {
		name := fmt.Sprintf("n%d", i)
		servers := map[string]any{name: srv(name)}
		for k, v := range base {
			servers[k] = v
		}
		data := mcpJSON(t, servers, nil)
		t0 := time.Now()
		saveFileAtomic(t, path, data)
		for {
			if _, isErr := c.mcp(map[string]any{"tool": name + "_pid"}); !isErr {
				break
			}
			if time.Since(t0) > e2e.WaitLimit {
				t.Fatalf("%s_pid not callable %v after the write", name, e2e.WaitLimit)
			}
			time.Sleep(time.Millisecond)
		}
		lat = append(lat, time.Since(t0))
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	t.Logf("write → new tool callable, 20 runs: median %v, min %v, p90 %v, max %v (debounce %v)",
		sorted[10].Round(time.Millisecond), sorted[0].Round(time.Millisecond), sorted[17].Round(time.Millisecond),
		sorted[19].Round(time.Millisecond), 200*time.Millisecond)

	// 100 reloads, each changing v only.
	prev := 0
	for i := range 100 {
		servers := map[string]any{"v": srv("v", "VERSION", strconv.Itoa(i))}
		for k, v := range base {
			servers[k] = v
		}
		saveFileAtomic(t, path, mcpJSON(t, servers, nil))
		var pv int
		e2e.PollUntil(t, fmt.Sprintf("reload %d to restart v", i), func() bool {
			text, isErr := c.mcp(map[string]any{"tool": "v_pid"})
			pv, _ = strconv.Atoi(strings.TrimSpace(text))
			return !isErr && pv != 0 && pv != prev
		})
		prev = pv
		for name, want := range unchanged {
			if got := c.pid(name); got != want {
				t.Fatalf("reload %d: %s answered from %d, want %d: an unchanged upstream restarted", i, name, got, want)
			}
		}
	}
	starts := map[string]int{}
	for _, name := range []string{"u1", "u2", "u3", "v"} {
		starts[name] = len(pidsStarted(t, dir, name))
	}
	t.Logf("100 reloads changing v: process starts %v (u1-u3 unchanged: want 1 each; v: want 100)", starts)
	if starts["u1"] != 1 || starts["u2"] != 1 || starts["u3"] != 1 || starts["v"] != 100 {
		t.Errorf("process starts %v, want u1-u3 1 each and v 100", starts)
	}
}

// reportServer returns the named server of a status report, or nil.
func reportServer(r *api.Report, name string) *api.ServerReport {
	for i := range r.Servers {
		if r.Servers[i].Name == name {
			return &r.Servers[i]
		}
	}
	return nil
}

// TestReloadDiffSemantics checks the rest of what a reload promises, on a
// daemon that starts nothing by itself (--no-bootstrap): a removed server
// finishes its in-flight call before its process ends, and an added one
// starts only when first used.
func TestReloadDiffSemantics(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	srv := func(name string, extra ...string) map[string]any { return pidServerEntry(bin, dir, name, extra...) }
	saveFileInPlace(t, path, mcpJSON(t, map[string]any{"keep": srv("keep"), "gone": srv("gone")}, nil))
	d := e2e.StartDaemon(t, dir, path, "--no-bootstrap")
	c := connectGateway(t, d)
	pk, pg := c.pid("keep"), c.pid("gone")

	// A slow call on gone, in flight when gone is removed.
	type answer struct {
		text  string
		isErr bool
	}
	slow := make(chan answer, 1)
	go func() { // not c.mcp: it may call t.Fatal, which only the test goroutine may
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp",
			Arguments: map[string]any{"tool": "gone_sleep", "args": map[string]any{"ms": 5000}}})
		if err != nil {
			slow <- answer{err.Error(), true}
			return
		}
		var texts []string
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		slow <- answer{strings.Join(texts, "\n"), res.IsError}
	}()
	e2e.PollUntil(t, "the slow call to reach gone", func() bool {
		s := reportServer(d.Report(t), "gone")
		return s != nil && s.Calls == 2
	})
	start := time.Now()
	saveFileAtomic(t, path, mcpJSON(t, map[string]any{"keep": srv("keep"), "lazy": srv("lazy")}, nil))
	if info := d.WaitReload(t, start); !info.OK {
		t.Fatalf("reload failed: %s", info.Error)
	}
	if pidGone(pg) {
		t.Error("gone's process ended with a call in flight")
	}
	if _, err := os.Stat(filepath.Join(dir, "lazy.pids")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lazy started before first use (pid file: %v)", err)
	}
	if s := reportServer(d.Report(t), "lazy"); s == nil || s.State != "not connected" {
		t.Errorf("lazy's status: %+v, want not connected", s)
	}
	a := <-slow
	if a.isErr || !strings.Contains(a.text, "5000") {
		t.Errorf("the in-flight call on the removed server answered %q (isError %v)", a.text, a.isErr)
	}
	e2e.PollUntil(t, "gone's process to end after its call", func() bool { return pidGone(pg) })
	c.pid("lazy")
	if got := c.pid("keep"); got != pk {
		t.Errorf("keep answered from %d, want %d", got, pk)
	}
	for name, want := range map[string]int{"keep": 1, "gone": 1, "lazy": 1} {
		if n := len(pidsStarted(t, dir, name)); n != want {
			t.Errorf("%s started %d times, want %d", name, n, want)
		}
	}
}

// TestReloadNotifiesSessions: a session whose tool list a reload changes
// (mode direct lists every tool) receives notifications/tools/list_changed
// and then lists the new tools.
func TestReloadNotifiesSessions(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	srv := func(name string) map[string]any { return pidServerEntry(bin, dir, name) }
	saveFileInPlace(t, path, mcpJSON(t, map[string]any{"a": srv("a")}, nil))
	d := e2e.StartDaemon(t, dir, path)

	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "reload-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: d.MCPURL() + "?mode=direct"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools := func() []string {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	e2e.PollUntil(t, "a's tools listed", func() bool { return slices.Contains(tools(), "a_pid") })
	for len(changed) > 0 {
		<-changed
	}

	saveFileAtomic(t, path, mcpJSON(t, map[string]any{"a": srv("a"), "b": srv("b")}, nil))
	select {
	case <-changed:
	case <-time.After(e2e.WaitLimit):
		t.Fatal("no notifications/tools/list_changed after adding b")
	}
	e2e.PollUntil(t, "b's tools listed", func() bool { return slices.Contains(tools(), "b_pid") })

	saveFileAtomic(t, path, mcpJSON(t, map[string]any{"b": srv("b")}, nil))
	select {
	case <-changed:
	case <-time.After(e2e.WaitLimit):
		t.Fatal("no notifications/tools/list_changed after removing a")
	}
	e2e.PollUntil(t, "a's tools gone", func() bool { return !slices.Contains(tools(), "a_pid") })
}

// TestReloadRecoveryLogged: a reload that succeeds after a failed one says
// so at info level, through `mcpgw reload` as through the watcher: the
// failure's error is otherwise the last thing the log said.
func TestReloadRecoveryLogged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil)
	good, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	d := e2e.StartDaemon(t, dir, config, "--log-level", "info")
	bin := e2e.BuildMcpgw(t)
	reload := func() ([]byte, error) { return exec.Command(bin, "reload", "--url", d.URL).CombinedOutput() }

	saveFileInPlace(t, config, append(slices.Clone(good), ",,"...))
	if out, err := reload(); err == nil {
		t.Fatalf("mcpgw reload of a broken file succeeded:\n%s", out)
	}
	saveFileAtomic(t, config, good)
	if out, err := reload(); err != nil {
		t.Fatalf("mcpgw reload after restoring the file: %v\n%s", err, out)
	}
	const said = `level=INFO msg="config loads again; the last reload's failure is over"`
	e2e.PollUntil(t, "the recovery's log line", func() bool { return strings.Contains(d.Proc.Output.String(), said) })
	if n := strings.Count(d.Proc.Output.String(), said); n != 1 {
		t.Errorf("the recovery is logged %d times, want once:\n%s", n, d.Proc.Output.String())
	}
}
