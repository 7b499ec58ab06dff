package deploy

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// LockFile takes an flock on path; wait blocks until it is free.
func LockFile(path string, wait bool) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// ListenSocket takes the single-instance lock of the socket path (path +
// ".lock": one socket never gets two daemons), replaces a stale socket
// file, listens with mode 0600 and advertises the socket (Advertise).
// release closes the listener, withdraws the advertisement and releases
// the lock, in that order, once however often it is called: call it after
// everything serving the socket has stopped.
func ListenSocket(path string) (ln net.Listener, release func(), err error) {
	dir := filepath.Dir(path)
	if err := EnsurePrivateDir(dir); err != nil {
		return nil, nil, err
	}
	lock := path + ".lock"
	unlock, err := LockFile(lock, false)
	if err != nil {
		return nil, nil, fmt.Errorf("another mcpgw daemon is already running for %s (its lock %s is held)", path, lock)
	}
	_ = os.Remove(path) // we hold the lock, so any socket file left is stale
	ln, err = net.Listen("unix", path)
	if err != nil {
		unlock()
		return nil, nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		unlock()
		return nil, nil, err
	}
	withdraw, err := Advertise(path)
	if err != nil {
		withdraw = func() {} // the socket works; only trimmed clients miss it
	}
	var once sync.Once
	return ln, func() { once.Do(func() { ln.Close(); withdraw(); unlock() }) }, nil
}
