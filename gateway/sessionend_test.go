package gateway

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgw/mcpgw/registry"
)

// A session leaves the daemon however it ends: the client closing it
// (DELETE), the idle timeout, the daemon's own close, and the shim's
// connection ending. Nothing waits on each session for that, so each way
// is checked: the session list, the HTTP IDs and the sessions gauge go
// back down, and Close returns.
func TestSessionsLeaveWhenTheyEnd(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	gw := New(&registry.Config{Servers: map[string]*registry.Server{}}, &Options{Registerer: reg, NoBootstrap: true})
	closed := make(chan struct{})
	defer func() {
		go func() { gw.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Error("Close still waits for sessions after 10 s")
		}
	}()
	h := gw.Handler(&HTTPOptions{SessionTimeout: 3 * time.Second, Gatherer: reg})
	ts := httptest.NewServer(h)
	defer ts.Close()

	state := func() (sessions, httpIDs int, gauge float64) {
		gw.mu.Lock()
		sessions, httpIDs = len(gw.sessions), len(gw.byHTTPID)
		gw.mu.Unlock()
		return sessions, httpIDs, value(scrape(t, h), "mcpgw_sessions")
	}
	waitFor := func(what string, sessions, httpIDs int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s, ids, g := state()
			if s == sessions && ids == httpIDs && g == float64(sessions) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d sessions, %d HTTP IDs, gauge %v; want %d, %d, %d", what, s, ids, g, sessions, httpIDs, sessions)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	connect := func(name string) *mcp.ClientSession {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}

	a := connect("a")
	waitFor("an HTTP session open", 1, 1)
	if err := a.Close(); err != nil { // DELETE
		t.Fatal(err)
	}
	waitFor("closed by its client", 0, 0)
	// b says nothing after it initialized: the idle timeout ends it.
	b := connect("b")
	defer b.Close()
	waitFor("another HTTP session open", 1, 1)
	waitFor("the other timed out", 0, 0)
	if err := b.Ping(context.Background(), nil); err == nil {
		t.Error("the timed-out session still answers a ping")
	}

	client, daemon := net.Pipe()
	done := make(chan struct{})
	go func() { defer close(done); _ = gw.transports.ServeShim(context.Background(), daemon) }()
	br := bufio.NewReader(client)
	if _, err := io.WriteString(client, `{"mcpgw":1,"version":"test"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"ok":true`) {
		t.Fatalf("handshake: %q, %v", line, err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "shim", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: io.NopCloser(br), Writer: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitFor("a shim session open", 1, 0)
	cs.Close()
	<-done
	waitFor("the shim's connection ended", 0, 0)

	connect("c") // left open: the daemon's Close ends it
	waitFor("a session open at Close", 1, 1)
}
