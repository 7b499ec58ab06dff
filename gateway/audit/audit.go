// Package audit is the record of who called what: one JSON line per tool
// call and per approval decision, in a file only its owner reads.
//
// Arguments are never written: a line carries a keyed digest of them
// (HMAC-SHA-256 with a per-install key), so that two calls with the same
// arguments can be told to be the same without the log holding the
// values (tokens, file contents, personal data).
package audit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Record is one line of the audit log.
type Record struct {
	Time    time.Time `json:"time"`
	Event   string    `json:"event"` // EventCall or EventApproval
	Session string    `json:"session,omitempty"`
	Client  string    `json:"client,omitempty"`
	// User is who called, in team mode (the verified token's user
	// claim); empty, and left out, otherwise.
	User   string `json:"user,omitempty"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Method is the request, when it is not a tool call (tools/call):
	// resources/read, prompts/get, completion/complete or
	// resources/subscribe. Tool then names what it asked for as the
	// server lists it — the prompt, the resource's URI, the template —
	// and Args digests the rest (a prompt's arguments, the URI read
	// through a template).
	Method string `json:"method,omitempty"`
	// Script is the ID of the code-mode script that made the call.
	Script string `json:"script,omitempty"`
	// Args is the keyed digest of the call's arguments (Log.Digest).
	Args string `json:"args,omitempty"`
	// Outcome of a call: ok, tool_error, error, timeout, canceled,
	// denied, approval_required, or a refusal before any of those:
	// unknown_tool (Tool is the name as the caller wrote it, Server
	// empty), invalid_args, unknown (a prompt or resource no server
	// offers the caller).
	Outcome string `json:"outcome,omitempty"`
	// Approval is the decision on a call that needed one: allowed
	// (once), allowed_tool, allowed_server (for the session), denied,
	// timeout; DecidedBy who made it: session (an earlier grant),
	// elicitation, page, cli, timeout.
	Approval  string `json:"approval,omitempty"`
	DecidedBy string `json:"decidedBy,omitempty"`
	// Rule is the setting that asked for the approval.
	Rule       string  `json:"rule,omitempty"`
	DurationMs float64 `json:"durationMs,omitempty"`
}

// Events.
const (
	EventCall     = "call"
	EventApproval = "approval"
)

// Rotation: when the log passes its size, NAME.1 becomes NAME.2 and so
// on, the oldest past the number of files kept is removed, the current
// file becomes NAME.1 and a new one starts. At about 250 bytes a record,
// the defaults keep at least the last 377,000 (see the README).
const (
	DefaultMaxBytes = 10 << 20
	DefaultFiles    = 10
)

// Options configure a Log; nil means the defaults.
type Options struct {
	// MaxBytes is the size of a file past which the log rotates;
	// 0 means DefaultMaxBytes.
	MaxBytes int64
	// Files is how many files the log keeps in all, the current one
	// included; 0 means DefaultFiles, 1 only the current one.
	Files int
}

// Log appends records to a file. Its methods are safe for concurrent
// use. A record is in the log's buffer when Write returns and reaches the
// file within FlushInterval, or sooner once the buffer holds flushSoon
// bytes, or at once when it holds maxPending bytes: a writer then waits
// for the file (nothing is dropped under load, and the hot path pays no
// system call per call).
type Log struct {
	path     string
	key      []byte
	maxBytes int64
	files    int
	macs     sync.Pool // of *digester, keyed with key

	mu       sync.Mutex
	f        *os.File
	size     int64     // of the file, with what buf holds
	buf      []byte    // written, not yet in the file
	stamp    timeStamp // the last record's second, formatted
	spare    []byte    // the other buffer, swapped in while buf is written
	writing  sync.Mutex
	flushErr error
	kick     chan struct{} // buf was empty and is not: flush within FlushInterval
	soon     chan struct{} // buf holds flushSoon bytes: flush now
	done     chan struct{}
	stopped  chan struct{}
}

// FlushInterval bounds how long a record waits in memory.
var FlushInterval = 100 * time.Millisecond

// maxPending is how much may wait in memory before a writer waits.
const maxPending = 1 << 20

// flushSoon is how much waits in memory before the flush loop writes it
// without waiting out FlushInterval. The log keeps two buffers (one
// filled while the other is written), live for the daemon's life: at
// 2,000 calls a second, 100 ms of records is about 70 KB each, and the
// collector's pace doubles what is live. A write of 16 KB every few
// tens of milliseconds costs the flush loop less than the memory did.
const flushSoon = 16 << 10

// Open opens (creating, mode 0600) the log at path, with its digest key
// in keyPath (created with 32 random bytes, mode 0600, if missing).
// Close it to write what waits.
func Open(path, keyPath string, o *Options) (*Log, error) {
	maxBytes, files := int64(DefaultMaxBytes), DefaultFiles
	if o != nil && o.MaxBytes > 0 {
		maxBytes = o.MaxBytes
	}
	if o != nil && o.Files > 0 {
		files = o.Files
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the audit log's directory: %w", err)
	}
	key, err := loadKey(keyPath)
	if err != nil {
		return nil, err
	}
	l := &Log{path: path, key: key, maxBytes: maxBytes, files: files,
		kick: make(chan struct{}, 1), soon: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{})}
	l.macs.New = func() any { return &digester{mac: hmac.New(sha256.New, key)} }
	if err := l.open(); err != nil {
		return nil, err
	}
	go l.flushLoop()
	return l, nil
}

// Path is the log's file.
func (l *Log) Path() string { return l.path }

func (l *Log) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening the audit log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("opening the audit log: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		_ = f.Chmod(0o600) // an older file someone made readable
	}
	l.f, l.size = f, fi.Size()
	return nil
}

func loadKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if err == nil && len(key) >= 32 {
		return key, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading the audit key: %w", err)
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, key, 0o600); err != nil {
		return nil, fmt.Errorf("writing the audit key: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("writing the audit key: %w", err)
	}
	return key, nil
}

// Digest is the keyed digest of a call's arguments, as raw JSON: equal
// for equal bytes, and says nothing of them without the key.
//
// It is computed for every call: the keyed hash is reused (a new one
// costs four allocations and the key's two blocks hashed again), and the
// string is the only allocation.
func (l *Log) Digest(args []byte) string {
	if len(args) == 0 {
		args = []byte("{}")
	}
	d := l.macs.Get().(*digester)
	d.mac.Reset()
	d.mac.Write(args)
	sum := d.mac.Sum(d.sum[:0])
	var out [len(digestPrefix) + 32]byte
	copy(out[:], digestPrefix)
	hex.Encode(out[len(digestPrefix):], sum[:16])
	l.macs.Put(d)
	return string(out[:])
}

const digestPrefix = "hmac-sha256:"

// digester is an HMAC and the buffer its sum is written to.
type digester struct {
	mac hash.Hash
	sum [sha256.Size]byte
}

// Write appends r. An error says an earlier flush failed (the caller
// logs it); the call r records has happened all the same.
func (l *Log) Write(r Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	l.mu.Lock()
	if l.f == nil {
		l.mu.Unlock()
		return errors.New("audit log closed")
	}
	n := len(l.buf)
	l.buf = appendRecord(l.buf, &r, &l.stamp)
	l.size += int64(len(l.buf) - n)
	rotate := l.size > l.maxBytes && n > 0
	full := len(l.buf) >= maxPending
	soon := n < flushSoon && len(l.buf) >= flushSoon
	err := l.flushErr
	l.flushErr = nil
	l.mu.Unlock()
	if rotate || full {
		if ferr := l.Flush(); ferr != nil {
			return ferr
		}
		return err
	}
	if n == 0 {
		signal(l.kick)
	}
	if soon {
		signal(l.soon)
	}
	return err
}

// signal wakes the flush loop on c without waiting.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// flushLoop writes the buffer FlushInterval after a record arrives in it
// empty, or once it holds flushSoon bytes: records are written in batches
// while calls come, and an idle daemon's log wakes nobody.
func (l *Log) flushLoop() {
	defer close(l.stopped)
	t := time.NewTimer(FlushInterval)
	t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-l.kick:
		}
		t.Reset(FlushInterval)
		select {
		case <-l.done:
			return // Close writes what waits
		case <-l.soon:
			t.Stop()
		case <-t.C:
		}
		if err := l.Flush(); err != nil {
			l.mu.Lock()
			l.flushErr = err
			l.mu.Unlock()
		}
	}
}

// Flush writes what waits to the file, rotating it first when it has
// grown past its size.
func (l *Log) Flush() error {
	l.writing.Lock() // one writer of the file at a time, in order
	defer l.writing.Unlock()
	l.mu.Lock()
	if l.f == nil || len(l.buf) == 0 {
		l.mu.Unlock()
		return nil
	}
	data, f := l.buf, l.f
	l.buf, l.spare = l.spare[:0], nil
	over := l.size > l.maxBytes
	l.mu.Unlock()
	if over {
		var err error
		if f, err = l.rotate(f, int64(len(data))); err != nil {
			return err
		}
	}
	_, err := f.Write(data)
	l.mu.Lock()
	l.spare = data[:0]
	l.mu.Unlock()
	return err
}

// rotate shifts the rotated files by one (NAME.k to NAME.k+1, the last
// replacing what was there), moves the current file (f) to NAME.1 and
// starts a new one, which will hold the pending bytes.
func (l *Log) rotate(f *os.File, pending int64) (*os.File, error) {
	f.Close()
	for i := l.files - 1; i >= 1; i-- {
		if err := os.Rename(RotatedName(l.path, i-1), RotatedName(l.path, i)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("rotating the audit log: %w", err)
		}
	}
	nf, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("rotating the audit log: %w", err)
	}
	l.mu.Lock()
	l.f = nf
	l.size = pending + int64(len(l.buf))
	l.mu.Unlock()
	return nf, nil
}

// RotatedName is the name of the log at path's i-th rotated file, the
// higher the older: path itself for 0, else path.i.
func RotatedName(path string, i int) string {
	if i == 0 {
		return path
	}
	return path + "." + strconv.Itoa(i)
}

// Close writes what waits and closes the file; safe twice.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.f == nil {
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	<-l.stopped
	err := l.Flush()
	l.writing.Lock()
	defer l.writing.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return err
	}
	cerr := l.f.Close()
	l.f = nil
	return errors.Join(err, cerr)
}

// LoadKey returns the per-install key kept in path (the audit key), made
// (32 random bytes, mode 0600) if missing. Besides the audit digests, it
// authenticates what the daemon leaves for its successor, such as shim
// sessions' state.
func LoadKey(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the key's directory: %w", err)
	}
	return loadKey(path)
}
