package deploy

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
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

func TestNotifyMessages(t *testing.T) {
	conn := listenNotify(t, filepath.Join(t.TempDir(), "notify"))
	n := NewNotifier(nil)
	if n == nil {
		t.Fatal("NewNotifier with $NOTIFY_SOCKET set = nil")
	}
	if v, ok := os.LookupEnv("NOTIFY_SOCKET"); ok {
		t.Errorf("NOTIFY_SOCKET = %q after NewNotifier; want it removed so upstreams do not inherit it", v)
	}

	n.Ready()
	if got := readNotify(t, conn); got != "READY=1" {
		t.Errorf("Ready sent %q, want %q", got, "READY=1")
	}

	before := monotonicUsec()
	n.Reloading()
	after := monotonicUsec()
	got := readNotify(t, conn)
	m := reloadingRE.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("Reloading sent %q, want RELOADING=1\\nMONOTONIC_USEC=<usec>", got)
	}
	usec, _ := strconv.ParseInt(m[1], 10, 64)
	if usec < before || usec > after {
		t.Errorf("MONOTONIC_USEC=%d, want between %d and %d (CLOCK_MONOTONIC)", usec, before, after)
	}

	n.Stopping()
	if got := readNotify(t, conn); got != "STOPPING=1" {
		t.Errorf("Stopping sent %q, want %q", got, "STOPPING=1")
	}
}

func TestNotifyAbstractSocket(t *testing.T) {
	name := fmt.Sprintf("@mcpgw-notify-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	conn := listenNotify(t, name)
	NewNotifier(nil).Ready()
	if got := readNotify(t, conn); got != "READY=1" {
		t.Errorf("sent %q to %s, want READY=1", got, name)
	}
}

func TestNotifyUnsetIsNoop(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	n := NewNotifier(nil)
	if n != nil {
		t.Fatalf("NewNotifier without $NOTIFY_SOCKET = %+v, want nil", n)
	}
	// A nil notifier is what serve holds outside a service manager.
	n.Ready()
	n.Reloading()
	n.Stopping()
}

func TestNotifyErrors(t *testing.T) {
	for _, addr := range []string{"vsock:2:1234", "relative/path"} {
		if err := sdNotify(addr, "READY=1"); err == nil {
			t.Errorf("sdNotify(%q) = nil, want an unsupported-address error", addr)
		}
	}
	if err := sdNotify(filepath.Join(t.TempDir(), "nobody-listens"), "READY=1"); err == nil {
		t.Error("sdNotify to a missing socket = nil, want an error")
	}
}
