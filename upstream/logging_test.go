//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; a gateway forwards it.

package upstream

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// logSink records the log messages a pool's upstreams send, as "level data".
type logSink struct {
	mu  sync.Mutex
	got []string
}

func (l *logSink) onLog(_ *registry.Server, _ string, m *mcp.LoggingMessageParams) {
	l.mu.Lock()
	l.got = append(l.got, fmt.Sprintf("%s %v", m.Level, m.Data))
	l.mu.Unlock()
}

// logAt has the upstream log message at level, then the marker "end
// <message>" at emergency (which every level lets through), and returns
// what the pool received in between: the upstream sends in order, so once
// the marker is in, the message would be.
func (l *logSink) logAt(t *testing.T, u *Upstream, level, message string) []string {
	t.Helper()
	l.mu.Lock()
	from := len(l.got)
	l.mu.Unlock()
	call(t, u, "log", map[string]any{"level": level, "message": message})
	call(t, u, "log", map[string]any{"level": "emergency", "message": "end " + message})
	deadline := time.Now().Add(20 * time.Second) // a liveness bound
	for {
		l.mu.Lock()
		got := slices.Clone(l.got[from:])
		l.mu.Unlock()
		if i := slices.Index(got, "emergency end "+message); i >= 0 {
			return got[:i]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the marker after %q never arrived; got %q", message, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// An upstream takes the pool's level when it connects; and SetLogLevel,
// even of the level the pool has already, brings back to it an upstream
// that is not at it: one whose setLevel failed or timed out, or that
// connected while the level changed.
func TestSetLogLevelReachesEveryUpstream(t *testing.T) {
	t.Parallel()
	sink := &logSink{}
	p := newPool(t, &Options{OnLog: sink.onLog})
	// 2025-11-25: an upstream of 2026-07-28 takes the level with each
	// request as well.
	srv, _ := testServer(t, "logs", map[string]string{fakeupstream.EnvProtocols: "2025-11-25"})
	p.SetLogLevel("info")
	u := p.Upstream(srv)
	if got := sink.logAt(t, u, "debug", "first"); len(got) != 0 {
		t.Fatalf("at info, the upstream sent %q", got)
	}

	// The pool's level moves on without the upstream being told, as when
	// its setLevel fails.
	p.mu.Lock()
	p.logLevel = "debug"
	p.mu.Unlock()
	if got := sink.logAt(t, u, "debug", "untold"); len(got) != 0 {
		t.Fatalf("the upstream was not told, yet sent %q", got)
	}
	p.SetLogLevel("debug")
	if got := sink.logAt(t, u, "debug", "told"); !slices.Equal(got, []string{"debug told"}) {
		t.Fatalf("after SetLogLevel(debug) again, the upstream sent %q; want the debug message", got)
	}
	if s := u.currentSession(); s == nil || s.level != "debug" {
		t.Fatalf("the session records level %q", s.level)
	}

	// Levels set one after another leave the upstream at the last.
	for _, level := range []mcp.LoggingLevel{"error", "debug", "warning"} {
		p.SetLogLevel(level)
	}
	if got := sink.logAt(t, u, "info", "last"); len(got) != 0 {
		t.Fatalf("at warning, the upstream sent %q", got)
	}
	if got := sink.logAt(t, u, "warning", "warn"); !slices.Equal(got, []string{"warning warn"}) {
		t.Fatalf("at warning, the upstream sent %q; want the warning", got)
	}
}
