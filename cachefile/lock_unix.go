//go:build unix

package cachefile

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path (created 0600 if missing) and
// returns its release. The lock file is never removed: removing it would let
// two writers hold locks on different inodes.
func lockFile(path string) (unlock func(), err error) {
	fh, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(fh.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		fh.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(fh.Fd()), syscall.LOCK_UN)
		fh.Close()
	}, nil
}
