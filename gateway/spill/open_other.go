//go:build !unix

package spill

import "os"

// openResult opens the saved result at path for reading, refusing a link
// and anything but a regular file (checked before and after the open).
func openResult(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return checkRegular(f)
}
