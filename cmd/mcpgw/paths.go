package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// runtimeDir is where the daemon's socket and locks live:
// $XDG_RUNTIME_DIR/mcpgw, else /run/user/UID/mcpgw when that directory is
// ours (clients that start `mcpgw stdio` with a trimmed environment still
// find a daemon run by systemd), else a per-user directory under the temp
// dir.
func runtimeDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "mcpgw")
	}
	uid := os.Getuid()
	if d := filepath.Join("/run/user", strconv.Itoa(uid)); ownedDir(d, uid) {
		return filepath.Join(d, "mcpgw")
	}
	return filepath.Join(os.TempDir(), "mcpgw-"+strconv.Itoa(uid))
}

func ownedDir(dir string, uid int) bool {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == uid
}

// defaultSocket is the daemon's unix socket for the stdio shim.
func defaultSocket() string { return filepath.Join(runtimeDir(), "mcpgw.sock") }

// stateDir holds the log of a daemon started by the shim.
func stateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "mcpgw")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return runtimeDir()
	}
	return filepath.Join(home, ".local", "state", "mcpgw")
}

// ensurePrivateDir creates dir 0700 if needed and checks that it belongs to
// us and is not open to others: the socket inside it is the daemon's door.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d)", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("%s is open to other users and cannot be fixed: %w", dir, err)
		}
	}
	return nil
}

// checkSocketOwner refuses a socket that is not ours or is open to others.
func checkSocketOwner(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s is not a socket", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("socket %s belongs to uid %d, not to you (uid %d)", path, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("socket %s has mode %v; want 0600", path, fi.Mode().Perm())
	}
	return nil
}

// sessionDir is where the daemon keeps shim sessions' state across
// restarts; none for a private --stdio session.
func sessionDir(private bool) string {
	if private {
		return ""
	}
	return filepath.Join(stateDir(), "sessions")
}
