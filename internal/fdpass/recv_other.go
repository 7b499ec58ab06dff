//go:build unix && !linux

package fdpass

import "syscall"

// recvmsg reads a message from the non-blocking socket fd. Without
// MSG_CMSG_CLOEXEC (darwin) the descriptors exist without the flag until
// Parse sets it; syscall.ForkLock, which os/exec holds while it forks,
// keeps a fork out of that window (as syscall.Socket's callers do).
func recvmsg(fd int, buf, oob []byte) (n int, fds []int, err error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	for {
		var oobn int
		n, oobn, _, _, err = syscall.Recvmsg(fd, buf, oob, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, nil, err
		}
		return n, Parse(oob[:oobn]), nil
	}
}
