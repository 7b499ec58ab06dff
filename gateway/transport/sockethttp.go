package transport

import (
	"bufio"
	"net"
	"sync"
	"sync/atomic"
)

// The unix socket also serves HTTP: a connection whose first byte is not
// a shim's handshake (a JSON object) is handed to the daemon's HTTP
// server, with the same handler as the TCP listener. The CLI reaches the
// daemon this way whatever became of its TCP port (taken by another
// program, or not configured), and never mistakes another program on
// that port for mcpgw. Who may connect is the socket file's business
// (0600, in a 0700 directory): the connection is the owner's.

// SocketHTTP is the listener of the HTTP connections the unix socket
// receives: the caller serves it with the daemon's http.Server. Until it
// is asked for, such connections are refused as bad handshakes.
func (t *Transports) SocketHTTP() net.Listener {
	t.socketHTTP.served.Store(true)
	return t.socketHTTP
}

// socketListener is a net.Listener of the connections handed to it.
type socketListener struct {
	addr   net.Addr
	conns  chan net.Conn
	served atomic.Bool // someone serves it
	done   chan struct{}
	once   sync.Once
}

func newSocketListener() *socketListener {
	return &socketListener{addr: &net.UnixAddr{Net: "unix", Name: "mcpgw-socket"}, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *socketListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *socketListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *socketListener) Addr() net.Addr { return l.addr }

// hand gives c to the HTTP server; false if none serves the listener.
func (l *socketListener) hand(c net.Conn) bool {
	if !l.served.Load() {
		return false
	}
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

// socketConn is an HTTP connection on the unix socket, whose first bytes
// were read to tell it from a shim's.
type socketConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *socketConn) Read(b []byte) (int, error) { return c.r.Read(b) }
