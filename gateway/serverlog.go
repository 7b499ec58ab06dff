package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// serverLogLines is how many of its own lines about each server the daemon
// keeps for the status page and `mcpgw logs`.
const serverLogLines = 200

// serverLogs keeps, per server, the last lines the daemon logged about it
// (connects, restarts, errors), for the status page and `mcpgw logs`.
type serverLogs struct {
	mu    sync.Mutex
	lines map[string][]string
}

func (l *serverLogs) add(server, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lines == nil {
		l.lines = map[string][]string{}
	}
	ring := append(l.lines[server], line)
	if len(ring) > serverLogLines {
		ring = append(ring[:0:0], ring[len(ring)-serverLogLines:]...)
	}
	l.lines[server] = ring
}

// get returns server's lines, oldest first.
func (l *serverLogs) get(server string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines[server]...)
}

// teeHandler passes records on to the daemon's log, and keeps those about
// a server (with a "server" attribute) in serverLogs.
type teeHandler struct {
	slog.Handler
	logs   *serverLogs
	server string
	attrs  string // the handler's attributes other than server, as text
}

func (h *teeHandler) Handle(ctx context.Context, r slog.Record) error {
	server := h.server
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s%s", r.Time.Format(time.TimeOnly), r.Level, r.Message, h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "server" {
			server = a.Value.String()
		} else {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	if server != "" {
		h.logs.add(server, b.String())
	}
	return h.Handler.Handle(ctx, r)
}

func (h *teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	n := &teeHandler{Handler: h.Handler.WithAttrs(as), logs: h.logs, server: h.server, attrs: h.attrs}
	for _, a := range as {
		if a.Key == "server" {
			n.server = a.Value.String()
		} else {
			n.attrs += fmt.Sprintf(" %s=%v", a.Key, a.Value)
		}
	}
	return n
}

func (h *teeHandler) WithGroup(name string) slog.Handler {
	return &teeHandler{Handler: h.Handler.WithGroup(name), logs: h.logs, server: h.server, attrs: h.attrs}
}
