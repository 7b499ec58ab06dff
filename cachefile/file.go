package cachefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Version is the only file version this package reads and writes (the
// adapter's CACHE_VERSION).
const Version = 1

// DefaultMaxAge is how long an entry stays valid (the adapter's
// CACHE_MAX_AGE_MS).
const DefaultMaxAge = 7 * 24 * time.Hour

// DefaultPath returns the adapter's cache file: mcp-cache.json in Pi's agent
// directory, which is $PI_CODING_AGENT_DIR when set (a leading ~ expanded)
// and ~/.pi/agent otherwise.
func DefaultPath() string {
	home := Env{}.home()
	dir := filepath.Join(home, ".pi", "agent")
	if d := strings.TrimSpace(os.Getenv("PI_CODING_AGENT_DIR")); d != "" {
		switch {
		case d == "~":
			dir = home
		case strings.HasPrefix(d, "~/"):
			dir = filepath.Join(home, d[2:])
		default:
			if abs, err := filepath.Abs(d); err == nil {
				dir = abs
			} else {
				dir = d
			}
		}
	}
	return filepath.Join(dir, "mcp-cache.json")
}

// Options configure a File. The zero value (or nil) gives the defaults.
type Options struct {
	// MaxAge is how long an entry stays valid: 0 means DefaultMaxAge, a
	// negative value means no limit (an entry's TTL still applies).
	MaxAge time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Stats are a File's counters since Open, for export as metrics.
type Stats struct {
	Reads       uint64 // Read and Lookup calls
	Hits        uint64 // Lookups that returned a valid entry
	Misses      uint64 // Lookups that did not, and Reads that found no usable file
	Writes      uint64 // files written by Put and Delete
	WriteErrors uint64 // Put and Delete calls that failed
	Corrupt     uint64 // times the file was found corrupt, truncated or of another version
}

// File is the cache file at one path. Its methods are safe for concurrent
// use, and writers in other processes (other mcpgw daemons) are serialised
// by an advisory lock on a sidecar file, path+".lock".
//
// pi-mcp-adapter takes no lock: it reads, merges and renames in one
// synchronous step. A write of ours that lands between its read and its
// rename is lost until the next write; nothing can corrupt the file, as
// every writer renames a complete file into place.
type File struct {
	path   string
	maxAge time.Duration
	now    func() time.Time

	mu   sync.Mutex // serialises writers in this process; guards snap
	snap *snapshot  // the last file parsed, reused while it is unchanged on disk

	reads, hits, misses, writes, writeErrors, corrupt atomic.Uint64
}

// Open returns the cache file at path. It does no I/O: a missing file is
// an empty cache, created by the first Put.
func Open(path string, opts *Options) *File {
	f := &File{path: path, maxAge: DefaultMaxAge, now: time.Now}
	if opts != nil {
		if opts.MaxAge != 0 {
			f.maxAge = opts.MaxAge
		}
		if opts.Now != nil {
			f.now = opts.Now
		}
	}
	return f
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// Stats returns the counters.
func (f *File) Stats() Stats {
	return Stats{
		Reads:       f.reads.Load(),
		Hits:        f.hits.Load(),
		Misses:      f.misses.Load(),
		Writes:      f.writes.Load(),
		WriteErrors: f.writeErrors.Load(),
		Corrupt:     f.corrupt.Load(),
	}
}

// Valid reports whether e is a valid entry for identity hash hash now,
// with this File's clock and maximum age.
func (f *File) Valid(e *Entry, hash string) bool { return e.Valid(hash, f.now(), f.maxAge) }

// snapshot is a parsed file. It is never modified once built.
type snapshot struct {
	info    fs.FileInfo                // nil when the file does not exist
	ok      bool                       // a version-1 cache file
	servers map[string]json.RawMessage // entries exactly as read
	extra   map[string]json.RawMessage // other top-level fields, as read
}

// maxFileBytes bounds the cache file read: 10,000 tools with schemas are a
// few MB, so a file over this was not written by a cache writer.
const maxFileBytes = 256 << 20

// load returns the current file, reusing the last parse while the file on
// disk is the same one (same inode, size and modification time: every
// writer replaces the file by rename). It returns an error only for I/O
// errors other than the file not existing.
func (f *File) load() (*snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loadLocked()
}

func (f *File) loadLocked() (*snapshot, error) {
	// Opened without blocking: a FIFO in the cache's place must not hang
	// every lookup; it is refused below, as is a device or a huge file.
	fh, err := os.OpenFile(f.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f.snap = nil
		return &snapshot{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening cache file: %w", err)
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading cache file: %w", err)
	}
	if s := f.snap; s != nil && s.info != nil && os.SameFile(s.info, info) &&
		s.info.Size() == info.Size() && s.info.ModTime().Equal(info.ModTime()) {
		return s, nil
	}
	if info.IsDir() {
		return nil, fmt.Errorf("reading cache file: %s is a directory", f.path)
	}
	if !info.Mode().IsRegular() || info.Size() > maxFileBytes {
		// Not something a cache writer makes: a miss, like a corrupt file.
		f.corrupt.Add(1)
		f.snap = nil
		return &snapshot{}, nil
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading cache file: %w", err)
	}
	s := parseFile(data)
	s.info = info
	if !s.ok {
		f.corrupt.Add(1)
	}
	f.snap = s
	return s, nil
}

// parseFile accepts what the adapter's loadMetadataCache accepts: an object
// with version 1 and an object of servers. Anything else (empty, truncated,
// not JSON, another version) is not a cache file.
func parseFile(data []byte) *snapshot {
	if !json.Valid(data) {
		return &snapshot{}
	}
	top, err := members(data)
	if err != nil {
		return &snapshot{}
	}
	var version float64
	if json.Unmarshal(top["version"], &version) != nil || version != Version {
		return &snapshot{}
	}
	servers, err := members(top["servers"])
	if err != nil {
		return &snapshot{}
	}
	delete(top, "version")
	delete(top, "servers")
	if len(top) == 0 {
		top = nil
	}
	return &snapshot{ok: true, servers: servers, extra: top}
}

// Read returns every entry in the file that decodes, valid or not; check
// them with Valid. A missing, corrupt, truncated or other-version file is an
// empty cache: Read returns an empty map and a nil error, and counts a miss.
// The error is for I/O errors only. The entries are the caller's.
func (f *File) Read() (map[string]*Entry, error) {
	f.reads.Add(1)
	s, err := f.load()
	if err != nil {
		f.misses.Add(1)
		return map[string]*Entry{}, err
	}
	if !s.ok {
		f.misses.Add(1)
		return map[string]*Entry{}, nil
	}
	entries := make(map[string]*Entry, len(s.servers))
	for name, raw := range s.servers {
		if e, err := decodeEntry(raw); err == nil {
			entries[name] = e
		}
	}
	return entries, nil
}

// Lookup returns the entry for server name if it is valid for identity hash
// hash (see Valid); otherwise, or when the file cannot be read, it is a
// miss. Only a valid entry's tools are decoded.
func (f *File) Lookup(name, hash string) (*Entry, bool) {
	f.reads.Add(1)
	s, err := f.load()
	if err != nil || !s.ok {
		f.misses.Add(1)
		return nil, false
	}
	raw, ok := s.servers[name]
	if !ok || !validRaw(raw, hash, f.now(), f.maxAge) {
		f.misses.Add(1)
		return nil, false
	}
	e, err := decodeEntry(raw)
	if err != nil || !f.Valid(e, hash) {
		f.misses.Add(1)
		return nil, false
	}
	f.hits.Add(1)
	return e, true
}

// Put merges entries into the file, replacing those servers' entries and
// keeping every other entry and top-level field as read. It holds the lock
// for the whole read-merge-write, writes a temporary file in the same
// directory, syncs it and renames it into place, so concurrent writers lose
// nothing and readers never see a partial file. A corrupt or other-version
// file is replaced. The directory is created (mode 0700) when missing; the
// file is mode 0600. Entries with a zero CachedAt get the current time.
func (f *File) Put(entries map[string]*Entry) error {
	if len(entries) == 0 {
		return nil
	}
	now := f.now()
	encoded := make(map[string]json.RawMessage, len(entries))
	for name, e := range entries {
		switch {
		case name == "":
			f.writeErrors.Add(1)
			return errors.New("putting cache entry: empty server name")
		case e == nil:
			f.writeErrors.Add(1)
			return fmt.Errorf("putting cache entry %q: nil entry", name)
		case e.ConfigHash == "":
			f.writeErrors.Add(1)
			return fmt.Errorf("putting cache entry %q: no configHash", name)
		}
		raw, err := encodeEntry(e, now)
		if err != nil {
			f.writeErrors.Add(1)
			return fmt.Errorf("putting cache entry %q: %w", name, err)
		}
		encoded[name] = raw
	}
	return f.update(func(servers map[string]json.RawMessage) bool {
		for name, raw := range encoded {
			servers[name] = raw
		}
		return true
	})
}

// Delete removes the named servers' entries, under the same lock and with
// the same atomic replacement as Put. Names not in the file are ignored;
// when none is, nothing is written.
func (f *File) Delete(names ...string) error {
	if len(names) == 0 {
		return nil
	}
	return f.update(func(servers map[string]json.RawMessage) bool {
		changed := false
		for _, name := range names {
			if _, ok := servers[name]; ok {
				delete(servers, name)
				changed = true
			}
		}
		return changed
	})
}

// update runs one locked read-modify-write; modify reports whether it
// changed anything worth writing.
func (f *File) update(modify func(servers map[string]json.RawMessage) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.updateLocked(modify); err != nil {
		f.writeErrors.Add(1)
		return err
	}
	return nil
}

func (f *File) updateLocked(modify func(servers map[string]json.RawMessage) bool) error {
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating cache directory: %w", err)
	}
	unlock, err := lockFile(f.path + ".lock")
	if err != nil {
		return fmt.Errorf("locking cache file: %w", err)
	}
	defer unlock()

	cur, err := f.loadLocked()
	if err != nil {
		return err
	}
	servers := make(map[string]json.RawMessage, len(cur.servers)+1)
	var extra map[string]json.RawMessage
	if cur.ok {
		for k, v := range cur.servers {
			servers[k] = v
		}
		extra = cur.extra
	}
	if !modify(servers) && (cur.ok || cur.info == nil) {
		return nil // nothing changed, and nothing corrupt to replace
	}
	data := encodeFile(servers, extra)
	info, err := writeAtomic(f.path, data)
	if err != nil {
		return err
	}
	f.snap = &snapshot{info: info, ok: true, servers: servers, extra: extra}
	f.writes.Add(1)
	return nil
}

// encodeFile writes {"version":1,"servers":{...}} and any other top-level
// fields, entries by name, each entry's bytes as they are.
func encodeFile(servers, extra map[string]json.RawMessage) []byte {
	size := 64
	for k, v := range servers {
		size += len(k) + len(v) + 8
	}
	w := newJSONWriter()
	w.buf.Grow(size)
	w.buf.WriteString(`{"version":1,"servers":{`)
	for i, name := range sortedKeys(servers) {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		w.buf.Write(appendJSString(w.buf.AvailableBuffer(), name))
		w.buf.WriteByte(':')
		w.buf.Write(bytes.TrimSpace(servers[name]))
	}
	w.buf.WriteByte('}')
	for _, k := range sortedKeys(extra) {
		w.buf.WriteByte(',')
		w.str(k)
		w.buf.WriteByte(':')
		w.buf.Write(bytes.TrimSpace(extra[k]))
	}
	w.buf.WriteByte('}')
	return w.buf.Bytes()
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// writeAtomic replaces path with data: a 0600 temporary file in the same
// directory, synced, renamed over path, then the directory synced so the
// rename itself is durable. It returns the new file's info.
func writeAtomic(path string, data []byte) (fs.FileInfo, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, base+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("writing cache file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return nil, fmt.Errorf("writing cache file: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		return nil, fmt.Errorf("writing cache file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("syncing cache file: %w", err)
	}
	info, err := tmp.Stat()
	if err != nil {
		return nil, fmt.Errorf("writing cache file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("writing cache file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("replacing cache file: %w", err)
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not every file system syncs directories
		d.Close()
	}
	return info, nil
}
