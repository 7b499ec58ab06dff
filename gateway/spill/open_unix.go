//go:build unix

package spill

import (
	"os"
	"syscall"
)

// openResult opens the saved result at path for reading, refusing a
// link (O_NOFOLLOW) and anything but a regular file: a FIFO is opened
// without waiting for a writer (O_NONBLOCK), then refused.
func openResult(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok && pe.Err == syscall.ELOOP {
			return nil, errNotRegular
		}
		return nil, err
	}
	return checkRegular(f)
}
