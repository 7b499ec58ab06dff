package transport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// lineFilter stands between a shim connection and the SDK: the SDK ends a
// session on a line that is not JSON, so a single stray line from a client
// (a partial write, invalid UTF-8, a debug print) would end it silently. A
// line that is not JSON, or whose JSON is not an object or a batch, is
// answered with a JSON-RPC parse error (-32700) or invalid request (-32600)
// and dropped; the session goes on.
type lineFilter struct {
	br   *bufio.Reader
	c    io.Closer
	w    *lockedWriter
	rest []byte // of the current accepted line, not yet read

	// seen, if set, is told of every line read from the client (a piped
	// session tracks its requests in flight with it); mu is then held
	// while a line is read and checked, so that draining can wait for the
	// reader (see pipedSession.drain).
	seen func(line []byte)
	mu   sync.Mutex

	// ss, once set, is the session on the connection: its fast calls are
	// answered here (see fast.go), the rest goes to the go-sdk.
	ss atomic.Pointer[fastSession]
}

// lockedWriter serialises whole-line writes to the connection, the SDK's
// and lineFilter's: each Write is one complete line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
	// pass, if set, sees each line before it is written; false drops it
	// (reported as written).
	pass func(line []byte) bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pass != nil && !l.pass(p) {
		return len(p), nil
	}
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

const (
	parseErrorLine     = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the line is not valid JSON (in UTF-8)"}}` + "\n"
	invalidRequestLine = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: a JSON-RPC message is a JSON object (or a batch)"}}` + "\n"
)

func (f *lineFilter) Read(p []byte) (int, error) {
	if f.seen != nil {
		f.mu.Lock()
		defer f.mu.Unlock()
	}
	for len(f.rest) == 0 {
		line, err := f.br.ReadBytes('\n')
		if len(line) > 0 {
			if f.seen != nil {
				f.seen(line)
			}
			f.rest = f.check(line)
		}
		if err != nil {
			if len(f.rest) > 0 {
				break
			}
			return 0, err
		}
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// check returns line if it may go on to the SDK, else answers it and
// returns nil.
func (f *lineFilter) check(line []byte) []byte {
	trimmed := bytes.TrimSpace(line)
	switch {
	case len(trimmed) == 0:
		return nil
	case !json.Valid(trimmed), !utf8.Valid(trimmed):
		// JSON is UTF-8 (RFC 8259); Go's decoder would quietly turn
		// invalid bytes into U+FFFD and pass the damage on upstream.
		_, _ = f.w.Write([]byte(parseErrorLine))
		return nil
	case trimmed[0] != '{' && trimmed[0] != '[':
		_, _ = f.w.Write([]byte(invalidRequestLine))
		return nil
	}
	if ss := f.ss.Load(); ss != nil && f.fast(ss.Session, trimmed) {
		return nil
	}
	if line[len(line)-1] != '\n' {
		line = append(line, '\n')
	}
	return line
}

func (f *lineFilter) Close() error { return f.c.Close() }

// fastSession holds a Session for an atomic.Pointer.
type fastSession struct{ Session }

// serveFastOn makes f answer ss's fast calls, unless fast calls are off.
func (t *Transports) serveFastOn(f *lineFilter, ss Session) {
	if !t.o.NoFastPath {
		f.ss.Store(&fastSession{ss})
	}
}

// fast starts the fast call msg is, if it is one, and reports whether it
// did; it also ends fast calls a notifications/cancelled names.
func (f *lineFilter) fast(ss Session, msg []byte) bool {
	req, ok := parseFastRequest(msg)
	if !ok {
		cancelFast(ss, msg)
		return false
	}
	run, ok := ss.Fast(req.method, req.id, req.params)
	if !ok {
		return false
	}
	id := bytes.Clone(req.id)
	go func() {
		result, err := run(ss.Context())
		writeAnswer(f.w, id, result, err, true)
	}()
	return true
}
