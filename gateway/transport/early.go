package transport

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Messages sent before the client listens. HTTP sessions answer in
// application/json (see sdkHandler), so everything else for the client —
// notifications, and the sampling, elicitation and roots requests of its
// calls — travels on the stream the client opens with a GET once it is
// initialized. Clients open it in the background (the TypeScript SDK
// does), so a session's first call can reach an upstream that asks for
// input, or change the session's tools, before that stream exists; the
// SDK then drops the message. EarlyEvents keeps what is sent to a stream
// not opened yet and replays it when the GET comes, and requests wait for
// that GET a while before they give up.

// earlyLimit and earlyBytes bound what one session keeps for its client
// before it listens.
const (
	earlyLimit = 256
	earlyBytes = 1 << 20
)

// errLive tells the SDK that a message is not kept: it is delivered live
// or not at all, as without a store.
var errLive = errors.New("not kept for replay")

// EarlyEvents is the SDK's mcp.EventStore for mcpgw's HTTP sessions. It
// keeps only messages for a session's standalone stream sent before the
// client first opened it.
type EarlyEvents struct {
	mu       sync.Mutex
	sessions map[string]*earlySession
	// closed, if set, is told (on a goroutine of its own) of each session
	// the SDK has closed.
	closed func(sessionID string)
}

// earlySession is what EarlyEvents knows of one HTTP session.
type earlySession struct {
	listening chan struct{} // closed when the client first opens its stream
	open      bool
	kept      [][]byte
	size      int
}

var _ mcp.EventStore = (*EarlyEvents)(nil)

// NewEarlyEvents returns an empty store; closed, if not nil, is told of
// each session the SDK has closed.
func NewEarlyEvents(closed func(sessionID string)) *EarlyEvents {
	return &EarlyEvents{sessions: make(map[string]*earlySession), closed: closed}
}

// session returns the state of session id, creating it. e.mu is held.
func (e *EarlyEvents) session(id string) *earlySession {
	es := e.sessions[id]
	if es == nil {
		es = &earlySession{listening: make(chan struct{})}
		e.sessions[id] = es
	}
	return es
}

// Open implements mcp.EventStore; streams need nothing set up.
func (e *EarlyEvents) Open(context.Context, string, string) error { return nil }

// Append keeps data when it is for the standalone stream of a session
// whose client has not opened it yet.
func (e *EarlyEvents) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	if streamID != "" || data == nil {
		return errLive
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	es := e.session(sessionID)
	if es.open {
		return errLive
	}
	if len(es.kept) >= earlyLimit || es.size+len(data) > earlyBytes {
		return fmt.Errorf("mcpgw: %d messages wait for a client that has not opened its stream", len(es.kept))
	}
	es.kept = append(es.kept, data)
	es.size += len(data)
	return nil
}

// After replays, when the client first opens its standalone stream, what
// was kept for it; any other stream has nothing kept.
func (e *EarlyEvents) After(_ context.Context, sessionID, streamID string, _ int) iter.Seq2[[]byte, error] {
	var kept [][]byte
	if streamID == "" {
		e.mu.Lock()
		es := e.session(sessionID)
		if !es.open {
			es.open = true
			close(es.listening)
		}
		kept, es.kept, es.size = es.kept, nil, 0
		e.mu.Unlock()
	}
	return func(yield func([]byte, error) bool) {
		for _, d := range kept {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// SessionClosed forgets the session and says it has ended. The SDK calls
// it as the session's connection closes, once no handler of the session
// runs any more, with the connection's locks held: what follows runs on
// a goroutine of its own.
func (e *EarlyEvents) SessionClosed(_ context.Context, sessionID string) error {
	e.Forget(sessionID)
	if e.closed != nil {
		go e.closed(sessionID)
	}
	return nil
}

// Forget forgets the session.
func (e *EarlyEvents) Forget(sessionID string) {
	e.mu.Lock()
	delete(e.sessions, sessionID)
	e.mu.Unlock()
}

// Listening returns a channel closed once the client of session id has
// opened its standalone stream.
func (e *EarlyEvents) Listening(id string) <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.session(id).listening
}

// Kept is how many messages wait for the client of session id to open
// its stream.
func (e *EarlyEvents) Kept(id string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if es := e.sessions[id]; es != nil {
		return len(es.kept)
	}
	return 0
}
