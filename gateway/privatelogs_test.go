package gateway

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// logListener is a client session that records the log messages it hears.
type logListener struct {
	cs      *mcp.ClientSession
	mu      sync.Mutex
	got     []string
	arrived chan struct{}
}

func connectLogs(t *testing.T, gw *Hub) *logListener {
	t.Helper()
	lc := &logListener{arrived: make(chan struct{}, 16)}
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = gw.ServeTransport(ctx, st, SessionOptions{}) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "logs", Version: "1"}, &mcp.ClientOptions{
		//lint:ignore SA1019 MCP logging is deprecated in 2026-07-28 but still in use; a gateway forwards it
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			s, _ := req.Params.Data.(string)
			lc.mu.Lock()
			lc.got = append(lc.got, s)
			lc.mu.Unlock()
			lc.arrived <- struct{}{}
		},
	})
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	lc.cs = cs
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	//lint:ignore SA1019 MCP logging is deprecated in 2026-07-28 but still in use; a gateway forwards it
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	return lc
}

// logAndHear has the client's process log msg (the test server's log
// tool) and returns every message the client heard once msg arrived.
func (lc *logListener) logAndHear(t *testing.T, msg string) []string {
	t.Helper()
	res, err := lc.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_log", Arguments: map[string]any{"level": "info", "message": msg}})
	if err != nil || res.IsError {
		t.Fatalf("alpha_log: %v %+v", err, res)
	}
	deadline := time.After(waitBound)
	for {
		lc.mu.Lock()
		got := slices.Clone(lc.got)
		lc.mu.Unlock()
		if slices.Contains(got, msg) {
			return got
		}
		select {
		case <-lc.arrived:
		case <-deadline:
			t.Fatalf("%q never arrived; heard %q", msg, got)
		}
	}
}

// With "isolation": "session", what a session's process logs reaches
// that session alone. Each session's messages are delivered in order, so
// a message of the other session's process sent before this one's would
// have arrived first.
func TestPrivateLogsBySession(t *testing.T) {
	t.Parallel()
	gw := privateAlpha(t, registry.IsolationSession, false)
	a, b := connectLogs(t, gw), connectLogs(t, gw)
	if got := a.logAndHear(t, "from a"); !slices.Equal(got, []string{"from a"}) {
		t.Errorf("a heard %q, want only its own", got)
	}
	if got := b.logAndHear(t, "from b"); !slices.Equal(got, []string{"from b"}) {
		t.Errorf("b heard %q, want only its own", got)
	}
	if got := a.logAndHear(t, "from a again"); !slices.Equal(got, []string{"from a", "from a again"}) {
		t.Errorf("a heard %q, want only its own", got)
	}
}

// A shared process's messages still reach every session that has the
// server.
func TestSharedLogsReachEverySession(t *testing.T) {
	t.Parallel()
	gw := privateAlpha(t, registry.IsolationShared, false)
	a, b := connectLogs(t, gw), connectLogs(t, gw)
	a.logAndHear(t, "from a")
	if got := b.logAndHear(t, "from b"); !slices.Equal(got, []string{"from a", "from b"}) {
		t.Errorf("b heard %q, want the shared process's every message", got)
	}
}
