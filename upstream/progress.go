package upstream

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call's progress notifications reach its caller through the SDK, which
// hands a call its result on the goroutine that reads the connection and
// notifications to another, in order: a notification the server sent just
// before its result can still be on its way when the result is here. The
// result waits for it. On a stdio upstream the connection reads its own
// lines (lineConn) and counts the notifications it reads for each call, so
// the result waits exactly until those are delivered; on another the
// count is unknown, and the result waits progressSettle.

// progressSettle bounds how long a call that reports progress waits, after
// its result, for its progress notifications still being delivered.
const progressSettle = 50 * time.Millisecond

// progressTokens numbers the progress tokens of calls, daemon-wide.
var progressTokens atomic.Int64

// progressWatches are an upstream's calls that report progress, by
// progress token.
type progressWatches struct {
	mu sync.Mutex
	m  map[string]*progressWatch
}

// progressWatch is one call's progress: where its notifications go, and
// how many the connection read and the SDK delivered.
type progressWatch struct {
	f    func(context.Context, *mcp.ProgressNotificationParams)
	wake chan struct{} // a delivery happened (buffered, one)

	mu              sync.Mutex
	read, delivered int
}

// watch registers f for the progress of one call; done forgets it.
func (ws *progressWatches) watch(f func(context.Context, *mcp.ProgressNotificationParams)) (token string, w *progressWatch, done func()) {
	token = "mcpgw-" + strconv.FormatInt(progressTokens.Add(1), 10)
	w = &progressWatch{f: f, wake: make(chan struct{}, 1)}
	ws.mu.Lock()
	if ws.m == nil {
		ws.m = make(map[string]*progressWatch)
	}
	ws.m[token] = w
	ws.mu.Unlock()
	return token, w, func() {
		ws.mu.Lock()
		delete(ws.m, token)
		ws.mu.Unlock()
	}
}

func (ws *progressWatches) get(token string) *progressWatch {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.m[token]
}

// noteRead counts a progress notification for token read from the
// connection, before the SDK has it.
func (ws *progressWatches) noteRead(token string) {
	if w := ws.get(token); w != nil {
		w.mu.Lock()
		w.read++
		w.mu.Unlock()
	}
}

// deliver routes an upstream progress notification to its call.
func (ws *progressWatches) deliver(ctx context.Context, p *mcp.ProgressNotificationParams) {
	if p == nil {
		return
	}
	token, _ := p.ProgressToken.(string)
	w := ws.get(token)
	if w == nil {
		return
	}
	w.f(ctx, p)
	w.mu.Lock()
	w.delivered++
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// settle returns once every notification read so far has been delivered,
// or after limit. The call's result has been read: no notification
// before it is still to be counted.
func (w *progressWatch) settle(limit time.Duration) {
	var timer *time.Timer
	for {
		w.mu.Lock()
		caught := w.delivered >= w.read
		w.mu.Unlock()
		if caught {
			break
		}
		if timer == nil {
			timer = time.NewTimer(limit)
			defer timer.Stop()
		}
		select {
		case <-w.wake:
		case <-timer.C:
			return
		}
	}
}
