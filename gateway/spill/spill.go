// Package spill keeps tool results too big to hand to the model whole:
// each is written to a file of its own under the daemon's state directory
// (0600), and the model is told where it is and how to read a range of
// it. The store never holds more than MaxBytes: before a result is
// written, the oldest are removed to make room for it (one bigger than
// MaxBytes is refused). Files older than MaxAge are removed by a sweep as
// new ones are written, at most once a minute.
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
	// files are the saved results, by ID, and total their size: read
	// from the directory at the first save, then kept as saves reserve
	// room and removals give it back. nil: not read yet.
	files map[string]file
	total int64
}

// file is one saved result in the store's account of its directory.
type file struct {
	size    int64
	mod     time.Time
	writing bool // reserved by a save that has not finished
}

// ErrTooBig: a result bigger than the store's size limit is not saved.
var ErrTooBig = errors.New("the result is bigger than settings.savedResultsMaxBytes allows to keep")

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
	if err := s.reserve(id, int64(len(data))); err != nil {
		return Saved{}, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
		}
	}
	s.written(id, err == nil)
	if err != nil {
		return Saved{}, err
	}
	s.sweepSometimes(id)
	return Saved{ID: id, Path: path, Size: len(data)}, nil
}

// reserve makes room for a result of size bytes named id before it is
// written — removing the oldest saved results until it fits the size
// limit — and counts it; ErrTooBig when it alone is over the limit.
func (s *Store) reserve(id string, size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if size > s.maxBytes {
		return fmt.Errorf("%w (%d bytes, the limit is %d)", ErrTooBig, size, s.maxBytes)
	}
	if s.files == nil {
		s.files, s.total = s.scan()
	}
	if s.total+size > s.maxBytes {
		names := make([]string, 0, len(s.files))
		for name, f := range s.files {
			if !f.writing {
				names = append(names, name)
			}
		}
		slices.SortFunc(names, func(a, b string) int { return s.files[a].mod.Compare(s.files[b].mod) })
		for _, name := range names {
			if s.total+size <= s.maxBytes {
				break
			}
			s.removeLocked(name)
		}
	}
	if s.total+size > s.maxBytes {
		// What is left is being written by other saves.
		return fmt.Errorf("%w at the moment: other results being saved take the room (%d bytes, the limit is %d)", ErrTooBig, size, s.maxBytes)
	}
	s.files[id] = file{size: size, mod: time.Now(), writing: true}
	s.total += size
	return nil
}

// written ends the reservation of id: kept when ok, else given back.
func (s *Store) written(id string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, held := s.files[id]
	switch {
	case !held:
	case ok:
		f.writing = false
		s.files[id] = f
	default:
		delete(s.files, id)
		s.total -= f.size
	}
}

// removeLocked removes the saved result name and its account; s.mu is
// held.
func (s *Store) removeLocked(name string) {
	if err := os.Remove(filepath.Join(s.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return
	}
	s.total -= s.files[name].size
	delete(s.files, name)
}

// scan reads the saved results in the directory.
func (s *Store) scan() (map[string]file, int64) {
	files := make(map[string]file)
	var total int64
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if !idPattern.MatchString(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		files[e.Name()] = file{size: info.Size(), mod: info.ModTime()}
		total += info.Size()
	}
	return files, total
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
// oldest until the rest fit its size limit; keep is never removed. It
// reads the directory again, so results removed by hand are no longer
// counted.
func (s *Store) Sweep(keep string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	files, total := s.scan()
	for name, f := range s.files {
		if f.writing {
			files[name] = f
			total += f.size
		}
	}
	s.files, s.total = files, total
	names := make([]string, 0, len(files))
	for name, f := range files {
		if !f.writing && name != keep {
			names = append(names, name)
		}
	}
	slices.SortFunc(names, func(a, b string) int { return files[a].mod.Compare(files[b].mod) })
	for _, name := range names {
		if time.Since(files[name].mod) > s.maxAge || s.total > s.maxBytes {
			s.removeLocked(name)
		}
	}
}
