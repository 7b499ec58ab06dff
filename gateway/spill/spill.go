// Package spill keeps tool results too big to hand to the model whole:
// each is written to a file of its own under the daemon's state directory
// (0600), and the model is told where it is and how to read a range of
// it. Files older than MaxAge, and the oldest past MaxBytes in all, are
// removed as new ones are written.
package spill

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults.
const (
	DefaultMaxAge   = 24 * time.Hour
	DefaultMaxBytes = 1 << 30
)

// Store is a directory of saved results. The zero value is not usable;
// make one with New.
type Store struct {
	dir      string
	maxAge   time.Duration
	maxBytes int64

	mu        sync.Mutex
	lastSweep time.Time
}

// New returns a store in dir (created on first save), keeping files for
// maxAge and at most maxBytes in all (0: the defaults).
func New(dir string, maxAge time.Duration, maxBytes int64) *Store {
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	return &Store{dir: dir, maxAge: maxAge, maxBytes: maxBytes}
}

// SetLimits changes the age and size limits (0: the defaults).
func (s *Store) SetLimits(maxAge time.Duration, maxBytes int64) {
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	s.mu.Lock()
	s.maxAge, s.maxBytes = maxAge, maxBytes
	s.mu.Unlock()
}

// Dir is where the files are.
func (s *Store) Dir() string { return s.dir }

// Saved is one saved result.
type Saved struct {
	ID   string // r-<hex>.<ext>: what the mcp tool's read action takes
	Path string
	Size int
}

// idPattern is what Save names files, and all Open accepts: no path
// separators, no dots but the extension's.
var idPattern = regexp.MustCompile(`^r-[0-9a-f]{16}\.[a-z0-9]{1,8}$`)

// Save writes data to a new file; mimeType picks its extension (.txt for
// text, else the type's usual one, else .bin).
func (s *Store) Save(data []byte, mimeType string) (Saved, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return Saved{}, err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "r-" + hex.EncodeToString(b[:]) + "." + extension(mimeType)
	path := filepath.Join(s.dir, id)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Saved{}, err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return Saved{}, err
	}
	s.sweepSometimes(id)
	return Saved{ID: id, Path: path, Size: len(data)}, nil
}

func extension(mimeType string) string {
	mt, _, _ := mime.ParseMediaType(mimeType)
	switch {
	case mt == "" || mt == "text/plain":
		return "txt"
	case mt == "application/json":
		return "json"
	}
	if exts, _ := mime.ExtensionsByType(mt); len(exts) > 0 {
		ext := strings.TrimPrefix(slices.Min(exts), ".")
		if ok, _ := regexp.MatchString(`^[a-z0-9]{1,8}$`, ext); ok {
			return ext
		}
	}
	if strings.HasPrefix(mt, "text/") {
		return "txt"
	}
	return "bin"
}

// ErrNotFound: no saved result has that ID (never saved, or removed).
var ErrNotFound = errors.New("no saved result has that ID")

// Read returns up to length bytes of the saved result id from offset,
// and its whole size.
func (s *Store) Read(id string, offset, length int64) (data []byte, size int64, err error) {
	if !idPattern.MatchString(id) {
		return nil, 0, ErrNotFound
	}
	f, err := openResult(filepath.Join(s.dir, id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size = st.Size()
	if offset < 0 || offset > size {
		return nil, size, fmt.Errorf("offset %d is outside the result (%d bytes)", offset, size)
	}
	data = make([]byte, min(length, size-offset))
	n, err := f.ReadAt(data, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, size, err
	}
	return data[:n], size, nil
}

// sweepSometimes runs Sweep at most once a minute, sparing just.
func (s *Store) sweepSometimes(just string) {
	s.mu.Lock()
	if time.Since(s.lastSweep) < time.Minute {
		s.mu.Unlock()
		return
	}
	s.lastSweep = time.Now()
	s.mu.Unlock()
	s.Sweep(just)
}

// Sweep removes saved results older than the store's age limit, then the
// oldest until the rest fit its size limit; keep is never removed.
func (s *Store) Sweep(keep string) {
	s.mu.Lock()
	maxAge, maxBytes := s.maxAge, s.maxBytes
	s.mu.Unlock()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		mod  time.Time
		size int64
	}
	var files []file
	var total int64
	for _, e := range entries {
		if !idPattern.MatchString(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if time.Since(info.ModTime()) > maxAge && e.Name() != keep {
			os.Remove(filepath.Join(s.dir, e.Name()))
			continue
		}
		files = append(files, file{e.Name(), info.ModTime(), info.Size()})
		total += info.Size()
	}
	slices.SortFunc(files, func(a, b file) int { return a.mod.Compare(b.mod) })
	for _, f := range files {
		if total <= maxBytes {
			break
		}
		if f.name == keep {
			continue
		}
		if os.Remove(filepath.Join(s.dir, f.name)) == nil {
			total -= f.size
		}
	}
}
