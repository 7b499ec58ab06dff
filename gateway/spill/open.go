package spill

import (
	"errors"
	"os"
)

// errNotRegular: the name of a saved result is something else (a link
// someone planted in the directory, a FIFO), which is never read.
var errNotRegular = errors.New("not a saved result: not a regular file")

// checkRegular returns f if it is a regular file; else it closes it.
func checkRegular(f *os.File) (*os.File, error) {
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
