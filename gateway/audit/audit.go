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
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Record is one line of the audit log.
type Record struct {
	Time    time.Time `json:"time"`
	Event   string    `json:"event"` // EventCall or EventApproval
	Session string    `json:"session,omitempty"`
	Client  string    `json:"client,omitempty"`
	Server  string    `json:"server"`
	Tool    string    `json:"tool"`
	// Args is the keyed digest of the call's arguments (Log.Digest).
	Args string `json:"args,omitempty"`
	// Outcome of a call: ok, tool_error, error, timeout, canceled,
	// denied, approval_required.
	Outcome string `json:"outcome,omitempty"`
	// Approval is the decision on a call that needed one: allowed
	// (once), allowed_tool, allowed_server (for the session), denied,
	// timeout; DecidedBy who made it: policy, session (an earlier grant),
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

// DefaultMaxBytes is the size at which the log is rotated: the current
// file becomes NAME.1 (replacing the one before) and a new file starts.
const DefaultMaxBytes = 16 << 20

// Log appends records to a file. Its methods are safe for concurrent
// use; a record is written whole before Write returns (no buffering that
// load could overflow: nothing is dropped).
type Log struct {
	path     string
	key      []byte
	maxBytes int64

	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (creating, mode 0600) the log at path, with its digest key
// in keyPath (created with 32 random bytes, mode 0600, if missing).
// maxBytes <= 0 means DefaultMaxBytes.
func Open(path, keyPath string, maxBytes int64) (*Log, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the audit log's directory: %w", err)
	}
	key, err := loadKey(keyPath)
	if err != nil {
		return nil, err
	}
	l := &Log{path: path, key: key, maxBytes: maxBytes}
	if err := l.open(); err != nil {
		return nil, err
	}
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
func (l *Log) Digest(args []byte) string {
	if len(args) == 0 {
		args = []byte("{}")
	}
	m := hmac.New(sha256.New, l.key)
	m.Write(args)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil)[:16])
}

// Write appends r. A record that cannot be written is an error, for the
// caller to log: the call it records has happened all the same.
func (l *Log) Write(r Record) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("audit log closed")
	}
	if l.size > 0 && l.size+int64(len(line)) > l.maxBytes {
		if err := l.rotate(); err != nil {
			return err
		}
	}
	n, err := l.f.Write(line)
	l.size += int64(n)
	return err
}

// rotate moves the current file to NAME.1 and starts a new one.
func (l *Log) rotate() error {
	l.f.Close()
	l.f = nil
	if err := os.Rename(l.path, l.path+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rotating the audit log: %w", err)
	}
	return l.open()
}

// Close closes the file; safe twice.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
