//go:build unix

package registry

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivate refuses a trust store that someone other than the user
// could have written.
func checkPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("reading trust store: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("trust store %s belongs to uid %d, not to you (uid %d); refusing it", path, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("trust store %s has mode %v, writable by others; refusing it (chmod 600 %s)", path, fi.Mode().Perm(), path)
	}
	return nil
}
