//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; a gateway forwards it.

package gateway

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"

	"github.com/mcpgw/mcpgw/registry"
)

// logClient is a session that records the log messages it receives.
type logClient struct {
	sess *mcp.ClientSession
	mu   sync.Mutex
	got  []string
}

func connectLogClient(t *testing.T, gw *Hub) *logClient {
	t.Helper()
	lc := &logClient{}
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = gw.ServeTransport(ctx, st, SessionOptions{}) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "log-test", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			lc.mu.Lock()
			lc.got = append(lc.got, string(req.Params.Level)+" "+req.Params.Logger+": "+req.Params.Data.(string))
			lc.mu.Unlock()
		},
	})
	sess, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	lc.sess = sess
	t.Cleanup(func() { sess.Close(); cancel(); <-done })
	return lc
}

func (lc *logClient) messages() []string {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return append([]string(nil), lc.got...)
}

// Two sessions share one upstream; its log messages reach both, each at
// the level it set, and the upstream is asked for the more verbose one.
func TestUpstreamLogsReachSessionsAtTheirLevels(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeDirect}, "alpha")
	connectNow(t, gw, "alpha")
	verbose, quiet := connectLogClient(t, gw), connectLogClient(t, gw)
	ctx := context.Background()
	if err := verbose.sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if err := quiet.sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	// The session's level is its own at once; the upstream is asked for
	// the more verbose one on its way, asynchronously: wait (bounded)
	// until a debug message reaches the verbose session; the check below
	// leaves the warm-up's messages out.
	warm := time.Now().Add(30 * time.Second)
	for len(verbose.messages()) == 0 && time.Now().Before(warm) {
		if _, err := verbose.sess.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_log", Arguments: map[string]any{"level": "debug", "message": "warm-up"}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	warmed := len(verbose.messages())
	for _, lvl := range []string{"debug", "info", "error"} {
		res, err := verbose.sess.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_log", Arguments: map[string]any{"level": lvl, "message": lvl + " message"}})
		if err != nil || res.IsError {
			t.Fatalf("alpha_log: %v %+v", err, res)
		}
	}
	// Notifications arrive asynchronously: wait (bounded) for what each
	// session should get, then check that it got exactly that.
	deadline := time.Now().Add(5 * time.Second)
	measured := func() []string {
		var got []string
		for _, m := range verbose.messages() {
			if m != "debug alpha: warm-up" {
				got = append(got, m)
			}
		}
		return got
	}
	for (len(measured()) < 3 || len(quiet.messages()) < 1) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if warmed == 0 {
		t.Fatal("no debug message reached the verbose session within 30 s")
	}
	want := []string{"debug alpha: debug message", "info alpha: info message", "error alpha: error message"}
	if got := measured(); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("debug session got %q, want %q", got, want)
	}
	if got := quiet.messages(); len(got) != 1 || got[0] != want[2] {
		t.Errorf("warning session got %q, want only the error", got)
	}
}

// A session's outbox holds up to outboxSize messages and outboxBytes
// bytes while its client does not take them, and drops the rest; it sends
// them in order once the client reads again.
func TestOutboxBounds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss := &session{gw: &Hub{log: slog.New(slog.DiscardHandler), metrics: newMetrics(nil, false)}, ctx: ctx, key: "t"}
	release := make(chan struct{})
	started := make(chan struct{})
	// The first message blocks, as a write to a client that does not read.
	ss.post(10, func(context.Context) { close(started); <-release })
	<-started
	var got []int
	var mu sync.Mutex
	for i := range outboxSize {
		if !ss.post(10, func(context.Context) { mu.Lock(); got = append(got, i); mu.Unlock() }) {
			t.Fatalf("message %d of %d was dropped", i, outboxSize)
		}
	}
	if ss.post(10, func(context.Context) { t.Error("a message over the count was sent") }) {
		t.Error("a message over the count was queued")
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == outboxSize {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d queued messages sent", n, outboxSize)
		}
		time.Sleep(time.Millisecond)
	}
	if !slices.IsSorted(got) {
		t.Error("the messages were not sent in order")
	}
	if ss.post(outboxBytes+1, func(context.Context) { t.Error("a message over the size was sent") }) {
		t.Error("a message larger than the outbox was queued")
	}
	if n := ss.out.dropped.Load(); n != 2 {
		t.Errorf("dropped %d, want 2", n)
	}
	var m dto.Metric
	if err := ss.gw.metrics.dropped.Write(&m); err != nil || m.GetCounter().GetValue() != 2 {
		t.Errorf("mcpgw_session_messages_dropped_total is %v (%v), want 2", m.GetCounter().GetValue(), err)
	}
}

// Sessions that set their levels at once leave the upstream at the most
// verbose of them, whatever the order their updates run in.
func TestConcurrentSetLevelsKeepTheMostVerbose(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeDirect}, "alpha")
	connectNow(t, gw, "alpha")
	const n = 8
	clients := make([]*logClient, n)
	for i := range clients {
		clients[i] = connectLogClient(t, gw)
	}
	ctx := context.Background()
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, c := range clients {
		level := mcp.LoggingLevel("emergency")
		if i%2 == 0 {
			level = "debug"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- c.sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := gw.pool.LogLevel(); got != "debug" {
		t.Fatalf("upstreams are asked for %q, want debug", got)
	}
	debug := clients[0]
	res, err := debug.sess.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_log", Arguments: map[string]any{"level": "debug", "message": "seen"}})
	if err != nil || res.IsError {
		t.Fatalf("alpha_log: %v %+v", err, res)
	}
	deadline := time.Now().Add(20 * time.Second) // a liveness bound
	for len(debug.messages()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := debug.messages(); !slices.Equal(got, []string{"debug alpha: seen"}) {
		t.Fatalf("the debug session got %q", got)
	}
}
