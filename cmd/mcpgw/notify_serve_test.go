package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/internal/proctest"
)

// listenNotify opens a unixgram socket the way systemd does for a
// Type=notify unit and points $NOTIFY_SOCKET at it.
func listenNotify(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatalf("listening on %s: %v", name, err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", name)
	return conn
}

// readNotify returns the next datagram, failing after a generous timeout.
func readNotify(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 4096)
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("reading a notification: %v", err)
	}
	return string(buf[:n])
}

var reloadingRE = regexp.MustCompile(`^RELOADING=1\nMONOTONIC_USEC=([0-9]+)$`)

// TestNotifyServe runs the daemon under a fake service manager and checks
// the whole conversation: READY=1 once listening, RELOADING=1 and READY=1
// around a reload, STOPPING=1 on shutdown.
func TestNotifyServe(t *testing.T) {
	dir := t.TempDir()
	conn := listenNotify(t, filepath.Join(dir, "notify"))
	addr := fmt.Sprintf("127.0.0.1:%d", e2e.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr proctest.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve",
			"--listen", addr,
			"--config", filepath.Join(dir, "mcp.json"),
			"--cache", filepath.Join(dir, "cache.json"),
			"--socket", filepath.Join(dir, "run", "mcpgw.sock"),
			"--log-format", "text", "--no-bootstrap",
		}, nil, &stderr, &stderr)
	}()

	if got := readNotify(t, conn); got != "READY=1" {
		t.Fatalf("first notification %q, want READY=1; log:\n%s", got, stderr.String())
	}
	// READY=1 promises the listener is up: no retry loop here.
	resp, err := http.Post("http://"+addr+"/-/reload", "text/plain", nil)
	if err != nil {
		t.Fatalf("POST /-/reload right after READY=1: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST /-/reload: %s", resp.Status)
	}
	if got := readNotify(t, conn); !reloadingRE.MatchString(got) {
		t.Errorf("notification on reload %q, want RELOADING=1\\nMONOTONIC_USEC=<usec>", got)
	}
	if got := readNotify(t, conn); got != "READY=1" {
		t.Errorf("notification after reload %q, want READY=1", got)
	}

	cancel()
	if got := readNotify(t, conn); got != "STOPPING=1" {
		t.Errorf("notification on shutdown %q, want STOPPING=1", got)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v; log:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return after its context was cancelled")
	}
}
