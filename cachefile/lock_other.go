//go:build !unix

package cachefile

// lockFile is a no-op where flock does not exist: writers in this process
// are still serialised by File's mutex, and every write is an atomic rename.
func lockFile(path string) (unlock func(), err error) { return func() {}, nil }
