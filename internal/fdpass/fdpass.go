// Package fdpass reads the descriptors passed over a unix socket
// (SCM_RIGHTS), for the stdio shim and the daemon.
//
// A received descriptor is close-on-exec from the moment it exists in
// this process: the daemon starts upstreams while other sessions' pipes
// arrive, and a child that inherited one could read or write another
// session's client. On Linux recvmsg sets the flag itself
// (MSG_CMSG_CLOEXEC); elsewhere the flag is set before syscall.ForkLock
// lets a fork happen (recv_other.go).
package fdpass

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/mcpgw/mcpgw/internal/rawio"
)

// OOBSize is room for the control message of up to four descriptors.
var OOBSize = syscall.CmsgSpace(4 * 4)

// Parse returns the descriptors in the control data oob, and makes them
// close-on-exec (a no-op for those recvmsg already made so).
func Parse(oob []byte) []int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for i := range msgs {
		if got, err := syscall.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, got...)
		}
	}
	for _, fd := range fds {
		syscall.CloseOnExec(fd)
	}
	return fds
}

// Close closes fds.
func Close(fds []int) {
	for _, fd := range fds {
		_ = syscall.Close(fd)
	}
}

// Reader reads conn's first message with the descriptors that came with
// it (up to size bytes of it), and returns a reader of everything conn
// sends from its start, and the descriptors. It honours conn's read
// deadline.
func Reader(conn *net.UnixConn, size int) (io.Reader, []int, error) {
	buf := make([]byte, size)
	n, fds, err := recv(conn, buf)
	if err != nil && n <= 0 || n < 0 {
		Close(fds)
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, nil, err
	}
	return io.MultiReader(bytes.NewReader(buf[:n]), rawio.Conn(conn)), fds, nil
}

// recv reads one message into buf, and the descriptors that came with
// it, close-on-exec. It waits on the runtime's poller, never in recvmsg:
// the socket is non-blocking.
func recv(conn *net.UnixConn, buf []byte) (n int, fds []int, err error) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return 0, nil, err
	}
	oob := make([]byte, OOBSize)
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		n, fds, rerr = recvmsg(int(fd), buf, oob)
		return !errors.Is(rerr, syscall.EAGAIN)
	})
	if err == nil {
		err = rerr
	}
	return n, fds, err
}
