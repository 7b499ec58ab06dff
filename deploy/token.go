package deploy

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrTokenArg is the refusal of a token given on the command line.
var ErrTokenArg = errors.New("a token on the command line is readable by every local user (ps, /proc/PID/cmdline); put it in a file (--token-file FILE, mode 0600) or in $MCPGW_TOKEN")

// TokenPath is the per-install token's file. Where the daemon cannot tell
// which user a loopback client runs as (macOS), HTTP clients must present
// it; the CLI reads it, the daemon makes it.
func TokenPath() string { return filepath.Join(StateDir(), "token") }

// InstallToken returns the per-install token, made (256 random bits, in
// hex, in a file of mode 0600 in a private directory) if missing.
func InstallToken() (string, error) {
	path := TokenPath()
	if tok, err := ReadToken(path); err == nil {
		return tok, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := EnsurePrivateDir(filepath.Dir(path)); err != nil {
		return "", fmt.Errorf("making the install token: %w", err)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".token-*")
	if err != nil {
		return "", fmt.Errorf("making the install token: %w", err)
	}
	_, werr := tmp.WriteString(tok + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		// A link, not a rename: of two daemons starting at once, both
		// end up with the one token that was there first.
		if werr = os.Link(tmp.Name(), path); errors.Is(werr, fs.ErrExist) {
			os.Remove(tmp.Name())
			return ReadToken(path)
		}
	}
	os.Remove(tmp.Name())
	if werr != nil {
		return "", fmt.Errorf("making the install token: %w", werr)
	}
	return tok, nil
}

// ReadToken reads a bearer token from a file (--token-file, the install
// token): its content without surrounding space. An empty file is an
// error, not "no token".
func ReadToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("the token file %s is empty", path)
	}
	return tok, nil
}
