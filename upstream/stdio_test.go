//go:build unix

package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/proctest"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

func TestCallStdio(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, _ := testServer(t, "test", map[string]string{"MCPGW_TEST_VALUE": "from-config"})
	srv.Cwd = dir
	p := newPool(t, nil)
	u := p.Upstream(srv)

	if got := call(t, u, "echo", map[string]any{"message": "hello"}); got != "hello" {
		t.Errorf("echo = %q, want hello", got)
	}
	if got := call(t, u, "add", map[string]any{"a": 2, "b": 3}); got != "5" {
		t.Errorf("add = %q, want 5", got)
	}
	if got := call(t, u, "env", map[string]any{"name": "MCPGW_TEST_VALUE"}); got != "from-config" {
		t.Errorf("env = %q, want from-config", got)
	}
	if got := call(t, u, "env", map[string]any{"name": "HOME"}); got != os.Getenv("HOME") {
		t.Errorf("env HOME = %q, want the daemon's %q", got, os.Getenv("HOME"))
	}
	if got := call(t, u, "cwd", nil); got != dir {
		t.Errorf("cwd = %q, want %q", got, dir)
	}
	res, err := u.Call(context.Background(), "fail", map[string]any{"message": "nope"}, nil)
	if err != nil || !res.IsError || textOf(t, res) != "nope" {
		t.Errorf("fail = %+v, %v; want an IsError result %q", res, err, "nope")
	}
	res, err = u.Call(context.Background(), "image", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, ok := res.Content[0].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, fakeupstream.TinyPNG) {
		t.Errorf("image = %#v, want the test PNG", res.Content[0])
	}
	rr, err := u.ReadResource(context.Background(), "test://hello", nil)
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "hello, world" {
		t.Errorf("ReadResource = %+v, %v; want hello, world", rr, err)
	}

	pid := atoi(t, call(t, u, "pid", nil))
	st := u.Status()
	if st.PID != pid || st.State != StateConnected || st.Connects != 1 || st.Calls != 9 || st.Errors != 0 {
		t.Errorf("status = %+v, want connected, PID %d, 1 connect, 9 calls, 0 errors", st, pid)
	}
	if st.Tools != len(fakeupstream.ToolNames) {
		t.Errorf("status tools = %d, want %d", st.Tools, len(fakeupstream.ToolNames))
	}

	// An unknown tool is an error from the server, not a lost connection.
	if _, err := u.Call(context.Background(), "no-such-tool", nil, nil); err == nil {
		t.Error("calling an unknown tool: no error")
	}
	if st := u.Status(); st.State != StateConnected || st.Errors != 1 || st.PID != pid {
		t.Errorf("after unknown tool: %+v, want still connected to %d with 1 error", st, pid)
	}
}

func TestSingleFlightConnect(t *testing.T) {
	t.Parallel()
	srv, pidFile := testServer(t, "test", nil)
	p := newPool(t, nil)
	u := p.Upstream(srv)

	const n = 10
	var wg sync.WaitGroup
	got := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			res, err := u.Call(context.Background(), "pid", nil, nil)
			errs[i] = err
			if err == nil {
				got[i] = textOf(t, res)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if ps := pids(t, pidFile); len(ps) != 1 {
		t.Fatalf("processes started = %v, want exactly 1", ps)
	}
	for i := range got {
		if got[i] != got[0] {
			t.Errorf("call %d answered by PID %s, call 0 by %s", i, got[i], got[0])
		}
	}
	if st := u.Status(); st.Connects != 1 || st.Calls != n {
		t.Errorf("status = %+v, want 1 connect and %d calls", st, n)
	}
}

func TestSameIdentitySharesUpstream(t *testing.T) {
	t.Parallel()
	srv, pidFile := testServer(t, "first", nil)
	p := newPool(t, nil)
	u1 := p.Upstream(srv)
	call(t, u1, "echo", map[string]any{"message": "x"})

	renamed := *srv
	renamed.Name = "second"
	u2 := p.Upstream(&renamed)
	if u1 != u2 {
		t.Fatal("same Hash, different name: got two upstreams")
	}
	call(t, u2, "echo", map[string]any{"message": "x"})
	if ps := pids(t, pidFile); len(ps) != 1 {
		t.Errorf("processes started = %v, want 1", ps)
	}
	if st := u1.Status(); st.Name != "first" || !slices.Equal(st.Aliases, []string{"second"}) {
		t.Errorf("name %q, aliases %q; want first, [second] (a lookup never renames)", st.Name, st.Aliases)
	}
	other, _ := testServer(t, "other", nil)
	if p.Upstream(other) == u1 {
		t.Error("different Hash: got the same upstream")
	}
}

func TestListingPaginatesAndPublishes(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	p := newPool(t, rec.options(nil))
	srv, _ := testServer(t, "paged", map[string]string{
		fakeupstream.EnvPageSize:     "2",
		fakeupstream.EnvInstructions: "use echo",
	})
	u := p.Upstream(srv)
	if u.Snapshot() != nil {
		t.Fatal("snapshot before connecting: want nil")
	}
	snap, err := u.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, tool := range snap.Tools {
		tools = append(tools, tool.Name)
	}
	if !slices.Equal(sorted(tools), sorted(fakeupstream.ToolNames)) {
		t.Errorf("tools = %v, want %v (all pages)", tools, fakeupstream.ToolNames)
	}
	var uris []string
	for _, r := range snap.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Equal(sorted(uris), sorted(fakeupstream.ResourceURIs)) {
		t.Errorf("resources = %v, want %v", uris, fakeupstream.ResourceURIs)
	}
	if len(snap.Prompts) != 1 || snap.Prompts[0].Name != "greet" {
		t.Errorf("prompts = %v, want [greet]", snap.Prompts)
	}
	if snap.Instructions != "use echo" || snap.ServerInfo == nil || snap.ServerInfo.Name != "mcpgw-testserver" || snap.ProtocolVersion == "" {
		t.Errorf("snapshot = instructions %q, info %+v, protocol %q", snap.Instructions, snap.ServerInfo, snap.ProtocolVersion)
	}
	if u.Snapshot() != snap {
		t.Error("Snapshot() is not the snapshot Connect returned")
	}
	rec.waitFor(t, "the first OnUpdate", func(_ []Status, ups []*Snapshot) bool { return len(ups) == 1 })

	// A tool added at run time makes the server send list_changed: the
	// pool re-lists and publishes.
	call(t, u, "add_tool", map[string]any{"name": "late"})
	rec.waitFor(t, "an OnUpdate with the new tool", func(_ []Status, ups []*Snapshot) bool {
		last := ups[len(ups)-1]
		return slices.ContainsFunc(last.Tools, func(tool *mcp.Tool) bool { return tool.Name == "late" })
	})
	if got := call(t, u, "late", map[string]any{"message": "hi"}); got != "hi" {
		t.Errorf("late = %q", got)
	}
	if n := u.Status().Tools; n != len(fakeupstream.ToolNames)+1 {
		t.Errorf("status tools = %d, want %d", n, len(fakeupstream.ToolNames)+1)
	}
	// States seen: connecting, connected.
	if got := rec.stateNames(); !slices.Equal(got, []string{"connecting", "connected"}) {
		t.Errorf("states = %v, want [connecting connected]", got)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestCrashFailsOnlyItsCalls(t *testing.T) {
	t.Parallel()
	p := newPool(t, nil)
	srv, pidFile := testServer(t, "crashy", nil)
	other, _ := testServer(t, "steady", nil)
	u, v := p.Upstream(srv), p.Upstream(other)
	otherPID := call(t, v, "pid", nil)
	firstPID := atoi(t, call(t, u, "pid", nil))
	call(t, u, "stderr", map[string]any{"line": "marker: about to crash"})

	// A call in flight when the process dies fails too.
	inflight := make(chan error, 1)
	go func() {
		_, err := u.Call(context.Background(), "sleep", map[string]any{"ms": 60000}, nil)
		inflight <- err
	}()
	waitInFlight(t, u, 1)

	_, err := u.Call(context.Background(), "crash", nil, nil)
	var exit *ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("crash: err = %v, want an *ExitError", err)
	}
	if exit.PID != firstPID || exit.Status != "exit status 3" {
		t.Errorf("exit = PID %d %q, want PID %d, exit status 3", exit.PID, exit.Status, firstPID)
	}
	for _, want := range []string{"marker: about to crash", "testserver: crashing on request"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("crash error %q lacks stderr line %q", err, want)
		}
	}
	if lines := u.Stderr(2); !slices.Equal(lines, []string{"marker: about to crash", "testserver: crashing on request"}) {
		t.Errorf("Stderr(2) = %q", lines)
	}
	if err := <-inflight; err == nil {
		t.Error("in-flight call on the crashed upstream: no error")
	} else if !errors.As(err, &exit) {
		t.Errorf("in-flight call: %v, want an *ExitError", err)
	}

	// The other upstream never noticed.
	if got := call(t, v, "pid", nil); got != otherPID {
		t.Errorf("other upstream PID %s, was %s", got, otherPID)
	}
	// The next call reconnects.
	secondPID := atoi(t, call(t, u, "pid", nil))
	if secondPID == firstPID {
		t.Error("reconnected to the same PID")
	}
	if ps := pids(t, pidFile); !slices.Equal(ps, []int{firstPID, secondPID}) {
		t.Errorf("pid file = %v, want [%d %d]", ps, firstPID, secondPID)
	}
	if st := u.Status(); st.Connects != 2 || st.State != StateConnected || st.PID != secondPID {
		t.Errorf("status = %+v, want 2 connects, connected to %d", st, secondPID)
	}
	waitGone(t, firstPID)
}

// waitInFlight waits until u has n calls in flight.
func waitInFlight(t testing.TB, u *Upstream, n int) {
	t.Helper()
	for u.Status().InFlight < n {
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLegacyServerGetsPinnedVersion(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pids")
	env := map[string]string{testMode: "legacy", fakeupstream.EnvPIDFile: pidFile}
	srv := &registry.Server{Name: "legacy", Command: exe, Env: env, Hash: fakeupstream.Hash(exe, nil, env)}
	p := newPool(t, nil)
	u := p.Upstream(srv)

	if got := call(t, u, "version", nil); got != legacyProtocolVersion {
		t.Errorf("negotiated %q, want %q", got, legacyProtocolVersion)
	}
	ps := pids(t, pidFile)
	if len(ps) != 2 {
		t.Fatalf("processes = %v, want 2: one that died on server/discover, one pinned", ps)
	}
	waitGone(t, ps[0])

	// The pin is remembered: a reconnect starts one process, straight away pinned.
	s := u.Status()
	u.dropSession(u.currentSession(), "test")
	if got := call(t, u, "version", nil); got != legacyProtocolVersion {
		t.Errorf("after reconnect: negotiated %q", got)
	}
	if ps := pids(t, pidFile); len(ps) != 3 {
		t.Errorf("processes after reconnect = %v, want 3", ps)
	}
	if st := u.Status(); st.Connects != s.Connects+1 {
		t.Errorf("connects = %d, want %d", st.Connects, s.Connects+1)
	}
}

func TestSilentLegacyServerPinnedAfterTimeout(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{testMode: "legacy", "MCPGW_LEGACY_SILENT": "1"}
	srv := &registry.Server{Name: "silent", Command: exe, Env: env, Hash: fakeupstream.Hash(exe, nil, env),
		// The probe is never answered, so the first connect always
		// times out; the timeout only has to be long enough for the
		// server to start and say so on stderr, and for the second,
		// pinned connect, on a busy machine.
		StartupTimeout: 3 * time.Second}
	p := newPool(t, nil)
	u := p.Upstream(srv)
	_, err = u.Call(context.Background(), "version", nil, nil)
	var te *TimeoutError
	if !errors.As(err, &te) || te.Op != "connect" {
		t.Fatalf("first call: %v, want a connect timeout (the probe is never answered)", err)
	}
	if !strings.Contains(err.Error(), `legacy: unknown method "server/discover"`) {
		t.Errorf("timeout error lacks the stderr tail: %v", err)
	}
	if _, err := u.Connect(context.Background()); err != nil {
		t.Fatalf("second connect (pinned): %v", err)
	}
	if got := call(t, u, "version", nil); got != legacyProtocolVersion {
		t.Errorf("negotiated %q, want %q", got, legacyProtocolVersion)
	}
}

// A server that exits at start, before it reads its first request, is
// started once per connect (not again pinned: no probe killed it), and
// its state says what it wrote on stderr first.
func TestFailedStartStartsOnce(t *testing.T) {
	t.Parallel()
	const why = "boom: GITHUB_TOKEN is not set"
	srv, pidFile := testServer(t, "gh", map[string]string{fakeupstream.EnvFailStart: why})
	p := newPool(t, nil)
	u := p.Upstream(srv)
	_, err := u.Connect(context.Background())
	if err == nil || !strings.Contains(err.Error(), why) {
		t.Fatalf("connect: %v, want the stderr line", err)
	}
	if ps := pids(t, pidFile); len(ps) != 1 {
		t.Errorf("processes started by one failed connect: %v, want 1", ps)
	}
	first, rest, _ := strings.Cut(u.Status().LastError, "\n")
	if first != why+" (exit status 1)" || !strings.Contains(rest, "exited (exit status 1)") {
		t.Errorf("LastError = %q\n%s, want %q first, then the error", first, rest, why+" (exit status 1)")
	}
}

func TestCloseEndsProcessGroup(t *testing.T) {
	t.Parallel()
	p := New(nil)
	srv, _ := testServer(t, "spawner", nil)
	u := p.Upstream(srv)
	server := atoi(t, call(t, u, "pid", nil))
	grandchild := atoi(t, call(t, u, "spawn", nil))
	if !proctest.Alive(server) || !proctest.Alive(grandchild) {
		t.Fatalf("server %d alive %v, grandchild %d alive %v", server, proctest.Alive(server), grandchild, proctest.Alive(grandchild))
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if proctest.Alive(server) {
		t.Errorf("server %d alive after Close", server)
	}
	waitGone(t, grandchild)
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := u.Call(context.Background(), "echo", map[string]any{"message": "x"}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
	if st := u.Status(); st.State != StateClosed {
		t.Errorf("state after Close = %s", st.State)
	}
}

func TestConnectErrorCarriesStderrAndBacksOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	count := filepath.Join(dir, "starts")
	srv := &registry.Server{
		Name:    "broken",
		Command: "/bin/sh",
		Args:    []string{"-c", fmt.Sprintf("echo start >> %s; echo 'fatal: config missing' >&2; exit 2", count)},
		Hash:    "broken",
	}
	p := newPool(t, nil)
	u := p.Upstream(srv)
	_, err := u.Call(context.Background(), "echo", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "fatal: config missing") || !strings.Contains(err.Error(), "exit status 2") {
		t.Fatalf("err = %v, want exit status 2 and the stderr line", err)
	}
	st := u.Status()
	if st.State != StateFailed || st.NextRetry.IsZero() || !strings.Contains(st.LastError, "fatal: config missing") {
		t.Errorf("status = %+v, want failed with NextRetry and the stderr line", st)
	}
	// Backing off: fail fast, start nothing.
	_, err = u.Call(context.Background(), "echo", nil, nil)
	var be *BackoffError
	if !errors.As(err, &be) || !errors.Is(err, ErrBackingOff) || !be.NextRetry.Equal(st.NextRetry) {
		t.Fatalf("second call: %v, want a BackoffError until %v", err, st.NextRetry)
	}
	if !strings.Contains(err.Error(), "next try at") {
		t.Errorf("backoff error %q does not say when the next try is", err)
	}
	b, _ := os.ReadFile(count)
	// The connect started the process once (it exited before reading the
	// handshake, so no retry pinned); the backed-off call starts nothing.
	if n := strings.Count(string(b), "start"); n != 1 {
		t.Errorf("starts = %d, want 1", n)
	}
	// Connect bypasses the backoff.
	if _, err := u.Connect(context.Background()); err == nil {
		t.Error("Connect: no error")
	}
	b, _ = os.ReadFile(count)
	if n := strings.Count(string(b), "start"); n != 2 {
		t.Errorf("starts after Connect = %d, want 2", n)
	}
}

func TestUntrustedNeverStarts(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "started")
	srv := &registry.Server{
		Name: "project", Command: "/bin/sh", Args: []string{"-c", "touch " + marker},
		Untrusted: true, Source: "/repo/.mcp.json", Hash: "untrusted", Lifecycle: registry.LifecycleEager,
	}
	p := newPool(t, nil)
	p.Reconcile([]*registry.Server{srv})
	u := p.Upstream(srv)
	if _, err := u.Call(context.Background(), "echo", nil, nil); !errors.Is(err, ErrUntrusted) {
		t.Errorf("call: %v, want ErrUntrusted", err)
	}
	if _, err := u.Connect(context.Background()); !errors.Is(err, ErrUntrusted) {
		t.Errorf("Connect: %v, want ErrUntrusted", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the untrusted command ran")
	}
}

func TestKeepAliveRestartsKilledProcess(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	p := newPool(t, rec.options(nil))
	srv, pidFile := testServer(t, "ka", nil)
	srv.Lifecycle = registry.LifecycleKeepAlive
	p.Reconcile([]*registry.Server{srv})
	connected := func(n int) func([]Status, []*Snapshot) bool {
		return func(states []Status, _ []*Snapshot) bool {
			if len(states) == 0 {
				return false
			}
			last := states[len(states)-1]
			return last.State == StateConnected && last.Connects == n
		}
	}
	rec.waitFor(t, "the keep-alive server to start", connected(1))
	u := p.Upstream(srv)
	first := u.Status().PID
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "a restart without any call", connected(2))
	second := u.Status().PID
	if second == first || second == 0 {
		t.Errorf("PID after restart = %d (was %d)", second, first)
	}
	if ps := pids(t, pidFile); !slices.Equal(ps, []int{first, second}) {
		t.Errorf("pid file = %v, want [%d %d]", ps, first, second)
	}
	if st := u.Status(); st.Calls != 0 {
		t.Errorf("calls = %d, want 0", st.Calls)
	}
	states := rec.stateNames()
	if want := []string{"connecting", "connected", "failed", "connecting", "connected"}; !slices.Equal(states, want) {
		t.Errorf("states = %v, want %v", states, want)
	}
	waitGone(t, first)
}

// A server without cwd runs in the user's home directory, not in whatever
// directory the daemon was started from.
func TestDefaultWorkingDirectoryIsHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Chdir(t.TempDir()) // the daemon's accidental working directory
	srv, _ := testServer(t, "nocwd", nil)
	srv.Cwd = ""
	u := newPool(t, nil).Upstream(srv)
	if got := call(t, u, "cwd", nil); got != home {
		t.Errorf("cwd = %q, want the home directory %q", got, home)
	}
}

// A server that stops answering altogether (here: wedged by its freeze
// tool, so that not even a ping gets an answer) is recycled after the call times out, so the next call
// works on a new process instead of timing out too.
func TestWedgedUpstreamIsRecycled(t *testing.T) {
	t.Parallel()
	srv, pidFile := testServer(t, "wedged", nil)
	srv.RequestTimeout = 500 * time.Millisecond
	u := newPool(t, nil).Upstream(srv)
	_, err := u.Call(context.Background(), "freeze", nil, nil)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("call on a frozen server: %v, want a TimeoutError", err)
	}
	if got := call(t, u, "echo", map[string]any{"message": "again"}); got != "again" {
		t.Errorf("the next call = %q", got)
	}
	if ps := pids(t, pidFile); len(ps) != 2 {
		t.Errorf("processes = %v, want the frozen one and a new one", ps)
	}
}

// The test server's Protocols limit what it negotiates, over stdio as
// through EnvProtocols: the proxy bench's --protocol relies on it.
func TestTestServerProtocols(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ env, want string }{{"", "2026-07-28"}, {"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"}} {
		t.Run("protocols="+tc.env, func(t *testing.T) {
			srv, _ := testServer(t, "p", map[string]string{fakeupstream.EnvProtocols: tc.env})
			u := newPool(t, nil).Upstream(srv)
			call(t, u, "echo", map[string]any{"message": "x"})
			if snap := u.Snapshot(); snap == nil || snap.ProtocolVersion != tc.want {
				t.Fatalf("negotiated %+v, want %s", snap, tc.want)
			}
		})
	}
}
