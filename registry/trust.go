package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The trust store lists the directories whose project files (.pi/mcp.json,
// .mcp.json, and the project files of imports) may start servers. A
// project file is code from whoever wrote the repository: nothing in it runs
// until the user trusts its directory, with `mcpgw trust DIR`. Trusting a
// directory trusts everything below it.
//
// The store is mcpgw state, not configuration: it lives in
// $XDG_STATE_HOME/mcpgw/trust.json (default ~/.local/state/mcpgw), away
// from config files that are shared, synced or committed. It is
//
//	{"version": 1, "trusted": ["/home/u/src/project", ...]}
//
// with directories stored as real paths (symbolic links resolved when they
// were trusted). Because it decides what runs, a store that another user
// could have written (not owned by the user, or group- or world-writable)
// is refused.

// TrustStore is a loaded trust store. A nil *TrustStore trusts nothing.
// It is not safe for concurrent modification; reading is.
type TrustStore struct {
	path string
	dirs []string // real, clean, absolute; sorted
	raw  []byte   // the file as read; nil when it did not exist
}

type trustFile struct {
	Version int      `json:"version"`
	Trusted []string `json:"trusted"`
}

// DefaultTrustPath returns $XDG_STATE_HOME/mcpgw/trust.json, or
// ~/.local/state/mcpgw/trust.json when XDG_STATE_HOME is unset or not
// absolute.
func DefaultTrustPath() string { return defaultTrustPath(nil) }

func defaultTrustPath(opts *LoadOptions) string {
	dir, _ := opts.lookup()("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(opts.home(), ".local", "state")
	}
	return filepath.Join(dir, "mcpgw", "trust.json")
}

// LoadTrust reads the trust store at path. A missing file is an empty
// store. A store that does not parse, or that someone else could have
// written, is an error.
func LoadTrust(path string) (*TrustStore, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	t := &TrustStore{path: path}
	data, err := readConfigFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading trust store: %w", err)
	}
	if err := checkPrivate(path); err != nil {
		return nil, err
	}
	t.raw = data
	if len(bytes.TrimSpace(data)) == 0 {
		return t, nil
	}
	var f trustFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%s: version %d is not supported (want 1)", path, f.Version)
	}
	for i, d := range f.Trusted {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("%s: %w", path, &ValidationError{Field: fmt.Sprintf("trusted[%d]", i), Value: d, Err: fmt.Errorf("%q is not an absolute path", d)})
		}
		t.dirs = append(t.dirs, filepath.Clean(d))
	}
	slices.Sort(t.dirs)
	t.dirs = slices.Compact(t.dirs)
	return t, nil
}

// Path returns the file the store was loaded from ("" for an empty store
// that has none).
func (t *TrustStore) Path() string {
	if t == nil {
		return ""
	}
	return t.path
}

// Dirs returns the trusted directories, sorted.
func (t *TrustStore) Dirs() []string {
	if t == nil {
		return nil
	}
	return slices.Clone(t.dirs)
}

// Trusted reports whether dir is a trusted directory or lies below one.
// dir is compared by its real path, so a symbolic link into a trusted
// directory is trusted and one out of it is not.
func (t *TrustStore) Trusted(dir string) bool {
	return t.TrustedBy(dir) != ""
}

// TrustedBy returns the trusted directory that covers dir, or "".
func (t *TrustStore) TrustedBy(dir string) string {
	if t == nil || len(t.dirs) == 0 || dir == "" {
		return ""
	}
	real := realDir(dir)
	for _, d := range t.dirs {
		if within(d, real) {
			return d
		}
	}
	return ""
}

// Add trusts dir (resolved to its real path, which must be an existing
// directory). It reports false when dir was already covered.
func (t *TrustStore) Add(dir string) (bool, error) {
	real, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	if real, err = filepath.EvalSymlinks(real); err != nil {
		return false, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return false, fmt.Errorf("%s is not a directory", dir)
	}
	if t.TrustedBy(real) != "" {
		return false, nil
	}
	t.dirs = append(t.dirs, real)
	slices.Sort(t.dirs)
	return true, nil
}

// Remove stops trusting dir itself. It reports false when dir was not in
// the store; it may still be covered by a trusted parent (see TrustedBy).
func (t *TrustStore) Remove(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	n := len(t.dirs)
	t.dirs = slices.DeleteFunc(t.dirs, func(d string) bool { return d == filepath.Clean(abs) || d == realDir(abs) })
	return len(t.dirs) != n
}

// Save writes the store to its file atomically (a temporary file renamed
// over it), mode 0600, creating its directory (0700) if needed.
func (t *TrustStore) Save() error {
	if t.path == "" {
		return errors.New("trust store has no file")
	}
	data, err := json.MarshalIndent(trustFile{Version: 1, Trusted: append([]string{}, t.dirs...)}, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	dir := filepath.Dir(t.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving trust store: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".trust-*.json")
	if err != nil {
		return fmt.Errorf("saving trust store: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("saving trust store: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("saving trust store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving trust store: %w", err)
	}
	if err := os.Rename(tmp.Name(), t.path); err != nil {
		return fmt.Errorf("saving trust store: %w", err)
	}
	t.raw = data
	return nil
}

// realDir returns dir absolute and clean with symbolic links resolved in
// the part of it that exists.
func realDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	rest := ""
	for p := abs; ; {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// within reports whether path is dir or below it.
func within(dir, path string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}

// Trust adds dir to the store and saves it; the message says what changed.
func (t *TrustStore) Trust(dir string) (string, error) {
	if by := t.TrustedBy(dir); by != "" {
		return fmt.Sprintf("%s is already trusted (through %s)", dir, by), nil
	}
	if _, err := t.Add(dir); err != nil {
		return "", fmt.Errorf("trusting %s: %w", dir, err)
	}
	if err := t.Save(); err != nil {
		return "", err
	}
	return fmt.Sprintf("trusted %s: its project MCP servers may now start (store %s)", t.TrustedBy(dir), t.Path()), nil
}

// Untrust removes dir from the store and saves it; the message says what
// changed. A directory trusted only through a parent is an error naming
// the parent.
func (t *TrustStore) Untrust(dir string) (string, error) {
	if !t.Remove(dir) {
		if by := t.TrustedBy(dir); by != "" {
			return "", fmt.Errorf("%s is not trusted itself but through %s; run: mcpgw untrust %s", dir, by, by)
		}
		abs, _ := filepath.Abs(dir)
		return abs + " was not trusted", nil
	}
	if err := t.Save(); err != nil {
		return "", err
	}
	if by := t.TrustedBy(dir); by != "" {
		return fmt.Sprintf("untrusted %s, but it is still trusted through %s", dir, by), nil
	}
	return fmt.Sprintf("untrusted %s: its project MCP servers no longer start", dir), nil
}

// Describe says whether dir's project servers may start, and through
// which trusted directory.
func (t *TrustStore) Describe(dir string) string {
	by := t.TrustedBy(dir)
	switch by {
	case "":
		return "not trusted: its servers are not started (mcpgw trust " + dir + ")"
	case dir:
		return "trusted"
	}
	return "trusted (through " + by + ")"
}

// openTrust loads the trust store the options name. One that cannot be
// used trusts nothing (it does not stop the user's own servers): its
// error is returned as text, and its bytes, as far as they can be read,
// still count in the config's hash, so that fixing it reloads.
func openTrust(opts *LoadOptions) (*TrustStore, string) {
	if opts == nil || opts.TrustFile == "" {
		return &TrustStore{}, ""
	}
	t, err := LoadTrust(opts.TrustFile)
	if err == nil {
		return t, ""
	}
	path, _ := filepath.Abs(opts.TrustFile)
	t = &TrustStore{path: path}
	t.raw, _ = readConfigFile(path) // bounded: the file may be a FIFO
	return t, err.Error()
}
