package runloop

import (
	"context"
	"errors"
	"io"
	"maps"
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

	"github.com/mcpgw/mcpgw/gateway"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream/testmain"
)

func TestMain(m *testing.M) { testmain.Run(m) }

type countingNotifier struct{ ch chan string }

func (n *countingNotifier) Ready()     { n.ch <- "READY" }
func (n *countingNotifier) Reloading() { n.ch <- "RELOADING" }
func (n *countingNotifier) Stopping()  { n.ch <- "STOPPING" }

// The daemon's run loop, in one process: it serves HTTP, reloads on a
// signal and on POST /-/reload (keeping the running config when the file
// breaks), tells the notifier, and returns once everything has stopped.
func TestDaemonRunReloadStop(t *testing.T) {
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

// fakeHub is a Hub that records what the run loop asks of it; its HTTP
// handler is handler, or 404 for everything.
type fakeHub struct {
	handler http.Handler

	mu       sync.Mutex
	reloads  []*registry.Config // what Reload applied, in order
	outcomes []error            // what RecordReload and RecordNoConfig noted
	closes   int
}

func (h *fakeHub) Start() {}

func (h *fakeHub) Handler(*gateway.HTTPOptions) http.Handler {
	if h.handler != nil {
		return h.handler
	}
	return http.NotFoundHandler()
}

func (h *fakeHub) SocketHTTP() net.Listener { panic("no socket in these tests") }

func (h *fakeHub) ServeSocket(context.Context, net.Listener) error {
	panic("no socket in these tests")
}

func (h *fakeHub) Reload(cfg *registry.Config) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reloads = append(h.reloads, cfg)
}

func (h *fakeHub) RefreshProjects()       {}
func (h *fakeHub) ProjectFiles() []string { return nil }
func (h *fakeHub) RecordReload(err error) { h.record(err) }
func (h *fakeHub) RecordNoConfig(err error) {
	h.record(err)
}
func (h *fakeHub) Activity() uint64 { return 0 }

func (h *fakeHub) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closes++
	return nil
}

func (h *fakeHub) record(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.outcomes = append(h.outcomes, err)
}

// applied returns the names of the servers of each configuration Reload
// applied, and how often Close was called.
func (h *fakeHub) applied() (servers [][]string, closes int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, cfg := range h.reloads {
		servers = append(servers, slices.Sorted(maps.Keys(cfg.Servers)))
	}
	return servers, h.closes
}

// A reload whose read never returns fails after the load timeout, keeps
// the running configuration, and does not hold up the reloads after it.
func TestReloadStuckReadDoesNotWedge(t *testing.T) {
	dir := t.TempDir()
	hub := &fakeHub{}
	d := NewDaemon(hub, DaemonOptions{ConfigPath: filepath.Join(dir, "mcp.json"), LoadTimeout: 100 * time.Millisecond})
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
	if got, _ := hub.applied(); !slices.EqualFunc(got, [][]string{{"a", "b"}}, slices.Equal) {
		t.Fatalf("configurations applied: %v, want only the next reload's [a b]", got)
	}
	close(release) // the stuck read ends; its result goes nowhere
}

// A client that opens an event stream and stops reading it does not hold
// the daemon's exit: after the shutdown grace its connection is cut, the
// handler writing to it ends, and the hub is closed.
func TestStopCutsOffAStuckEventStream(t *testing.T) {
	streaming := make(chan struct{})
	handlerDone := make(chan struct{})
	hub := &fakeHub{handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(handlerDone)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(streaming)
		event := []byte("data: " + strings.Repeat("y", 64<<10) + "\n\n")
		for {
			if _, err := w.Write(event); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := NewDaemon(hub, DaemonOptions{HTTP: ln})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	// A client with a tiny receive buffer that never reads.
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
	}}
	conn, err := dialer.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /mcp HTTP/1.1\r\nHost: "+ln.Addr().String()+"\r\nAccept: text/event-stream\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-streaming

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon is still stopping 30 s later: the stuck client holds it")
	}
	select {
	case <-handlerDone:
	case <-time.After(30 * time.Second):
		t.Fatal("the stuck stream's handler is still writing after Run returned")
	}
	if _, closes := hub.applied(); closes != 1 {
		t.Errorf("the hub was closed %d times, want once", closes)
	}
	// The client's connection was cut: reading drains what it was sent,
	// then ends.
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, conn); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the stuck client's connection did not end: %v", err)
	}
}

// loadDaemonParts loads the config at path (home dir) and returns what
// NewDaemon needs: the load options, the config, its hub and an HTTP
// listener on a free loopback port.
func loadDaemonParts(t *testing.T, dir, path string) (*registry.LoadOptions, *registry.Config, *gateway.Hub, net.Listener) {
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
	return opts, cfg, gateway.New(cfg, &gateway.Options{NoBootstrap: true}), ln
}
