//go:build unix

package spill

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadRefusesWhatIsNotASavedFile: a link planted under a saved
// result's name (to a file of the user's, or to another saved result) and
// a FIFO are refused, not followed or waited on; the result's own file
// reads as before.
func TestReadRefusesWhatIsNotASavedFile(t *testing.T) {
	dir := t.TempDir()
	s := New(filepath.Join(dir, "results"), 0, 0)
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	mine, err := s.Save([]byte("mine"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	if data, _, err := s.Read(mine.ID, 0, 100); err != nil || string(data) != "mine" {
		t.Fatalf("reading a saved result: %q, %v", data, err)
	}
	other, err := s.Save([]byte("OTHER"), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(s.Dir(), "r-00000000000000aa.txt")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	link2 := filepath.Join(s.Dir(), "r-00000000000000bb.txt")
	if err := os.Symlink(other.Path, link2); err != nil {
		t.Fatal(err)
	}
	// A saved result's file replaced by a link.
	if err := os.Remove(mine.Path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, mine.Path); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(s.Dir(), "r-00000000000000cc.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{filepath.Base(link), filepath.Base(link2), mine.ID, filepath.Base(fifo)} {
		data, _, err := s.Read(id, 0, 100)
		if err == nil || len(data) > 0 || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Read(%s) = %q, %v; want it refused", id, data, err)
		}
	}
}
