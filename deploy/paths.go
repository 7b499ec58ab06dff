package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// DefaultListen is the daemon's default HTTP address (documented in the
// README, and scraped by deploy/prometheus).
const DefaultListen = "127.0.0.1:7332"

// runUser is the parent of systemd's per-user runtime directories; a
// variable so tests can point it elsewhere.
var runUser = "/run/user"

// RuntimeDir is where the daemon's socket and locks live:
// $XDG_RUNTIME_DIR/mcpgw, else /run/user/UID/mcpgw when that directory is
// ours (clients that start `mcpgw stdio` with a trimmed environment still
// find a daemon run by systemd), else a per-user directory under the temp
// directory.
func RuntimeDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "mcpgw")
	}
	uid := os.Getuid()
	if d := filepath.Join(runUser, strconv.Itoa(uid)); ownedDir(d, uid) {
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

// DefaultSocket is the daemon's unix socket. With XDG_RUNTIME_DIR set (as
// under systemd, and in tests that isolate a daemon) it is under it.
// Without it, a daemon that advertised its socket (see Advertise) is found
// there, whatever this process's TMPDIR; else RuntimeDir's.
func DefaultSocket() string {
	own := filepath.Join(RuntimeDir(), "mcpgw.sock")
	if os.Getenv("XDG_RUNTIME_DIR") != "" {
		return own
	}
	if _, err := os.Lstat(own); err == nil {
		return own
	}
	if adv := Advertised(); adv != "" && CheckSocketOwner(adv) == nil {
		return adv
	}
	return own
}

// StateDir holds the log of a daemon started by the shim, the trust list,
// sessions' state and the advertised socket: $XDG_STATE_HOME/mcpgw, else
// ~/.local/state/mcpgw.
func StateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "mcpgw")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return RuntimeDir()
	}
	return filepath.Join(home, ".local", "state", "mcpgw")
}

// SessionDir is where the daemon keeps shim sessions' state across
// restarts.
func SessionDir() string { return filepath.Join(StateDir(), "sessions") }

// ResultsDir keeps tool results too big to show whole (0600 files,
// removed after a day or past a size; see gateway/spill).
func ResultsDir() string { return filepath.Join(StateDir(), "results") }

// AuditPath is the audit log: one JSON line per tool call and approval.
func AuditPath() string { return filepath.Join(StateDir(), "audit.jsonl") }

// AuditKeyPath holds the key of the audit log's argument digests.
func AuditKeyPath() string { return filepath.Join(StateDir(), "audit.key") }

// advertFile names the file in which a daemon advertises its socket. It is
// under the home directory, which every client of the user shares however
// trimmed its environment.
func advertFile() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".local", "state", "mcpgw", "socket")
}

// Advertise records sock as the running daemon's socket; the returned
// function withdraws it (if it still names sock).
func Advertise(sock string) (withdraw func(), err error) {
	f := advertFile()
	if f == "" {
		return func() {}, nil
	}
	if err := EnsurePrivateDir(filepath.Dir(f)); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(sock)
	if err != nil {
		return nil, err
	}
	tmp := f + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, []byte(abs+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, f); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return func() {
		if Advertised() == abs {
			os.Remove(f)
		}
	}, nil
}

// Advertised is the socket a daemon advertised, or "".
func Advertised() string {
	f := advertFile()
	if f == "" {
		return ""
	}
	data, err := os.ReadFile(f)
	if err != nil {
		return ""
	}
	p := strings.TrimSpace(string(data))
	if !filepath.IsAbs(p) {
		return ""
	}
	return p
}

// EnsurePrivateDir creates dir 0700 if needed and checks that it belongs to
// us and is not open to others: the socket inside it is the daemon's door.
func EnsurePrivateDir(dir string) error {
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

// CheckSocketOwner refuses a socket that is not ours or is open to others.
func CheckSocketOwner(path string) error {
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
