package upstream

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeUnread is how many bytes written to the pipe f (either end) no one
// has read yet; -1 when it cannot tell.
func pipeUnread(f *os.File) int64 {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	if cerr := rc.Control(func(fd uintptr) {
		// TIOCINQ is FIONREAD; on a pipe either end answers.
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	}); cerr != nil {
		return -1
	}
	return int64(n)
}
