package transport

// Piped sessions: the stdio shim hands the daemon its client's stdin and
// stdout over the socket (SCM_RIGHTS), and the daemon reads and writes the
// client's pipes itself. A call then costs no process between client and
// daemon: the shim sleeps on the connection until the session ends or the
// daemon goes away. What the shim did for a daemon restart moves here:
// the daemon passes the client's initialize and initialized lines to the
// shim (wire.PipeNote.Replay), which sends them back to the next daemon; and a
// daemon that stops answers the requests it has read but not answered,
// as the shim would have, before it lets go of the pipes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/internal/fdpass"
	"github.com/mcpgw/mcpgw/internal/hangup"
	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/mcpgw/mcpgw/internal/rawio"
	"github.com/mcpgw/mcpgw/internal/shim/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readHandshake starts reading a shim connection: the first read also
// takes the descriptors a shim sends with its handshake.
func readHandshake(conn net.Conn) (*bufio.Reader, []int, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return bufio.NewReader(rawio.Conn(conn)), nil, nil
	}
	r, fds, err := fdpass.Reader(uc, 16<<10)
	if err != nil {
		return nil, nil, err
	}
	return bufio.NewReader(r), fds, nil
}

// clientPipes returns the client's stdin and stdout a shim passed with
// hello, when it passed exactly those: two pipes or sockets. The files
// are made non-blocking, so that closing one ends a read in progress.
func clientPipes(hello wire.Hello, fds []int) (in, out *os.File, ok bool) {
	if !hello.Pipes || len(fds) != 2 {
		return nil, nil, false
	}
	for _, fd := range fds {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil {
			return nil, nil, false
		}
		if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
			return nil, nil, false
		}
		if syscall.SetNonblock(fd, true) != nil {
			return nil, nil, false
		}
	}
	return os.NewFile(uintptr(fds[0]), "client stdin"), os.NewFile(uintptr(fds[1]), "client stdout"), true
}

// pipedSession is the daemon's side of a session on a client's pipes.
type pipedSession struct {
	conn net.Conn // to the shim: PipeNotes
	lf   *lineFilter
	in   *os.File
	outF *os.File
	out  *lockedWriter

	mu        sync.Mutex
	inFlight  map[string]bool // IDs (raw JSON) of the client's requests not yet answered
	table     *inFlightTable  // the same, for the shim, should the daemon be killed
	replayed  int             // handshake lines passed to the shim (initialize, initialized)
	swallowID string          // the replayed initialize's ID: its answer is not the client's
	draining  bool            // stopping: only drain writes
}

// servePipes serves the session of a shim that passed its client's pipes.
func (t *Transports) servePipes(ctx context.Context, conn net.Conn, hello wire.Hello, in, out *os.File) error {
	defer out.Close()
	defer in.Close()
	table := newInFlightTable()
	defer table.close()
	t.log.Debug("shim handed over its client's pipes", "session", hello.Session, "resume", hello.Resume)
	ps := &pipedSession{conn: conn, in: in, outF: out, inFlight: map[string]bool{}, table: table}
	var src io.Reader = rawio.File(in)
	if hello.Resume && len(hello.Replay) > 0 {
		var b strings.Builder
		for _, l := range hello.Replay {
			b.WriteString(strings.TrimRight(l, "\n") + "\n")
		}
		if id, ok := jsonwire.Member([]byte(hello.Replay[0]), "id"); ok {
			ps.swallowID = string(id)
		}
		ps.replayed = 2 // the shim has them already
		src = io.MultiReader(strings.NewReader(b.String()), src)
	}
	ps.out = &lockedWriter{w: rawio.File(out), pass: ps.toClient}
	// bufio's default size: ReadBytes takes longer lines in pieces, and a
	// quiet session (most of them) holds no more than that.
	ps.lf = &lineFilter{br: bufio.NewReader(src), c: in, w: ps.out, seen: ps.fromClient}

	// When the daemon stops, the session is drained first (see drain),
	// and the pipes are let go only then.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	drained := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(drained)
		ps.drain(cancel)
	})
	// The shim's end of the connection carries nothing more; its end
	// means the shim is gone (the client stopped it, or it was killed),
	// and with it the session, as when a server process exits.
	stopWatch := hangup.Watch(conn, false, cancel)
	defer stopWatch()

	err := t.hub.ServeSession(sctx, &mcp.IOTransport{Reader: ps.lf, Writer: ps.out}, shimSessionOptions(hello), func(ss Session) error {
		wel := wire.Welcome{OK: true, Version: t.o.Version, Pipes: true, InFlight: table != nil}
		wel.Session, wel.Secret = ss.ShimIdentity()
		if err := writeWelcomeRights(conn, wel, table.rights()); err != nil {
			return err
		}
		t.serveFastOn(ps.lf, ss)
		return nil
	})
	if !stop() {
		<-drained
	} else {
		// The client ended the session.
		ps.note(wire.PipeNote{Done: true})
	}
	return err
}

// fromClient notes a line the client sent: the handshake lines for the
// shim, and the IDs of requests.
func (ps *pipedSession) fromClient(line []byte) {
	id, isReq := requestID(line)
	ps.mu.Lock()
	if isReq && id != nil {
		ps.inFlight[string(id)] = true
		ps.table.add(string(id))
	}
	replay := false
	if ps.replayed < 2 && isReq {
		method, _ := jsonwire.Member(line, "method")
		replay = ps.replayed == 0 && id != nil && string(method) == `"initialize"` ||
			ps.replayed == 1 && id == nil && string(method) == `"notifications/initialized"`
	}
	if replay {
		ps.replayed++
	}
	ps.mu.Unlock()
	if replay {
		ps.note(wire.PipeNote{Replay: string(bytes.TrimRight(line, "\r\n"))})
	}
}

// toClient notes a line for the client (an answer ends a request in
// flight) and says whether it is written: not the answer to a replayed
// initialize, and nothing but drain's once draining.
func (ps *pipedSession) toClient(line []byte) bool {
	id, isReq := requestID(line)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.draining {
		return false
	}
	if !isReq && id != nil {
		delete(ps.inFlight, string(id))
		ps.table.remove(string(id))
		if ps.swallowID != "" && string(id) == ps.swallowID {
			ps.swallowID = ""
			return false
		}
	}
	return true
}

// drain runs when the daemon stops: it stops reading the client, answers
// every request read and not answered (those still buffered too) with the
// error the shim gives for a restart, and then nothing more is written.
// Lines still in the pipe are the next daemon's.
func (ps *pipedSession) drain(closeSession func()) {
	ps.mu.Lock()
	ps.draining = true
	ps.mu.Unlock()
	// A client that does not read its stdout holds up no shutdown.
	_ = ps.outF.SetWriteDeadline(time.Now().Add(2 * time.Second))
	closeSession()
	_ = ps.in.Close() // ends a read in progress
	ps.lf.mu.Lock()   // the reader is out
	buffered, _ := ps.lf.br.Peek(ps.lf.br.Buffered())
	for len(buffered) > 0 {
		line := buffered
		if i := bytes.IndexByte(buffered, '\n'); i >= 0 {
			line, buffered = buffered[:i+1], buffered[i+1:]
		} else {
			buffered = nil
		}
		if id, isReq := requestID(line); isReq && id != nil {
			ps.mu.Lock()
			ps.inFlight[string(id)] = true
			ps.mu.Unlock()
		}
	}
	ps.lf.mu.Unlock()
	ps.mu.Lock()
	ids := ps.inFlight
	ps.inFlight = map[string]bool{}
	ps.mu.Unlock()
	ps.out.mu.Lock()
	defer ps.out.mu.Unlock()
	for id := range ids {
		_, _ = ps.out.w.Write(wire.RestartedAnswer([]byte(id)))
	}
	ps.mu.Lock()
	ps.table.clear()
	ps.mu.Unlock()
}

func (ps *pipedSession) note(n wire.PipeNote) {
	data, _ := json.Marshal(n)
	_, _ = ps.conn.Write(append(data, '\n'))
}

// requestID returns a message's top-level id and whether it is a request
// or notification (has a method) rather than an answer.
func requestID(line []byte) (id []byte, isRequest bool) {
	_, isRequest = jsonwire.Member(line, "method")
	id, ok := jsonwire.Member(line, "id")
	if !ok || string(id) == "null" {
		id = nil
	}
	return id, isRequest
}
