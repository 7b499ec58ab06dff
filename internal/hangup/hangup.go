// Package hangup tells when the other end of a connection goes away
// without a goroutine per connection: the daemon holds one connection per
// session that carries nothing until it ends (a session's GET stream, a
// shim's connection), and a goroutine parked in a read on each cost 2-4 KB
// of stack, twice over once the collector's pacing counts it. On Linux
// one goroutine watches them all (epoll); elsewhere each connection gets
// the goroutine it had.
package hangup

import (
	"net"
	"syscall"
)

// Watch calls gone once, when the peer of conn has closed its end or the
// connection failed; with data, also when the peer sends anything (a
// client that must send nothing more and does is treated as gone). gone
// runs on the watcher's goroutine and must not block. Call stop before
// closing conn; after stop returns, gone is not called unless it already
// was.
//
// Without data, what the peer sends is not read: it stays in the socket's
// buffer, where a connection that should carry nothing more leaves it.
func Watch(conn net.Conn, data bool, gone func()) (stop func()) {
	if rc := rawConn(conn); rc != nil {
		if stop, ok := watchRaw(rc, data, gone); ok {
			return stop
		}
	}
	return watchReading(conn, data, gone)
}

// rawConn is conn's file descriptor, through wrappers that give the
// connection they wrap (NetConn, as crypto/tls does).
func rawConn(conn net.Conn) syscall.RawConn {
	for range 8 {
		if sc, ok := conn.(syscall.Conn); ok {
			rc, err := sc.SyscallConn()
			if err != nil {
				return nil
			}
			return rc
		}
		w, ok := conn.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		conn = w.NetConn()
	}
	return nil
}

// watchReading is the portable watch: a goroutine that reads conn until
// it ends (or, with data, until its first byte).
func watchReading(conn net.Conn, data bool, gone func()) (stop func()) {
	stopped := make(chan struct{})
	go func() {
		var b [64]byte
		for {
			if n, err := conn.Read(b[:]); err != nil || (data && n > 0) {
				break
			}
		}
		select {
		case <-stopped:
		default:
			gone()
		}
	}()
	return func() {
		select {
		case <-stopped:
		default:
			close(stopped)
		}
	}
}
