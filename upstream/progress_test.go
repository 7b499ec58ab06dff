package upstream

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProgressSettle: a call's result waits for the progress
// notifications read before it until they are delivered, and no longer:
// none read, it does not wait; all delivered, it goes on at the last
// delivery; one that never comes (dropped) holds it progressSettle at
// most. Time is the bubble's: the waits are exact.
func TestProgressSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ws progressWatches
		var delivered []float64
		f := func(_ context.Context, p *mcp.ProgressNotificationParams) { delivered = append(delivered, p.Progress) }
		settled := func(w *progressWatch) time.Duration {
			start := time.Now()
			w.settle(progressSettle)
			return time.Since(start)
		}

		// None read: at once.
		_, w, done := ws.watch(f)
		if d := settled(w); d != 0 {
			t.Errorf("no notification read: the result waited %v", d)
		}
		done()

		// Two read, delivered 10 ms and 30 ms later: the result goes on
		// at the second.
		token, w, done := ws.watch(f)
		ws.noteRead(token)
		ws.noteRead(token)
		go func() {
			for i, at := range []time.Duration{10 * time.Millisecond, 20 * time.Millisecond} {
				time.Sleep(at)
				ws.deliver(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i + 1)})
			}
		}()
		if d := settled(w); d != 30*time.Millisecond || len(delivered) != 2 {
			t.Errorf("two read, the last delivered at 30ms: the result waited %v, after %v delivered", d, delivered)
		}
		done()

		// One read and never delivered: progressSettle.
		token, w, done = ws.watch(f)
		ws.noteRead(token)
		if d := settled(w); d != progressSettle {
			t.Errorf("one read, none delivered: the result waited %v; want %v", d, progressSettle)
		}
		done()

		// Another call's token, or one forgotten, counts for nothing.
		_, w, done = ws.watch(f)
		ws.noteRead(token)
		ws.noteRead("mcpgw-unknown")
		if d := settled(w); d != 0 {
			t.Errorf("notifications for other tokens: the result waited %v", d)
		}
		done()
	})
}

// TestLineConnCountsProgress: the connection counts each progress
// notification it reads for a call's token before the SDK can have it,
// in a batch too; other notifications and requests are not counted.
func TestLineConnCountsProgress(t *testing.T) {
	t.Parallel()
	var ws progressWatches
	token, w, done := ws.watch(func(context.Context, *mcp.ProgressNotificationParams) {})
	defer done()
	outR, outW := io.Pipe()
	c := newLineConn(outR, io.Discard, io.NopCloser(nil), slog.New(slog.DiscardHandler), &ws)
	t.Cleanup(func() { outW.Close() })
	go func() {
		fmt.Fprintf(outW, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%q,"progress":1}}`+"\n", token)
		fmt.Fprintf(outW, `[{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%q,"progress":2}},{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%q}}]`+"\n", token, token)
		fmt.Fprintf(outW, `{"jsonrpc":"2.0","id":7,"method":"notifications/progress","params":{"progressToken":%q,"progress":3}}`+"\n", token)
		fmt.Fprintf(outW, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"mcpgw-other","progress":4}}`+"\n")
		fmt.Fprintf(outW, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n")
	}()
	var methods []string
	for range 6 {
		m, err := c.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(*jsonrpc.Request); ok {
			methods = append(methods, r.Method)
			w.mu.Lock()
			read := w.read
			w.mu.Unlock()
			if want := min(len(methods), 2); r.Method == "notifications/progress" && len(methods) <= 2 && read < want {
				t.Errorf("the SDK has progress notification %d, and the connection counted %d", len(methods), read)
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.read != 2 {
		t.Errorf("%d progress notifications counted for the call (read %q); want 2", w.read, methods)
	}
}
