package gateway

// What a session sends its client outside answers to its requests, and
// how it ends when the client no longer reads.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// The messages waiting for one session's client are bounded in number
// and in size.
const (
	outboxSize  = 1024
	outboxBytes = 8 << 20
)

// outbox carries the messages fanned out to many sessions (upstream log
// messages, resource updates) to one, sent by the session's own goroutine,
// started with the first (see post). Safe for concurrent use.
type outbox struct {
	once    sync.Once
	ch      chan outboxItem
	bytes   atomic.Int64 // the size of what waits in ch
	dropped atomic.Int64 // messages that found it full
}

// outboxItem is a message waiting in a session's outbox: how to send it,
// and about how large it is.
type outboxItem struct {
	send func(context.Context)
	size int64
}

// post queues send, a message of about size bytes, for the session's
// client. Each session sends its own in order, so a client that does not
// read holds up only itself (the SDK's writes wait for the client,
// whatever their context says); when its queue is full, the message is
// dropped. It reports whether send was queued.
func (ss *session) post(size int, send func(context.Context)) bool {
	ss.out.once.Do(func() {
		ss.out.ch = make(chan outboxItem, outboxSize)
		go ss.sendOutbox()
	})
	n := int64(size)
	if ss.out.bytes.Add(n) <= outboxBytes {
		select {
		case ss.out.ch <- outboxItem{send, n}:
			return true
		default:
		}
	}
	ss.out.bytes.Add(-n)
	if ss.gw.metrics != nil {
		ss.gw.metrics.dropped.Inc()
	}
	if ss.out.dropped.Add(1) == 1 {
		ss.gw.log.Warn("a client is not taking the messages sent to it; dropping them", "session", ss.key)
	}
	return false
}

// sendOutbox sends the session's queued messages until the session ends.
func (ss *session) sendOutbox() {
	for {
		select {
		case <-ss.ctx.Done():
			return
		case it := <-ss.out.ch:
			ctx, cancel := context.WithTimeout(ss.ctx, 5*time.Second)
			it.send(ctx)
			cancel()
			ss.out.bytes.Add(-it.size)
		}
	}
}

// closeGrace is how long closing a session waits for what it is writing
// to reach its client before it hangs up (see session.hangup).
const closeGrace = 2 * time.Second

func (ss *session) close() {
	ss.cancel()
	sess := ss.conn.session()
	if sess == nil {
		return
	}
	if ss.hangup == nil {
		sess.Close()
		return
	}
	// The SDK's Close waits for every message being written; a client
	// that has stopped reading would hold it, and the daemon's shutdown,
	// for ever.
	done := make(chan struct{})
	go func() {
		defer close(done)
		sess.Close()
	}()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		ss.gw.log.Warn("a client did not read what its session was sending; hanging up", "session", ss.key)
		ss.hangup()
		<-done
	}
}
