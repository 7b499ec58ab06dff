// Package fdpass reads the descriptors passed over a unix socket
// (SCM_RIGHTS), for the stdio shim and the daemon.
package fdpass

import (
	"bytes"
	"io"
	"net"
	"syscall"
)

// OOBSize is room for the control message of up to four descriptors.
var OOBSize = syscall.CmsgSpace(4 * 4)

// Parse returns the descriptors in the control data oob, close-on-exec: a
// process the receiver starts must never hold them.
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
// sends from its start, and the descriptors.
func Reader(conn *net.UnixConn, size int) (io.Reader, []int, error) {
	buf := make([]byte, size)
	oob := make([]byte, OOBSize)
	n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil && n <= 0 || n < 0 || oobn < 0 {
		// (A reset connection reads as n = -1.)
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, nil, err
	}
	return io.MultiReader(bytes.NewReader(buf[:n]), conn), Parse(oob[:oobn]), nil
}
