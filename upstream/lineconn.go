package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/jsonwire"
)

// lineConn is the connection to a stdio upstream: newline-delimited
// JSON-RPC over the process's pipes, read and written here rather than by
// the SDK's IOTransport. The SDK's session runs on it as on any
// Connection; besides, the connection carries the gateway's own tool calls
// (rawCall), the daemon's main load. Their requests carry IDs of the
// connection's own ("mcpgw~N"), their responses are recognised by that ID
// as they are read, and handed over as bytes: a forwarded call is neither
// decoded nor encoded by the SDK (which costs ten JSON decoders with
// 32 KiB buffers per call; see docs/sdk-decoder.md).
type lineConn struct {
	r      io.Reader
	w      io.Writer
	closer io.Closer
	log    *slog.Logger

	wmu sync.Mutex // one line at a time on the upstream's stdin

	incoming  chan jsonrpc.Message
	done      chan struct{} // closed when reading has stopped; err says why
	err       error
	closed    chan struct{}
	closeOnce sync.Once
	queue     []jsonrpc.Message // the rest of a batch; Read's own

	mu    sync.Mutex
	calls map[uint64]chan []byte // raw calls awaiting their response, by the number in their ID
	meta  []metaMember           // the per-request _meta members the SDK adds for protocol 2026-07-28, as captured from its requests
	ids   atomic.Uint64

	progress *progressWatches // counts the progress notifications read, if set (progress.go)
}

// rawIDPrefix starts the IDs of the connection's own requests: the SDK
// numbers its requests, so the two never meet.
const rawIDPrefix = `"mcpgw~`

// appendRawID appends the JSON string ID of the connection's request
// number n.
func appendRawID(b []byte, n uint64) []byte {
	b = append(b, rawIDPrefix...)
	b = strconv.AppendUint(b, n, 10)
	return append(b, '"')
}

// rawIDNumber returns the request number of a raw call's ID, as written
// (quoted); false if id is not one appendRawID writes.
func rawIDNumber(id []byte) (uint64, bool) {
	digits, ok := bytes.CutPrefix(id, []byte(rawIDPrefix))
	if !ok || len(digits) < 2 || digits[len(digits)-1] != '"' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(digits[:len(digits)-1]), 10, 64)
	return n, err == nil
}

// maxUpstreamLine bounds one message from an upstream, as the SDK does.
const maxUpstreamLine = mcp.DefaultMaxLineLength

func newLineConn(r io.Reader, w io.Writer, closer io.Closer, log *slog.Logger, progress *progressWatches) *lineConn {
	c := &lineConn{
		r: r, w: w, closer: closer, log: log, progress: progress,
		incoming: make(chan jsonrpc.Message),
		done:     make(chan struct{}),
		closed:   make(chan struct{}),
		calls:    make(map[uint64]chan []byte),
	}
	go c.readLoop()
	return c
}

// readLoop reads lines until the upstream's stdout ends, routing each:
// responses to raw calls to their caller, everything else, decoded, to
// the SDK.
func (c *lineConn) readLoop() {
	br := bufio.NewReaderSize(c.r, 64<<10)
	var long []byte // a line longer than br's buffer, being assembled
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > maxUpstreamLine {
				c.stop(fmt.Errorf("a message from the upstream is longer than %d bytes", maxUpstreamLine))
				return
			}
			long = append(long, chunk...)
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if len(bytes.TrimSpace(line)) > 0 && !c.route(line) {
			return
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			c.stop(err)
			return
		}
	}
}

// route delivers one line; false means the connection was closed.
func (c *lineConn) route(line []byte) bool {
	if bytes.Contains(line, []byte(rawIDPrefix)) {
		if id, ok := jsonwire.Member(line, "id"); ok && bytes.HasPrefix(id, []byte(rawIDPrefix)) {
			n, _ := rawIDNumber(id) // not one of ours if not: no call has it
			c.mu.Lock()
			ch := c.calls[n]
			delete(c.calls, n)
			c.mu.Unlock()
			if ch != nil {
				ch <- bytes.Clone(line) // buffered: never blocks
			}
			return true
		}
	}
	msgs, err := decodeLine(line)
	if err != nil {
		// Servers that print to stdout by mistake are common; the line is
		// not MCP, and the session goes on.
		c.log.Warn("upstream wrote a line that is not JSON-RPC; ignored", "err", err, "line", truncate(string(bytes.TrimSpace(line)), 200))
		return true
	}
	for _, m := range msgs {
		if r, ok := m.(*jsonrpc.Request); ok && c.progress != nil && !r.IsCall() && r.Method == "notifications/progress" {
			raw, _ := jsonwire.Member(r.Params, "progressToken")
			if token, ok := jsonwire.String(raw); ok {
				c.progress.noteRead(token)
			}
		}
		select {
		case c.incoming <- m:
		case <-c.closed:
			return false
		}
	}
	return true
}

// decodeLine decodes a message, or a batch of them.
func decodeLine(line []byte) ([]jsonrpc.Message, error) {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(line, &batch); err != nil {
			return nil, err
		}
		msgs := make([]jsonrpc.Message, 0, len(batch))
		for _, raw := range batch {
			m, err := jsonrpc.DecodeMessage(raw)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, m)
		}
		return msgs, nil
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, err
	}
	return []jsonrpc.Message{m}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// stop records why reading stopped and fails the raw calls waiting.
func (c *lineConn) stop(err error) {
	c.mu.Lock()
	c.err = err
	calls := c.calls
	c.calls = nil
	c.mu.Unlock()
	close(c.done)
	for _, ch := range calls {
		close(ch)
	}
}

// Read implements mcp.Connection.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	select {
	case m := <-c.incoming:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case <-c.done:
		// Messages read before the end still come first.
		select {
		case m := <-c.incoming:
			return m, nil
		default:
		}
		return nil, c.err
	}
}

// Write implements mcp.Connection.
func (c *lineConn) Write(_ context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message for the upstream: %w", err)
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.noteMeta(req.Params)
	}
	return c.writeLine(append(data, '\n'))
}

func (c *lineConn) writeLine(line []byte) error {
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(line)
	return err
}

// Close implements mcp.Connection.
func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = c.closer.Close()
	})
	return err
}

// SessionID implements mcp.Connection.
func (c *lineConn) SessionID() string { return "" }

// requestMetaKeys are the _meta members the SDK adds to every request of
// protocol 2026-07-28 and later (SEP-2575).
var requestMetaKeys = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities}

// metaMember is one member of a request's _meta: its key, and the member
// encoded.
type metaMember struct {
	key    string
	member []byte // `"key":value`, as a raw call writes it
}

// noteMeta keeps the per-request _meta members of the SDK's first request
// that has them, so that raw calls carry the same.
func (c *lineConn) noteMeta(params json.RawMessage) {
	c.mu.Lock()
	have := c.meta != nil
	c.mu.Unlock()
	if have || len(params) == 0 {
		return
	}
	meta, ok := jsonwire.Member(params, "_meta")
	if !ok {
		return
	}
	var members []metaMember
	jsonwire.Members(meta, func(k, v []byte) bool {
		if slices.Contains(requestMetaKeys, string(k)) {
			m := make([]byte, 0, len(k)+len(v)+3)
			m = append(append(append(m, '"'), k...), `":`...) // k as written
			m = append(m, v...)
			members = append(members, metaMember{string(k), m})
		}
		return true
	})
	if members == nil {
		return
	}
	c.mu.Lock()
	c.meta = members
	c.mu.Unlock()
}

// lineBufs holds the buffers raw calls build their params and lines in:
// the line is written to the upstream's stdin before rawCall returns, so
// a busy upstream needs a few buffers, not two per call.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledLine is the largest buffer put back in lineBufs: a call with
// megabytes of arguments does not keep them alive in the pool.
const maxPooledLine = 64 << 10

func getLineBuf() *[]byte { return lineBufs.Get().(*[]byte) }

func putLineBuf(b *[]byte) {
	if cap(*b) <= maxPooledLine {
		*b = (*b)[:0]
		lineBufs.Put(b)
	}
}

// requestMeta returns the captured per-request _meta members, or nil. The
// slice is shared and never changes.
func (c *lineConn) requestMeta() []metaMember {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.meta
}

// rawCall sends method with params (a JSON object) under an ID of the
// connection's own and returns the response's result as the upstream
// wrote it. A JSON-RPC error response is a *jsonrpc.Error, as the SDK
// returns it. If ctx ends first, the upstream is told the request is
// cancelled, as the SDK would.
func (c *lineConn) rawCall(ctx context.Context, method string, params []byte, timeout time.Duration) (json.RawMessage, error) {
	id := c.ids.Add(1)
	ch := getReplyChan()
	c.mu.Lock()
	if c.calls == nil {
		c.mu.Unlock()
		return nil, c.closedErr("")
	}
	c.calls[id] = ch
	c.mu.Unlock()

	buf := getLineBuf()
	defer putLineBuf(buf)
	msg := append((*buf)[:0], `{"jsonrpc":"2.0","id":`...)
	msg = appendRawID(msg, id)
	msg = append(msg, `,"method":`...)
	msg = strconv.AppendQuote(msg, method)
	msg = append(msg, `,"params":`...)
	msg = append(msg, params...)
	msg = append(msg, "}\n"...)
	*buf = msg
	// Errors read as the SDK's do.
	if err := c.writeLine(msg); err != nil {
		c.forget(id)
		return nil, writeFailed(method, err)
	}
	var expired <-chan time.Time
	if timeout > 0 {
		t := getTimer(timeout)
		defer putTimer(t)
		expired = t.C
	}
	var cause error
	select {
	case line, ok := <-ch:
		if !ok {
			return nil, c.closedErr(method)
		}
		// route took ch out of calls before it sent: nothing else has it.
		replyChans.Put(ch)
		res, err := responseResult(line)
		if err != nil {
			return nil, fmt.Errorf("calling %q: %w", method, err)
		}
		return res, nil
	case <-ctx.Done():
		cause = ctx.Err()
	case <-expired:
		cause = context.DeadlineExceeded // as a context's timeout reads
	}
	c.cancelled(id, cause)
	return nil, cause
}

// The error paths of rawCall are functions of their own so that a call
// waiting for its response holds a small stack.

// closedErr is a raw call's error when the connection has ended.
func (c *lineConn) closedErr(method string) error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if method == "" {
		return fmt.Errorf("%w: %v", mcp.ErrConnectionClosed, err)
	}
	return fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, method, err)
}

// writeFailed is a raw call's error when its request could not be written.
func writeFailed(method string, err error) error {
	return fmt.Errorf("%w: calling %q: %v", mcp.ErrConnectionClosed, method, err)
}

// cancelled forgets the raw call with request ID id (as written), which
// ended for cause before its response, and tells the upstream.
func (c *lineConn) cancelled(id uint64, cause error) {
	c.forget(id)
	// Best effort, and off the caller's way: a peer that does not read
	// its stdin must not hold the caller past its deadline.
	note := appendRawID([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`), id)
	note = append(note, `,"reason":`...)
	note = strconv.AppendQuote(note, cause.Error())
	note = append(note, "}}\n"...)
	go func() { _ = c.writeLine(note) }()
}

// replyChans are raw calls' empty reply channels (buffered, one
// response each), reused: a call takes one, and puts it back once it has
// received the response, which route sends after taking the channel out
// of calls, so no other send can reach it. A channel closed by stop, or
// left by a call that ended first, is not put back.
var replyChans sync.Pool

func getReplyChan() chan []byte {
	if ch, ok := replyChans.Get().(chan []byte); ok {
		return ch
	}
	return make(chan []byte, 1)
}

// timers are stopped timers for raw calls' timeouts: a call's own timer
// (context.WithTimeout's) cost it a context, a runtime timer and a place
// among its parent's children, made and undone per call. Since Go 1.23 a
// stopped timer's channel holds no stale tick, so a timer can be reused.
var timers sync.Pool

func getTimer(d time.Duration) *time.Timer {
	if t, ok := timers.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

func putTimer(t *time.Timer) {
	t.Stop()
	timers.Put(t)
}

func (c *lineConn) forget(id uint64) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

// responseResult returns the result of a response line, or its error.
func responseResult(line []byte) (json.RawMessage, error) {
	if res, ok := jsonwire.Member(line, "result"); ok {
		return res, nil
	}
	if e, ok := jsonwire.Member(line, "error"); ok {
		werr := new(jsonrpc.Error)
		if err := json.Unmarshal(e, werr); err != nil {
			return nil, fmt.Errorf("the upstream's error response is malformed: %v", err)
		}
		return nil, werr
	}
	return nil, fmt.Errorf("the upstream's response has neither result nor error: %s", truncate(string(line), 200))
}
