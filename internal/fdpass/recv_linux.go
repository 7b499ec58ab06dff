package fdpass

import "syscall"

// recvmsg reads a message from the non-blocking socket fd; the kernel
// makes the descriptors that come with it close-on-exec as it installs
// them (MSG_CMSG_CLOEXEC), so no fork ever sees them without the flag.
func recvmsg(fd int, buf, oob []byte) (n int, fds []int, err error) {
	for {
		var oobn int
		n, oobn, _, _, err = syscall.Recvmsg(fd, buf, oob, syscall.MSG_CMSG_CLOEXEC)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, nil, err
		}
		return n, Parse(oob[:oobn]), nil
	}
}
