package spill

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSaveAndRead(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "results"), 0, 0)
	text := strings.Repeat("0123456789", 1000)
	saved, err := s.Save([]byte(text), "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(saved.ID, ".txt") || saved.Size != len(text) || filepath.Dir(saved.Path) != s.Dir() {
		t.Errorf("saved = %+v", saved)
	}
	if info, err := os.Stat(saved.Path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("file mode: %v %v", info.Mode(), err)
	}
	data, size, err := s.Read(saved.ID, 9995, 100)
	if err != nil || string(data) != "56789" || size != 10000 {
		t.Errorf("Read at the end = %q, %d, %v", data, size, err)
	}
	data, _, _ = s.Read(saved.ID, 10, 5)
	if string(data) != "01234" {
		t.Errorf("Read(10, 5) = %q", data)
	}
	if _, _, err := s.Read(saved.ID, 10001, 5); err == nil {
		t.Error("reading past the end: no error")
	}
	for _, bad := range []string{"../x", "r-0123456789abcdef.txt/../../etc/passwd", "r-zz.txt", "", "r-0123456789abcdef.txt"} {
		if _, _, err := s.Read(bad, 0, 10); !errors.Is(err, ErrNotFound) {
			t.Errorf("Read(%q): %v, want ErrNotFound", bad, err)
		}
	}
	png, _ := s.Save([]byte{0x89, 'P', 'N', 'G'}, "image/png")
	wav, _ := s.Save([]byte("RIFF"), "audio/x-unknown-thing")
	if !strings.HasSuffix(png.ID, ".png") || !strings.HasSuffix(wav.ID, ".bin") {
		t.Errorf("extensions: %s %s", png.ID, wav.ID)
	}
}

func TestSweep(t *testing.T) {
	s := New(t.TempDir(), time.Hour, 1000)
	var ids []string
	for i := range 4 {
		saved, err := s.Save([]byte(strings.Repeat("x", 100)), "")
		if err != nil {
			t.Fatal(err)
		}
		// Oldest first: the first is past the age limit.
		age := time.Duration(4-i) * 20 * time.Minute
		if i == 0 {
			age = 2 * time.Hour
		}
		mod := time.Now().Add(-age)
		if err := os.Chtimes(saved.Path, mod, mod); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, saved.ID)
	}
	os.WriteFile(filepath.Join(s.Dir(), "notes.txt"), []byte("not ours"), 0o600)
	s.SetLimits(time.Hour, 250)
	s.Sweep(ids[3])
	var left []string
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(s.Dir(), id)); err == nil {
			left = append(left, id)
		}
	}
	// The old one goes for its age; of the 300 bytes left the oldest goes
	// to fit 250.
	if len(left) != 2 || left[0] != ids[2] || left[1] != ids[3] {
		t.Errorf("left %v of %v", left, ids)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "notes.txt")); err != nil {
		t.Error("Sweep removed a file it did not write")
	}
}

// The size limit holds on disk at every save: the oldest results go
// before a new one is written, and one bigger than the limit is refused.
func TestSaveKeepsTheLimit(t *testing.T) {
	s := New(t.TempDir(), time.Hour, 250)
	// A result left by an earlier daemon counts too.
	old := filepath.Join(s.Dir(), "r-00000000000000aa.txt")
	if err := os.WriteFile(old, []byte(strings.Repeat("o", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute)
	os.Chtimes(old, past, past)
	var ids []string
	for i := range 5 {
		saved, err := s.Save([]byte(strings.Repeat("x", 100)), "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, saved.ID)
		if n := dirBytes(t, s.Dir()); n > 250 {
			t.Fatalf("after save %d the directory holds %d bytes, over the limit of 250", i, n)
		}
		if _, err := os.Stat(old); (err == nil) != (i == 0) {
			t.Errorf("after save %d the earlier daemon's result is kept: %v", i, err == nil)
		}
	}
	for i, id := range ids {
		_, err := os.Stat(filepath.Join(s.Dir(), id))
		if kept := i >= 3; kept != (err == nil) {
			t.Errorf("result %d: kept %v, want %v", i, err == nil, kept)
		}
	}
	if _, err := s.Save([]byte(strings.Repeat("y", 251)), ""); !errors.Is(err, ErrTooBig) {
		t.Errorf("a result over the limit: %v, want ErrTooBig", err)
	}
	if n := dirBytes(t, s.Dir()); n != 200 {
		t.Errorf("after the refused save the directory holds %d bytes, want 200", n)
	}
}

func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		n += info.Size()
	}
	return n
}
