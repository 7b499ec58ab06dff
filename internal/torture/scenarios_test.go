//go:build linux

package torture

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/proctest"
)

// TestTortureUpstreams: upstreams that crash mid-call, hang, answer 100 MB,
// flood stderr, write garbage, die during initialize, ignore SIGTERM and
// leave setsid grandchildren. Each fails only its own calls and comes back;
// another session on a steady server is served throughout; memory stays
// bounded; every process ends.
func TestTortureUpstreams(t *testing.T) {
	d := newDaemon(t, func(d *daemon) map[string]any {
		return map[string]any{
			"steady":   d.hostile("steady", "plain", nil),
			"victim":   d.hostile("victim", "plain", map[string]any{"requestTimeoutMs": 1500}),
			"garbage":  d.hostile("garbage", "garbage", nil),
			"initexit": d.hostile("initexit", "initexit", nil),
			"stubborn": d.hostile("stubborn", "stubborn", nil),
			"flooder":  d.hostile("flooder", "plain", nil),
		}
	})
	ctx := context.Background()
	s := d.session(ctx)
	other := d.session(ctx)
	steady := func(step string) {
		t.Helper()
		if got, isErr := call(ctx, other, "steady_echo", map[string]any{"message": step}); isErr || got != step {
			t.Errorf("%s: the other session's call = %q (error %v)", step, got, isErr)
		}
	}
	back := func(step string) {
		t.Helper()
		if got, isErr := call(ctx, s, "victim_echo", map[string]any{"message": "back"}); isErr || got != "back" {
			t.Errorf("%s: the next call to the same server = %q (error %v)", step, got, isErr)
		}
	}
	steady("start")
	back("start")

	got, isErr := call(ctx, s, "victim_crash", nil)
	if !isErr || !strings.Contains(got, "crashing mid-call") {
		t.Errorf("crash: %q (error %v), want an error with the upstream's stderr", got, isErr)
	}
	steady("crash")
	back("crash")

	start := time.Now()
	got, isErr = call(ctx, s, "victim_hang", nil)
	if !isErr || !strings.Contains(got, "1.5s") {
		t.Errorf("hang: %q (error %v), want the request timeout", got, isErr)
	}
	t.Logf("hang: answered after %s (request timeout 1.5s)", time.Since(start).Round(time.Millisecond))
	steady("hang")
	back("hang")

	// The 100 MB answer comes from a server with the default request
	// timeout: the line limit, not the clock, must stop it (on a busy
	// machine, reading 100 MB takes longer than victim's 1.5 s).
	_, peakBefore := d.rss()
	got, isErr = call(ctx, s, "flooder_huge", map[string]any{"mb": 100})
	if !isErr || !strings.Contains(got, "longer than") {
		t.Errorf("100 MB result: %q (error %v), want the line limit", trim(got), isErr)
	}
	steady("huge")
	if got, isErr := call(ctx, s, "flooder_echo", map[string]any{"message": "back"}); isErr || got != "back" {
		t.Errorf("huge: the next call to the same server = %q (error %v)", got, isErr)
	}
	got, isErr = call(ctx, s, "flooder_flood", map[string]any{"mb": 50})
	if isErr || got != "flooded" {
		t.Errorf("50 MB of stderr: %q (error %v)", trim(got), isErr)
	}
	steady("flood")
	rss, peak := d.rss()
	t.Logf("memory: RSS %.0f MB, peak %.0f MB before the 100 MB result, %.0f MB after it and 50 MB of stderr", rss, peakBefore, peak)
	if peak > 256 {
		t.Errorf("peak RSS %.0f MB after a 100 MB result and 50 MB of stderr, want ≤ 256 MB", peak)
	}

	for i := range 3 {
		msg := "through garbage " + strconv.Itoa(i)
		if got, isErr := call(ctx, s, "garbage_echo", map[string]any{"message": msg}); isErr || got != msg {
			t.Errorf("garbage on stdout, call %d: %q (error %v)", i, got, isErr)
		}
	}

	got, isErr = call(ctx, s, "initexit_echo", map[string]any{"message": "x"})
	if !isErr || !strings.Contains(got, "giving up during initialize") {
		t.Errorf("exit during initialize: %q (error %v), want an error with its stderr", got, isErr)
	}
	steady("initexit")

	got, isErr = call(ctx, s, "victim_spawn", nil)
	grandchild, err := strconv.Atoi(got)
	if isErr || err != nil || !proctest.Alive(grandchild) {
		t.Fatalf("spawn: %q (error %v)", got, isErr)
	}
	got, isErr = call(ctx, s, "stubborn_pid", nil)
	stubborn, err := strconv.Atoi(got)
	if isErr || err != nil {
		t.Fatalf("stubborn pid: %q (error %v)", got, isErr)
	}
	time.Sleep(3 * time.Second) // the reaper notes descendants once a second

	// The stubborn server leaves the config: it ignores its stdin's end and
	// SIGTERM, so it gets SIGKILL.
	d.writeConfig(map[string]any{
		"steady":  d.hostile("steady", "plain", nil),
		"victim":  d.hostile("victim", "plain", map[string]any{"requestTimeoutMs": 1500}),
		"garbage": d.hostile("garbage", "garbage", nil),
		"flooder": d.hostile("flooder", "plain", nil),
	})
	reload(t, d, http.StatusOK)
	if len(proctest.WaitGone(30*time.Second, stubborn)) > 0 {
		t.Errorf("a server that ignores SIGTERM outlived its removal by 30 s")
	}
	steady("stubborn removed")
	if !d.alive() {
		t.Fatalf("daemon died:\n%s", d.log)
	}
	d.stop()
	if len(proctest.WaitGone(10*time.Second, grandchild)) > 0 {
		t.Errorf("a setsid grandchild outlived the daemon")
		_ = syscall.Kill(grandchild, syscall.SIGKILL)
	}
}

// TestTortureKilledDaemon: kill -9 of the daemon leaves no upstream and no
// setsid grandchild behind.
func TestTortureKilledDaemon(t *testing.T) {
	d := newDaemon(t, func(d *daemon) map[string]any {
		return map[string]any{"victim": d.hostile("victim", "plain", nil), "stubborn": d.hostile("stubborn", "stubborn", nil)}
	})
	ctx := context.Background()
	s := d.session(ctx)
	var pids []int
	for _, tool := range []string{"victim_spawn", "stubborn_spawn", "victim_pid", "stubborn_pid"} {
		got, isErr := call(ctx, s, tool, nil)
		pid, err := strconv.Atoi(got)
		if isErr || err != nil {
			t.Fatalf("%s: %q", tool, got)
		}
		pids = append(pids, pid)
	}
	time.Sleep(3 * time.Second) // the reaper notes descendants once a second
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-d.done
	for _, pid := range pids {
		if len(proctest.WaitGone(20*time.Second, pid)) > 0 {
			t.Errorf("process %d outlived a kill -9 of the daemon", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestTortureFiles: the config replaced by hostile files — nested 620,000
// deep, a FIFO, /dev/zero, a symlink loop, 65 MB, unreadable — is refused
// at reload with the file and the limit named, in bounded time; the daemon
// keeps serving the last good config, and takes the next good one. A FIFO
// as a project's .mcp.json does not hang a session's initialize.
func TestTortureFiles(t *testing.T) {
	d := newDaemon(t, func(d *daemon) map[string]any {
		return map[string]any{"steady": d.hostile("steady", "plain", nil)}
	})
	ctx := context.Background()
	s := d.session(ctx)
	good, err := os.ReadFile(d.config)
	if err != nil {
		t.Fatal(err)
	}
	hostile := []struct {
		name, want string
		make       func(path string) error
	}{
		{"nested 620,000 deep", "nested more than", func(p string) error {
			return os.WriteFile(p, []byte(strings.Repeat("[", 620000)), 0o600)
		}},
		{"FIFO", "not a regular file", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"/dev/zero", "not a regular file", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"symlink loop", "too many levels of symbolic links", func(p string) error { return os.Symlink(p, p) }},
		{"65 MB", "over the 64 MiB limit", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(65 << 20)
		}},
	}
	if os.Getuid() != 0 { // root reads any file
		hostile = append(hostile, struct {
			name, want string
			make       func(path string) error
		}{"unreadable", "permission denied", func(p string) error { return os.WriteFile(p, good, 0o000) }})
	}
	for _, h := range hostile {
		if err := os.Remove(d.config); err != nil {
			t.Fatal(err)
		}
		if err := h.make(d.config); err != nil {
			t.Fatalf("%s: %v", h.name, err)
		}
		start := time.Now()
		body := reload(t, d, http.StatusUnprocessableEntity)
		if !strings.Contains(body, h.want) || !strings.Contains(body, d.config) {
			t.Errorf("%s: reload said %q, want the file and %q", h.name, body, h.want)
		}
		t.Logf("%s: refused in %s", h.name, time.Since(start).Round(time.Millisecond))
		if got, isErr := call(ctx, s, "steady_echo", map[string]any{"message": h.name}); isErr || got != h.name {
			t.Errorf("%s: a call after the refused reload = %q (error %v)", h.name, got, isErr)
		}
	}
	if err := os.Remove(d.config); err != nil {
		t.Fatal(err)
	}
	d.writeConfig(map[string]any{"steady": d.hostile("steady", "plain", nil), "added": d.hostile("added", "plain", nil)})
	reload(t, d, http.StatusOK)
	if got, isErr := call(ctx, d.session(ctx), "added_echo", map[string]any{"message": "new"}); isErr || got != "new" {
		t.Errorf("the good config after the hostile ones: %q (error %v)", got, isErr)
	}

	// A project whose .mcp.json is a FIFO: the session opens, without the
	// project's servers, instead of hanging in initialize.
	proj := filepath.Join(d.dir, "proj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(proj, ".mcp.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ps := d.sessionWith(ctx2, http.Header{"Mcp-Gateway-Cwd": {proj}})
	if got, isErr := call(ctx2, ps, "steady_echo", map[string]any{"message": "fifo project"}); isErr || got != "fifo project" {
		t.Errorf("a session in a project with a FIFO .mcp.json: %q (error %v)", got, isErr)
	}
	if !d.alive() {
		t.Fatalf("daemon died:\n%s", d.log)
	}
}

// TestTortureSecrets: secrets in a server's env, its URL's query and its
// headers appear nowhere — not in answers to the model, status, the status
// page or the log — even when that server fails to connect.
func TestTortureSecrets(t *testing.T) {
	d := newDaemon(t, func(d *daemon) map[string]any {
		steady := d.hostile("steady", "plain", nil)
		steady["env"].(map[string]any)["API_TOKEN"] = "s3cr3t-env"
		return map[string]any{
			"steady": steady,
			"remote": map[string]any{"url": "http://127.0.0.1:1/mcp?api_key=s3cr3t-query",
				"headers": map[string]any{"Authorization": "Bearer s3cr3t-header"}},
		}
	})
	ctx := context.Background()
	s := d.session(ctx)
	var seen []string
	for _, tool := range []string{"remote_anything", "steady_echo"} {
		got, _ := call(ctx, s, tool, map[string]any{"message": "hi"})
		seen = append(seen, got)
	}
	for _, path := range []string{"/-/status", "/", "/-/logs?server=remote"} {
		resp, err := http.Get(d.url + path)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, readAll(resp.Body))
		resp.Body.Close()
	}
	d.stop()
	seen = append(seen, d.log.String())
	for i, out := range seen {
		if j := strings.Index(out, "s3cr3t"); j >= 0 {
			t.Errorf("output %d shows a secret: …%s…", i, out[max(0, j-80):min(len(out), j+20)])
		}
	}
	if !strings.Contains(seen[0], "remote") {
		t.Errorf("the failing server is not explained to the model: %q", seen[0])
	}
}

// reload asks the daemon to reload and checks the status; it returns the
// answer's body.
func reload(t *testing.T, d *daemon, want int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", d.url+"/-/reload", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /-/reload: %v\n%s", err, d.log)
	}
	defer resp.Body.Close()
	body := readAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("POST /-/reload: %s %s, want %d", resp.Status, body, want)
	}
	return body
}

func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

// TestTortureClients: 600 connections that never finish their headers and
// 100 that never finish their body, then 2,000 sessions opened and
// abandoned, then 64 concurrent clients while an upstream crashes over and
// over. The daemon keeps serving, its memory stays bounded, and no steady
// call fails.
func TestTortureClients(t *testing.T) {
	d := newDaemon(t, func(d *daemon) map[string]any {
		return map[string]any{"steady": d.hostile("steady", "plain", nil), "victim": d.hostile("victim", "plain", nil)}
	})
	ctx := context.Background()
	addr := strings.TrimPrefix(d.url, "http://")
	var stalled []net.Conn
	defer func() {
		for _, c := range stalled {
			c.Close()
		}
	}()
	for i := range 700 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		stalled = append(stalled, c)
		req := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\n"
		if i >= 600 {
			req += "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
		}
		if _, err := c.Write([]byte(req)); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	start := time.Now()
	ctx1, cancel := context.WithTimeout(ctx, 30*time.Second)
	s := d.session(ctx1)
	if got, isErr := call(ctx1, s, "steady_echo", map[string]any{"message": "through the stall"}); isErr || got != "through the stall" {
		t.Fatalf("a call with 700 stalled connections open: %q (error %v)", got, isErr)
	}
	cancel()
	t.Logf("700 stalled connections: a new session and call took %s", time.Since(start).Round(time.Millisecond))

	_, before := d.rss()
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"abandoned","version":"1"}}}`
	for i := range 2000 {
		req, _ := http.NewRequest("POST", d.url+"/mcp", strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("abandoned session %d: %v", i, err)
		}
		readAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("abandoned session %d: %s", i, resp.Status)
		}
	}
	rss, peak := d.rss()
	t.Logf("2,000 abandoned sessions: RSS %.0f MB (peak %.0f MB, %.0f MB before)", rss, peak, before)
	// About 100 KB of RSS each (22 KB of heap); they are reclaimed after
	// an hour idle.
	if rss > 384 {
		t.Errorf("RSS %.0f MB with 2,000 abandoned sessions, want ≤ 384 MB", rss)
	}

	var wg sync.WaitGroup
	var failed atomic.Int64
	stop := make(chan struct{})
	go func() {
		s := d.session(ctx)
		for {
			select {
			case <-stop:
				return
			default:
			}
			call(ctx, s, "victim_crash", nil)
		}
	}()
	start = time.Now()
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := d.session(ctx)
			for j := range 10 {
				msg := "steady " + strconv.Itoa(j)
				if got, isErr := call(ctx, s, "steady_echo", map[string]any{"message": msg}); isErr || got != msg {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	t.Logf("64 clients × 10 calls beside a crash loop: %s, %d failed", time.Since(start).Round(time.Millisecond), failed.Load())
	if n := failed.Load(); n != 0 {
		t.Errorf("%d of 640 steady calls failed while another upstream crashed", n)
	}
	if !d.alive() {
		t.Fatalf("daemon died:\n%s", d.log)
	}
}
