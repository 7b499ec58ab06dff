package deploy

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Notifier tells a service manager what the daemon is doing, with the
// sd_notify protocol: one datagram per state change, sent to the unix socket
// named by $NOTIFY_SOCKET (a path, or an abstract name written with a
// leading '@'). systemd runs the unit as Type=notify and waits for READY=1
// before it counts the daemon as started; see sd_notify(3).
//
// A nil *Notifier, or one made without $NOTIFY_SOCKET, does nothing, so
// callers never check whether they run under a service manager. Its methods
// are safe for concurrent use.
type Notifier struct {
	addr string
	log  *slog.Logger
}

// NewNotifier returns a notifier for $NOTIFY_SOCKET and removes the variable
// from the environment, so upstream processes the daemon starts do not
// inherit it and report to the manager in the daemon's name.
func NewNotifier(log *slog.Logger) *Notifier {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil
	}
	os.Unsetenv("NOTIFY_SOCKET")
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Notifier{addr: addr, log: log}
}

// Ready says the daemon is listening and serving, at start and after a reload.
func (n *Notifier) Ready() { n.notify("READY=1") }

// Reloading says a configuration reload has begun; Ready ends it. systemd
// wants the CLOCK_MONOTONIC time with it to tell this reload from an
// earlier one.
func (n *Notifier) Reloading() {
	n.notify("RELOADING=1\nMONOTONIC_USEC=" + strconv.FormatInt(monotonicUsec(), 10))
}

// Stopping says the daemon is shutting down.
func (n *Notifier) Stopping() { n.notify("STOPPING=1") }

func (n *Notifier) notify(state string) {
	if n == nil {
		return
	}
	if err := sdNotify(n.addr, state); err != nil {
		n.log.Warn("notifying the service manager", "state", strings.ReplaceAll(state, "\n", " "), "err", err)
	}
}

// sdNotify sends state in one datagram to the socket at addr. An addr
// starting with '@' is an abstract socket: the net package turns the '@'
// into the leading NUL byte of the kernel's name.
func sdNotify(addr, state string) error {
	if !strings.HasPrefix(addr, "/") && !strings.HasPrefix(addr, "@") {
		return fmt.Errorf("NOTIFY_SOCKET=%q: only unix socket paths and @abstract names are supported", addr)
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", addr, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("sending to %s: %w", addr, err)
	}
	return nil
}

// monotonicUsec is CLOCK_MONOTONIC in microseconds, the clock systemd
// compares MONOTONIC_USEC against.
func monotonicUsec() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return ts.Nano() / 1000
}
