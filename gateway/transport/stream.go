package transport

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/hangup"
)

// A session of the 2025 era keeps one GET open for as long as it lives: the
// stream the daemon's own messages to it travel on (list_changed, log
// messages, requests for sampling, elicitation and roots), idle nearly all
// the time. Served as net/http serves any handler, such a stream holds the
// connection's goroutine, parked under every middleware frame with the
// stack the deepest request grew, net/http's goroutine that watches the
// connection, the connection's 4 KB read and write buffers, the response's
// 2 KB chunking buffer and the request: 64 idle streams cost the daemon
// about 3 MB of its peak VmRSS under load.
//
// holdStreams takes such a connection over from net/http (HTTP/1.1 only:
// an HTTP/2 stream has no connection of its own) and runs the go-sdk's
// handler for it on a goroutine of its own with a shallow stack, which
// waits in the go-sdk for the stream to end; package hangup sees the
// client go away. The go-sdk writes each event through streamWriter, as
// one chunk in one write.
func holdStreams(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.ProtoMajor != 1 || r.ProtoMinor < 1 || r.Header.Get("Mcp-Session-Id") == "" {
			next.ServeHTTP(w, r)
			return
		}
		header := w.Header().Clone()
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
		sw := &streamWriter{conn: conn, header: header, broken: cancel}
		r = r.WithContext(ctx)
		r.Header = heldHeader(r.Header)
		// The client waits for this answer and sends nothing more on the
		// connection: a byte it did send is taken for its going away.
		stop := hangup.Watch(conn, true, cancel)
		if brw.Reader.Buffered() > 0 {
			cancel()
		}
		go func() {
			defer cancel()
			next.ServeHTTP(sw, r)
			sw.end()
			stop()
			_ = conn.Close()
		}()
	})
}

// heldHeaders are the request headers the go-sdk reads of a session's
// GET: which session, which protocol, what the client accepts and where
// it resumes. Everything before the go-sdk's handler (the owner, token
// and Host checks) has read the request by then.
var heldHeaders = [...]string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Accept", "Last-Event-Id"}

// heldHeader is the part of h a held stream keeps for its life: the
// whole header of a client's GET (its user agent, encodings, host and
// the rest) is about 2.5 KB, 160 KB at 64 sessions, live until the
// session ends.
func heldHeader(h http.Header) http.Header {
	kept := make(http.Header, len(heldHeaders))
	for _, k := range heldHeaders {
		if v, ok := h[k]; ok {
			kept[k] = slices.Clone(v) // not the request's shared array of values
		}
	}
	return kept
}

// streamWriteTimeout bounds one write of an event to a held stream: a
// client whose socket buffer stays full that long has stopped reading, and
// its stream is cut, as the daemon's shutdown cuts it, rather than holding
// up the session's other messages.
const streamWriteTimeout = 30 * time.Second

// streamWriter is the http.ResponseWriter of a held stream: an HTTP/1.1
// response with a chunked body, written straight to the connection.
type streamWriter struct {
	conn   net.Conn
	header http.Header
	broken func() // a write failed: the stream ends

	mu     sync.Mutex
	status int // 0 until the header is sent or queued
	sent   bool
	err    error
}

func (s *streamWriter) Header() http.Header { return s.header }

func (s *streamWriter) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status == 0 {
		s.status = code
	}
}

// Write sends p as one chunk, with the response's header before the first.
func (s *streamWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(p) == 0 {
		return 0, s.flushLocked()
	}
	var head []byte
	head = s.headLocked(head)
	head = strconv.AppendInt(head, int64(len(p)), 16)
	head = append(head, "\r\n"...)
	if err := s.writeLocked(net.Buffers{head, p, []byte("\r\n")}); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush sends the header if nothing has been: every Write is sent at once.
func (s *streamWriter) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.flushLocked()
}

func (s *streamWriter) flushLocked() error {
	if s.sent {
		return s.err
	}
	return s.writeLocked(net.Buffers{s.headLocked(nil)})
}

// end closes the body: the last chunk, after the header if the handler
// wrote nothing.
func (s *streamWriter) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.writeLocked(net.Buffers{append(s.headLocked(nil), "0\r\n\r\n"...)})
}

// headLocked appends the status line and the header to b, once.
func (s *streamWriter) headLocked(b []byte) []byte {
	if s.sent {
		return b
	}
	s.sent = true
	if s.status == 0 {
		s.status = http.StatusOK
	}
	b = fmt.Appendf(b, "HTTP/1.1 %03d %s\r\n", s.status, http.StatusText(s.status))
	h := s.header
	h.Del("Content-Length")
	h.Set("Transfer-Encoding", "chunked")
	// The connection ends with the stream.
	h.Set("Connection", "close")
	if h.Get("Date") == "" {
		h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
	w := appendWriter{b}
	_ = h.Write(&w)
	return append(w.b, "\r\n"...)
}

func (s *streamWriter) writeLocked(bufs net.Buffers) error {
	if s.err != nil {
		return s.err
	}
	_ = s.conn.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := bufs.WriteTo(s.conn); err != nil {
		s.err = err
		s.broken()
	}
	return s.err
}

// appendWriter is an io.Writer that appends to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}
