package runloop

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/rawio"
)

// maxHTTPConns bounds the HTTP connections open at once: far above what
// agent sessions on one machine need, far below what exhausts memory.
const maxHTTPConns = 512

// httpIdleTimeout closes a keep-alive connection unused that long.
const httpIdleTimeout = 20 * time.Second

// limitListener accepts at most n connections at once. At the limit, it
// makes room by closing the connection that has waited longest without
// sending a whole request, or idle between requests (see connState); only
// when every connection is busy with a request does Accept wait for one to
// end. So clients that open connections and stall cannot lock the others
// out.
func limitListener(l net.Listener, n int) *limitedListener {
	return &limitedListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{}), conns: map[*limitedConn]struct{}{}}
}

type limitedListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once

	mu    sync.Mutex
	conns map[*limitedConn]struct{}
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	default:
		l.evict()
		select {
		case l.sem <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	lc := &limitedConn{Conn: rawio.Conn(c), accepted: time.Now()}
	lc.release = func() {
		l.mu.Lock()
		delete(l.conns, lc)
		l.mu.Unlock()
		<-l.sem
	}
	l.mu.Lock()
	l.conns[lc] = struct{}{}
	l.mu.Unlock()
	return lc, nil
}

// evict closes the oldest connection that holds a slot without a request
// in progress, if there is one.
func (l *limitedListener) evict() {
	l.mu.Lock()
	var oldest *limitedConn
	for c := range l.conns {
		if st := http.ConnState(c.state.Load()); st != http.StateNew && st != http.StateIdle {
			continue
		}
		if oldest == nil || c.accepted.Before(oldest.accepted) {
			oldest = c
		}
	}
	l.mu.Unlock()
	if oldest != nil {
		oldest.Close()
	}
}

// connState is the HTTP server's ConnState hook: it tells the listener
// which connections are in a request.
func connState(c net.Conn, st http.ConnState) {
	if lc, ok := c.(*limitedConn); ok {
		lc.state.Store(int32(st))
	}
}

type limitedConn struct {
	net.Conn
	accepted time.Time
	state    atomic.Int32 // http.ConnState; StateNew (0) until the server says otherwise
	once     sync.Once
	release  func()
}

// NetConn is the connection c wraps (as crypto/tls's), for what needs its
// descriptor: package hangup watches held streams on it.
func (c *limitedConn) NetConn() net.Conn { return c.Conn }

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
