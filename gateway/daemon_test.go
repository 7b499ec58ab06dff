package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

type countingNotifier struct{ ch chan string }

func (n *countingNotifier) Ready()     { n.ch <- "READY" }
func (n *countingNotifier) Reloading() { n.ch <- "RELOADING" }
func (n *countingNotifier) Stopping()  { n.ch <- "STOPPING" }

// The daemon's run loop, in one process: it serves HTTP, reloads on a
// signal and on POST /-/reload (keeping the running config when the file
// breaks), tells the notifier, and returns once everything has stopped.
func TestDaemonRunReloadStop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	cmd, args, _ := fakeupstream.Command()
	write := func(names ...string) {
		var b strings.Builder
		b.WriteString(`{"mcpServers": {`)
		for i, n := range names {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"` + n + `": {"command": "` + cmd + `", "args": ["` + strings.Join(args, `","`) + `"]}`)
		}
		b.WriteString("}}")
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a")
	opts, cfg, gw, ln := loadDaemonParts(t, dir, path)
	reloads := make(chan struct{})
	notes := &countingNotifier{ch: make(chan string, 16)}
	// Started (the daemon's memory settling) runs once, before readiness.
	started := func() { notes.ch <- "STARTED" }
	d := NewDaemon(gw, DaemonOptions{ConfigPath: path, LoadOptions: opts, Config: cfg, HTTP: ln, Reloads: reloads, Notifier: notes, Started: started})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	if got := []string{<-notes.ch, <-notes.ch}; !slices.Equal(got, []string{"STARTED", "READY"}) {
		t.Fatalf("first notifications %v", got)
	}
	base := "http://" + ln.Addr().String()
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()

	names := func() []string {
		var out []string
		for _, s := range gw.Status().Servers {
			out = append(out, s.Name)
		}
		return out
	}
	write("a", "b")
	reloads <- struct{}{}
	if got := []string{<-notes.ch, <-notes.ch}; !slices.Equal(got, []string{"RELOADING", "READY"}) {
		t.Errorf("notifications around a reload: %v", got)
	}
	if got := names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("servers after the reload: %v", got)
	}

	if err := os.WriteFile(path, []byte(`{"mcpServers": {`), 0o600); err != nil {
		t.Fatal(err)
	}
	resp, err = http.Post(base+"/-/reload", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	<-notes.ch
	<-notes.ch
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("POST /-/reload of a broken file: %s", resp.Status)
	}
	if got := names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("a broken file replaced the running config: %v", got)
	}
	if rl := gw.Status().LastReload; rl == nil || rl.OK {
		t.Errorf("last reload = %+v, want the failure", rl)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if n := <-notes.ch; n != "STOPPING" {
		t.Errorf("notification at stop: %s", n)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after Run returned")
	}
}

func TestLimitListener(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitListener(inner, 1)
	defer ln.Close()
	for range 2 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	connState(first, http.StateActive) // in a request: not evicted
	second := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			second <- c
		}
		close(second)
	}()
	select {
	case <-second:
		t.Fatal("a second connection was accepted while the first was open")
	case <-time.After(100 * time.Millisecond):
	}
	first.Close()
	select {
	case c := <-second:
		if c == nil {
			t.Fatal("Accept failed")
		}
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the second connection was not accepted after the first closed")
	}
	// Close wakes an Accept waiting for a slot.
	held, _ := net.Dial("tcp", inner.Addr().String())
	defer held.Close()
	c3, _ := ln.Accept()
	defer c3.Close()
	connState(c3, http.StateActive)
	errc := make(chan error, 1)
	go func() { _, err := ln.Accept(); errc <- err }()
	time.Sleep(50 * time.Millisecond)
	ln.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("Accept after Close succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake a waiting Accept")
	}
}

// A reload whose read never returns fails after the load timeout, keeps
// the running configuration, and does not hold up the reloads after it.
func TestReloadStuckReadDoesNotWedge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gw := New(registry.Empty(filepath.Join(dir, "mcp.json")), &Options{NoBootstrap: true})
	defer gw.Close()
	d := NewDaemon(gw, DaemonOptions{ConfigPath: filepath.Join(dir, "mcp.json"), LoadTimeout: 100 * time.Millisecond})
	config := func(names ...string) *registry.Config {
		var b strings.Builder
		b.WriteString(`{"mcpServers": {`)
		for i, n := range names {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`"` + n + `": {"command": "true"}`)
		}
		b.WriteString("}}")
		cfg, err := registry.Parse([]byte(b.String()), filepath.Join(dir, "mcp.json"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	release := make(chan struct{})
	stuck := true
	var mu sync.Mutex
	d.loadConfig = func() (*registry.Config, error) {
		mu.Lock()
		s := stuck
		stuck = false
		mu.Unlock()
		if s {
			<-release // a read that does not return until the test lets it
			return config("old"), nil
		}
		return config("a", "b"), nil
	}
	errc := make(chan error, 1)
	go func() { errc <- d.Reload("stuck") }()
	var err error
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("a stuck read held the reload for 10 s")
	}
	if err == nil || !strings.Contains(err.Error(), "took over 100ms") {
		t.Fatalf("stuck reload: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Reload("next") }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("next reload: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next reload waited for the stuck one")
	}
	names := func() []string {
		var out []string
		for _, s := range gw.Status().Servers {
			out = append(out, s.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("servers after the next reload: %v", got)
	}
	close(release) // the stuck read ends; its result goes nowhere
}

// At the limit, a connection that has not sent a whole request (or is idle
// between requests) makes room for a new one: stalled clients cannot lock
// others out. One in a request is never closed for it.
func TestLimitListenerEvictsStalled(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitListener(inner, 2)
	defer ln.Close()
	accept := func(st http.ConnState) net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		sc, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		connState(sc, st)
		return sc
	}
	busy := accept(http.StateActive)
	stalled := accept(http.StateNew)
	accept(http.StateNew) // over the limit: the stalled one makes room
	if _, err := stalled.Write([]byte("x")); err == nil {
		t.Error("the stalled connection is still open")
	}
	if _, err := busy.Write([]byte("x")); err != nil {
		t.Errorf("the busy connection was closed: %v", err)
	}
}

// stuckDaemon runs a daemon with the test server "a" and a session whose
// client wants every log message and has opened its event stream with a
// tiny receive buffer it never reads. It returns the daemon's /mcp URL,
// the stuck session, a cancel that stops the daemon, the channel Run's
// result arrives on and the number of messages the daemon has dropped
// for clients not taking them (mcpgw_session_messages_dropped_total).
//
// The daemon's connections have a small send buffer (the listener's,
// which Linux copies to each connection), so that the stuck client's
// connection is full after a few kilobytes and what fills its session's
// queue is the queue's own bound.
func stuckDaemon(t *testing.T) (url string, stuck *rawHTTPSession, cancel func(), done chan error, dropped func() float64) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	cmd, _, env := fakeupstream.Command()
	srv, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"a": map[string]any{"command": cmd, "env": env}}})
	if err := os.WriteFile(path, srv, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := &registry.LoadOptions{Home: dir}
	cfg, err := registry.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 32<<10) })
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	gw := New(cfg, &Options{NoBootstrap: true, Registerer: reg})
	dropped = func() float64 {
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			if f.GetName() == "mcpgw_session_messages_dropped_total" {
				return f.GetMetric()[0].GetCounter().GetValue()
			}
		}
		t.Fatal("no mcpgw_session_messages_dropped_total")
		return 0
	}
	d := NewDaemon(gw, DaemonOptions{ConfigPath: path, LoadOptions: opts, Config: cfg, HTTP: ln})
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	done = make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	url = "http://" + ln.Addr().String() + "/mcp"
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon does not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stuck = openRawSession(t, url)
	stuck.post(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`)
	if body, _ := stuck.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"a_echo","args":{"message":"x"}}}}`); !bytes.Contains(body, []byte(`"x"`)) {
		t.Fatalf("echo: %s", body)
	}
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
	}}
	conn, err := dialer.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n", ln.Addr(), stuck.id)
	return url, stuck, stop, done, dropped
}

// logMuch has session s make the test server log n messages of 256 KiB,
// failing if a call is not answered within 30 s.
func logMuch(t *testing.T, s *rawHTTPSession, n int, tag string) {
	t.Helper()
	msg := tag + strings.Repeat("y", 256<<10)
	for i := range n {
		answered := make(chan []byte, 1)
		go func() {
			body, _ := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"a_log","args":{"message":%q,"level":"error"}}}}`, 10+i, msg))
			answered <- body
		}()
		select {
		case body := <-answered:
			if !bytes.Contains(body, []byte("logged")) {
				t.Fatalf("call %d: %.200s", i, body)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("call %d is held up by the client that does not read", i)
		}
	}
}

// fillStuck has session s make the test server log messages of 256 KiB,
// which are for the stuck client too, until the daemon drops one for want
// of room (the stuck client's connection and its session's queue are then
// full), or 60 of them (15 MB, more than the two hold) without a drop.
func fillStuck(t *testing.T, s *rawHTTPSession, dropped func() float64) {
	t.Helper()
	for i := 0; i < 60 && dropped() == 0; i++ {
		logMuch(t, s, 1, "")
	}
}

// A client that opens its event stream and stops reading it holds
// neither the other sessions' calls nor the daemon's exit: after the
// shutdown grace, its connection is cut.
func TestStopCutsOffAStuckEventStream(t *testing.T) {
	t.Parallel()
	url, _, cancel, done, dropped := stuckDaemon(t)
	// Another client makes the server log until the stuck client's
	// buffers are full; its own calls go on.
	fillStuck(t, openRawSession(t, url), dropped)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon is still stopping 30 s later: the stuck client holds it")
	}
}

// The upstream's log messages reach a client that reads them while
// another client, which does not read, has stopped taking its own.
func TestStuckClientHoldsNoOtherSessionsLogs(t *testing.T) {
	t.Parallel()
	url, _, _, _, dropped := stuckDaemon(t)
	watcher := openRawSession(t, url)
	watcher.post(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`)
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", watcher.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	marker := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "marker-7f3a") {
				close(marker)
				return
			}
		}
	}()
	fillStuck(t, watcher, dropped)
	logMuch(t, watcher, 1, "marker-7f3a") // then one the watcher looks for
	select {
	case <-marker:
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher never got the last log message: the stuck client holds the others' logs")
	}
}

// loadDaemonParts loads the config at path (home dir) and returns what
// NewDaemon needs: the load options, the config, its gateway and an HTTP
// listener on a free loopback port.
func loadDaemonParts(t *testing.T, dir, path string) (*registry.LoadOptions, *registry.Config, *Server, net.Listener) {
	t.Helper()
	opts := &registry.LoadOptions{Home: dir}
	cfg, err := registry.Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return opts, cfg, New(cfg, &Options{NoBootstrap: true}), ln
}
