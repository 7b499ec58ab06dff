package deploy

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInstallToken: the install token is made once, 256 bits in hex in a
// 0600 file, and read back the same by every later call.
func TestInstallToken(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	first, err := InstallToken()
	if err != nil || len(first) != 64 {
		t.Fatalf("InstallToken: %q, %v", first, err)
	}
	fi, err := os.Stat(TokenPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the token's file: %v, %v", fi, err)
	}
	if again, err := InstallToken(); err != nil || again != first {
		t.Errorf("second InstallToken: %q, %v; want %q", again, err, first)
	}
	if entries, _ := os.ReadDir(filepath.Dir(TokenPath())); len(entries) != 1 {
		t.Errorf("the state directory holds %d files, want the token alone", len(entries))
	}
}
