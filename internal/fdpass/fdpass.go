// Package fdpass reads the descriptors passed over a unix socket
// (SCM_RIGHTS), for the stdio shim and the daemon.
package fdpass

import "syscall"

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
