// Package shim is the client end of the daemon's unix socket: the byte pipe
// behind `mcpgw stdio` that connects a stdio MCP client to the daemon and
// outlives the daemon.
//
// The pipe splits the stream on newlines and otherwise copies bytes. It
// keeps what it needs to resume the session on a new connection: the
// client's initialize request and initialized notification, a session
// identity the daemon keeps the session's state under, and the IDs of the
// requests in flight. When the daemon goes away (restart, upgrade, crash)
// the pipe answers the requests in flight with an error, dials again
// (Options.Dial may start a daemon), replays the handshake and initialize,
// swallows the second initialize answer, and the session goes on: the
// client never sees the socket close.
//
// On Linux, when stdin and stdout are pipes or sockets, the shim first
// offers them to the daemon (wire.Hello.Pipes). A daemon that takes
// them serves the client on them itself, passes the shim the handshake
// lines to replay, and answers the requests in flight when it stops; the
// shim only waits on the connection, and hands the pipes to the next
// daemon when this one goes away.
package shim

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/internal/fdpass"
	"github.com/mcpgw/mcpgw/internal/shim/wire"
)

// Options configure Run.
type Options struct {
	// Dial connects to the daemon (starting one if it should); required.
	Dial func(ctx context.Context) (net.Conn, error)
	// Hello is the handshake; Session, Resume and Secret are set by Run.
	Hello wire.Hello
	// Version is the shim's version, compared with the daemon's.
	Version string
	// Logger receives notes for the user (stderr); nil = discard.
	Logger *slog.Logger
	// ReconnectFor bounds how long a lost daemon is waited for before the
	// session gives up; 0 means one minute.
	ReconnectFor time.Duration
}

// ErrRefused wraps the daemon's refusal of a handshake.
var ErrRefused = errors.New("daemon refused the session")

// pipe is one running shim session.
type pipe struct {
	opts   Options
	log    *slog.Logger
	stdout io.Writer

	outMu sync.Mutex // serialises writes to stdout

	mu          sync.Mutex
	conn        net.Conn
	gen         int             // connection generation
	ready       chan struct{}   // closed when conn is usable; replaced while reconnecting
	initLine    []byte          // the client's initialize request
	initialized []byte          // the client's notifications/initialized
	inFlight    map[string]bool // IDs (raw JSON) of requests awaiting an answer
	clientDone  bool            // stdin ended: the session is over

	// handoff are the client's stdin and stdout, offered to each daemon
	// (wire.Hello.Pipes) until one declines; piped says the current
	// daemon took them, and serves the client itself.
	handoff []int
	piped   bool
	table   int // the current daemon's in-flight table (a memfd), or -1
}

// Run pipes stdin to the daemon and the daemon to stdout until stdin ends
// (and the daemon has answered) or the daemon cannot be reached again.
func Run(ctx context.Context, stdin io.Reader, stdout io.Writer, opts Options) error {
	if opts.Dial == nil {
		panic("shim: Options.Dial is required")
	}
	p := &pipe{opts: opts, log: opts.Logger, stdout: stdout, inFlight: map[string]bool{}, ready: make(chan struct{}), table: -1}
	defer p.setTable(-1)
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.opts.ReconnectFor == 0 {
		p.opts.ReconnectFor = time.Minute
	}
	p.opts.Hello.Session = newSessionID()
	p.handoff, _ = clientPipes(stdin, stdout)
	conn, br, err := p.connect(ctx, false)
	if err != nil {
		return err
	}
	p.conn = conn
	close(p.ready)
	for p.piped {
		if conn, br, err = p.watch(ctx, conn, br); conn == nil {
			return err
		}
	}

	if pu := newPump(p, stdin, stdout); pu != nil {
		defer pu.close()
		return p.pumpLoop(ctx, pu, conn, br)
	}
	inDone := make(chan error, 1)
	go func() { inDone <- p.fromClient(ctx, stdin) }()
	err = p.fromDaemon(ctx, br)
	p.mu.Lock()
	c := p.conn
	p.mu.Unlock()
	c.Close()
	select {
	case e := <-inDone:
		if err == nil {
			err = e
		}
	default:
	}
	return err
}

// pumpLoop runs the session on pu, reconnecting when the daemon goes away.
func (p *pipe) pumpLoop(ctx context.Context, pu *pump, conn net.Conn, br *bufio.Reader) error {
	for {
		pending, _ := br.Peek(br.Buffered())
		err := pu.run(ctx, conn, pending)
		conn.Close()
		if !errors.Is(err, errDaemonGone) {
			return err
		}
		if err := pu.flushOut(); err != nil {
			return err
		}
		p.log.Info("the mcpgw daemon went away; reconnecting")
		p.failInFlight()
		if conn, br, err = p.reconnect(ctx); err != nil {
			return err
		}
	}
}

func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// connect dials and performs the handshake; with resume it also replays
// the client's initialize (swallowing the answer) and initialized.
func (p *pipe) connect(ctx context.Context, resume bool) (net.Conn, *bufio.Reader, error) {
	conn, err := p.opts.Dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	uc, _ := conn.(*net.UnixConn)
	p.mu.Lock()
	hello := p.opts.Hello
	hello.Resume = resume
	if !resume {
		hello.Secret = ""
	}
	hello.Pipes = p.handoff != nil && uc != nil
	if hello.Pipes && resume {
		for _, l := range [][]byte{p.initLine, p.initialized} {
			if l != nil {
				hello.Replay = append(hello.Replay, string(l))
			}
		}
	}
	p.mu.Unlock()
	data, _ := json.Marshal(hello)
	data = append(data, '\n')
	if hello.Pipes {
		_, _, err = uc.WriteMsgUnix(data, syscall.UnixRights(p.handoff...), nil)
	} else {
		_, err = conn.Write(data)
	}
	if err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("sending handshake: %w", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	var src io.Reader = conn
	var fds []int
	if hello.Pipes {
		// The answer may carry the in-flight table.
		src, fds, err = fdpass.Reader(uc, 4096)
		if err != nil {
			conn.Close()
			return nil, nil, fmt.Errorf("reading the daemon's handshake answer: %w", err)
		}
	}
	br := bufio.NewReaderSize(src, 64<<10)
	line, err := br.ReadBytes('\n')
	if err != nil {
		fdpass.Close(fds)
		conn.Close()
		return nil, nil, fmt.Errorf("reading the daemon's handshake answer: %w", err)
	}
	var wel wire.Welcome
	if err := json.Unmarshal(line, &wel); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("the process on the socket is not an mcpgw daemon (answered %q)", strings.TrimSpace(string(line)))
	}
	if !wel.OK {
		conn.Close()
		return nil, nil, fmt.Errorf("%w: %s", ErrRefused, wel.Error)
	}
	if wel.Version != p.opts.Version && !resume {
		p.log.Info(fmt.Sprintf("note: daemon is version %s, this shim %s; restart the daemon to run the same version", wel.Version, p.opts.Version))
	}
	p.mu.Lock()
	if wel.Session != "" {
		// The daemon's name for the session, and the secret that resumes
		// it: no other client of the socket knows that one.
		p.opts.Hello.Session, p.opts.Hello.Secret = wel.Session, wel.Secret
	}
	p.piped = wel.Pipes
	if !wel.Pipes {
		p.handoff = nil // from now on, the shim pipes the bytes
	}
	p.mu.Unlock()
	if wel.Pipes && wel.InFlight && len(fds) == 1 {
		p.setTable(fds[0])
	} else {
		fdpass.Close(fds)
	}
	if resume && !wel.Pipes {
		p.mu.Lock()
		initLine, initialized := p.initLine, p.initialized
		p.mu.Unlock()
		if initLine != nil {
			if _, err := conn.Write(initLine); err != nil {
				conn.Close()
				return nil, nil, fmt.Errorf("replaying initialize: %w", err)
			}
			// The answer to the replayed initialize is the first line: the
			// client has had its own.
			if _, err := br.ReadBytes('\n'); err != nil {
				conn.Close()
				return nil, nil, fmt.Errorf("reading the replayed initialize's answer: %w", err)
			}
		}
		if initialized != nil {
			if _, err := conn.Write(initialized); err != nil {
				conn.Close()
				return nil, nil, fmt.Errorf("replaying initialized: %w", err)
			}
		}
	}
	_ = conn.SetReadDeadline(time.Time{})
	return conn, br, nil
}

// watch waits on the connection of a daemon that serves the client's
// pipes, keeping the lines it passes for a resume, until the session ends
// (nil conn and error) or the daemon goes away: then it reconnects, and
// returns the new connection.
func (p *pipe) watch(ctx context.Context, conn net.Conn, br *bufio.Reader) (net.Conn, *bufio.Reader, error) {
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			break
		}
		var n wire.PipeNote
		if json.Unmarshal(line, &n) != nil {
			continue
		}
		if n.Done {
			conn.Close()
			return nil, nil, nil
		}
		if n.Replay != "" {
			p.mu.Lock()
			if p.initLine == nil {
				p.initLine = []byte(n.Replay + "\n")
			} else if p.initialized == nil {
				p.initialized = []byte(n.Replay + "\n")
			}
			p.mu.Unlock()
		}
	}
	conn.Close()
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	p.log.Info("the mcpgw daemon went away; reconnecting")
	p.answerTable()
	return p.reconnect(ctx)
}

// setTable keeps fd as the in-flight table, closing the one before.
func (p *pipe) setTable(fd int) {
	if p.table >= 0 {
		_ = syscall.Close(p.table)
	}
	p.table = fd
}

// answerTable answers the requests a daemon that is gone left in its
// in-flight table: one that stopped answered them and left it empty; one
// that was killed could not.
func (p *pipe) answerTable() {
	if p.table < 0 {
		return
	}
	buf := make([]byte, wire.InFlightTableSize)
	n, _ := syscall.Pread(p.table, buf, 0)
	for _, id := range wire.InFlightIDs(buf[:max(n, 0)]) {
		_ = p.write(wire.RestartedAnswer(id))
	}
	p.setTable(-1)
}

// fromClient copies client lines to the daemon, noting the handshake lines
// and the IDs of requests. A line that cannot be written waits for the
// reconnection and is written to the new connection: it was never
// received.
func (p *pipe) fromClient(ctx context.Context, stdin io.Reader) error {
	br := bufio.NewReaderSize(stdin, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			p.noteRequest(line)
			for {
				conn, gen, rerr := p.current(ctx)
				if rerr != nil {
					return rerr
				}
				if _, werr := conn.Write(line); werr == nil {
					break
				}
				p.lost(gen)
			}
		}
		if err != nil {
			p.mu.Lock()
			p.clientDone = true
			conn := p.conn
			p.mu.Unlock()
			if uc, ok := conn.(*net.UnixConn); ok {
				_ = uc.CloseWrite()
			} else {
				conn.Close()
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// current waits for a usable connection.
func (p *pipe) current(ctx context.Context) (net.Conn, int, error) {
	for {
		p.mu.Lock()
		ready, conn, gen := p.ready, p.conn, p.gen
		p.mu.Unlock()
		select {
		case <-ready:
			if conn == nil {
				return nil, 0, errors.New("the daemon could not be reached again")
			}
			return conn, gen, nil
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}
}

// lost marks connection generation gen as broken, so writers wait for the
// reader to reconnect.
func (p *pipe) lost(gen int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gen == gen && isClosed(p.ready) {
		p.ready = make(chan struct{})
		p.conn.Close()
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// fromDaemon copies daemon lines to the client and reconnects when the
// daemon goes away before the client has ended.
func (p *pipe) fromDaemon(ctx context.Context, br *bufio.Reader) error {
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && err == nil {
			p.noteAnswer(line)
			if werr := p.write(line); werr != nil {
				return werr
			}
			continue
		}
		p.mu.Lock()
		done := p.clientDone
		p.mu.Unlock()
		if done || ctx.Err() != nil {
			return nil
		}
		p.log.Info("the mcpgw daemon went away; reconnecting", "err", err)
		p.failInFlight()
		_, br, err = p.reconnect(ctx)
		if err != nil {
			return err
		}
	}
}

// reconnect dials until the daemon answers again, within ReconnectFor.
func (p *pipe) reconnect(ctx context.Context) (net.Conn, *bufio.Reader, error) {
	p.mu.Lock()
	if isClosed(p.ready) {
		p.ready = make(chan struct{})
	}
	p.mu.Unlock()
	deadline := time.Now().Add(p.opts.ReconnectFor)
	delay := 20 * time.Millisecond
	for {
		conn, br, err := p.connect(ctx, true)
		if err == nil {
			p.mu.Lock()
			p.conn, p.gen = conn, p.gen+1
			close(p.ready)
			p.mu.Unlock()
			p.log.Info("reconnected to the mcpgw daemon")
			return conn, br, nil
		}
		if errors.Is(err, ErrRefused) || time.Now().After(deadline) {
			p.mu.Lock()
			p.conn = nil
			close(p.ready)
			p.mu.Unlock()
			return nil, nil, fmt.Errorf("the mcpgw daemon went away and could not be reached again: %w", err)
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		delay = min(2*delay, time.Second)
	}
}

func (p *pipe) write(line []byte) error {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	_, err := p.stdout.Write(line)
	return err
}

// failInFlight answers every request in flight with an error: the daemon
// that was handling them is gone, and whether they took effect is unknown.
func (p *pipe) failInFlight() {
	p.mu.Lock()
	ids := p.inFlight
	p.inFlight = map[string]bool{}
	p.mu.Unlock()
	for id := range ids {
		_ = p.write(wire.RestartedAnswer([]byte(id)))
	}
}

// noteRequest records the handshake lines and the ID of a request. Only
// the envelope's first fields are looked at: the line is not decoded.
func (p *pipe) noteRequest(line []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.initLine == nil && bytes.Contains(line, []byte(`"initialize"`)) && methodIs(line, "initialize") {
		p.initLine = bytes.Clone(line)
	}
	if p.initialized == nil && bytes.Contains(line, []byte(`"notifications/initialized"`)) {
		p.initialized = bytes.Clone(line)
	}
	if id, ok := envelopeID(line); ok && bytes.Contains(line, []byte(`"method"`)) {
		p.inFlight[string(id)] = true
	}
}

// noteAnswer forgets the ID of an answered request.
func (p *pipe) noteAnswer(line []byte) {
	if bytes.Contains(line[:min(len(line), 128)], []byte(`"method"`)) {
		return // a request or notification from the daemon
	}
	if id, ok := envelopeID(line); ok {
		p.mu.Lock()
		delete(p.inFlight, string(id))
		p.mu.Unlock()
	}
}

// methodIs reports whether line's "method" member is m.
func methodIs(line []byte, m string) bool {
	var env struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(line, &env) == nil && env.Method == m
}

// envelopeID finds the top-level "id" of a JSON-RPC message by scanning
// its first members, without decoding the rest: JSON-RPC encoders (the
// daemon's among them) write jsonrpc and id before params or result.
// Messages whose id comes later are not tracked, which only means they are
// not failed early on a restart.
func envelopeID(line []byte) ([]byte, bool) {
	head := line[:min(len(line), 256)]
	i := bytes.Index(head, []byte(`"id"`))
	if i < 0 || bytes.Count(head[:i], []byte("{")) != 1 {
		return nil, false
	}
	rest := bytes.TrimLeft(head[i+4:], " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return nil, false
	}
	rest = bytes.TrimLeft(rest[1:], " \t")
	var end int
	switch {
	case len(rest) > 0 && rest[0] == '"':
		j := bytes.IndexByte(rest[1:], '"')
		if j < 0 {
			return nil, false
		}
		end = j + 2
	default:
		end = bytes.IndexAny(rest, ",}")
		if end <= 0 {
			return nil, false
		}
	}
	id := bytes.TrimSpace(rest[:end])
	if len(id) == 0 || bytes.Equal(id, []byte("null")) {
		return nil, false
	}
	return id, true
}
