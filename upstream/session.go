package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// legacyProtocolVersion is pinned for upstreams that break on the
// server/discover probe the SDK sends first for protocol 2026-07-28.
const legacyProtocolVersion = "2025-11-25"

// sessionlessProtocol is the first protocol version the SDK probes for
// with server/discover before initialize.
const sessionlessProtocol = "2026-07-28"

// A session is one live connection to an upstream.
type session struct {
	cs     *mcp.ClientSession
	kind   string           // kindStdio, kindStreamable or kindSSE
	proc   *process         // stdio only
	http   *headerTransport // HTTP only
	conn   mcp.Connection   // the transport's connection, for forced close
	lines  *lineConn        // stdio only: raw calls
	pinned bool             // connected with legacyProtocolVersion pinned

	connectedAt time.Time
	closing     atomic.Bool   // closed on purpose (idle, removal, shutdown)
	done        chan struct{} // closed by the watcher when the session has ended

	subMu sync.Mutex
	subs  map[string]bool // the resources subscribed on this connection (subscribe.go)

	levelMu sync.Mutex
	level   mcp.LoggingLevel // the log level the upstream was last set to (logging.go)
}

// ended reports whether the session is known to be over: the connection
// ended, or the process exited.
func (s *session) ended() bool {
	if s.done != nil {
		select {
		case <-s.done:
			return true
		default:
		}
	}
	return s.proc != nil && s.proc.hasExited()
}

// close ends the session and waits for it (and its process) to be gone. If
// force, the transport is closed first, failing in-flight calls, instead of
// the SDK's graceful close, which waits for them.
func (s *session) close(force bool) {
	s.closing.Store(true)
	if force && s.conn != nil {
		_ = s.conn.Close()
	}
	_ = s.cs.Close()
	if s.proc != nil {
		_ = s.proc.Close()
	}
}

// check asks the server whether it still answers: a ping, or at protocol
// 2026-07-28 and later, which removed ping, its tool list.
func (s *session) check(ctx context.Context) error {
	if init := s.cs.InitializeResult(); init != nil && init.ProtocolVersion >= sessionlessProtocol {
		_, err := s.cs.ListTools(ctx, nil)
		return err
	}
	return s.cs.Ping(ctx, nil)
}

func (s *session) pid() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.pid
}

// dialOptions are what a connect attempt knows beyond the server config.
type dialOptions struct {
	client   *mcp.Client
	pinned   bool   // pin legacyProtocolVersion
	httpKind string // the HTTP transport that worked last time, if any
}

func (o dialOptions) sessionOptions() *mcp.ClientSessionOptions {
	if o.pinned {
		return &mcp.ClientSessionOptions{ProtocolVersion: legacyProtocolVersion}
	}
	return nil
}

// dialFunc opens a session to srv (without listing). The pool's default is
// dialDefault; tests substitute in-memory servers.
type dialFunc func(ctx context.Context, u *Upstream, srv *registry.Server, o dialOptions) (*session, error)

func (p *Pool) dialDefault(ctx context.Context, u *Upstream, srv *registry.Server, o dialOptions) (*session, error) {
	if srv.Untrusted {
		return nil, fmt.Errorf("upstream %q (from %s): %w", srv.Name, srv.Source, ErrUntrusted)
	}
	rs, err := p.resolveSecrets(ctx, srv)
	if err != nil {
		return nil, fmt.Errorf("connecting to upstream %q: %w", srv.Name, err)
	}
	srv = rs
	if srv.IsRemote() {
		return p.dialHTTP(ctx, u, srv, o)
	}
	return p.dialStdio(ctx, u, srv, o)
}

func (p *Pool) dialStdio(ctx context.Context, u *Upstream, srv *registry.Server, o dialOptions) (*session, error) {
	if srv.Command == "" {
		return nil, fmt.Errorf("upstream %q has neither command nor url", srv.Name)
	}
	proc, err := p.startProcess(srv, u.logger())
	if errors.Is(err, exec.ErrNotFound) {
		return nil, fmt.Errorf("starting upstream %q: %q is not on the daemon's PATH; %s (%w)", srv.Name, srv.Command, InstallHint(srv.Command), err)
	}
	if err != nil {
		return nil, fmt.Errorf("starting upstream %q: %w", srv.Name, err)
	}
	u.noteProcess(proc)
	t := &stdioTransport{proc: proc, log: u.logger(), progress: &u.progress}
	cs, err := o.client.Connect(ctx, t, o.sessionOptions())
	if err != nil {
		// If the process died, say so (with its stderr). Otherwise end it in
		// the background: the caller should learn of the failure now.
		var exit *ExitError
		if ctx.Err() == nil {
			exit = proc.exitError(ctx, exitWait)
		}
		if exit != nil {
			err = fmt.Errorf("initializing upstream %q: %w", srv.Name, exit)
		} else {
			err = fmt.Errorf("initializing upstream %q: %w%s", srv.Name, err, proc.stderrTail())
		}
		if !proc.readInput() {
			err = failedAtStart{err}
		}
		p.closeInBackground(proc)
		return nil, err
	}
	return &session{cs: cs, kind: kindStdio, proc: proc, conn: t.conn, lines: t.conn, pinned: o.pinned}, nil
}

// closeInBackground ends proc on a pool goroutine (or now, if the pool is
// shutting down).
func (p *Pool) closeInBackground(proc *process) {
	if !p.goTracked(func() { _ = proc.Close() }) {
		_ = proc.Close()
	}
}

// retryPinned reports whether a failed first connect looks like an old
// server that died on, or hung up at, the server/discover probe.
func retryPinned(err error) bool {
	var exit *ExitError
	return !errors.As(err, new(failedAtStart)) && (errors.As(err, &exit) || connectionGone(err))
}

// failedAtStart is the error of a process that ended the handshake before
// it read a byte of it: it failed on its own (a missing token, a bad
// flag), and starting it again with another protocol version would only
// start it twice.
type failedAtStart struct{ error }

func (e failedAtStart) Unwrap() error { return e.error }

// connectionGone reports whether err says the connection itself ended
// (rather than the peer answering with an error).
func connectionGone(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed)
}

// listAll lists tools, resources and prompts, following pagination.
// Resources and prompts are listed only when the server declares them, and
// a failure there is logged rather than failing the connect.
func listAll(ctx context.Context, cs *mcp.ClientSession, log *slog.Logger) (*Snapshot, error) {
	init := cs.InitializeResult()
	snap := &Snapshot{Tools: []*mcp.Tool{}, Resources: []*mcp.Resource{}, Prompts: []*mcp.Prompt{}}
	caps := &mcp.ServerCapabilities{}
	if init != nil {
		snap.Instructions = init.Instructions
		snap.ServerInfo = init.ServerInfo
		snap.ProtocolVersion = init.ProtocolVersion
		if init.Capabilities != nil {
			caps = init.Capabilities
		}
	}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			if caps.Tools == nil && ctx.Err() == nil {
				// Tools were not declared; the server may simply have none.
				snap.Tools = snap.Tools[:0]
				break
			}
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		snap.Tools = append(snap.Tools, t)
	}
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				log.Warn("listing upstream resources", "error", err)
				snap.Resources = snap.Resources[:0]
				break
			}
			snap.Resources = append(snap.Resources, r)
		}
	}
	if caps.Resources != nil {
		for rt, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				log.Warn("listing upstream resource templates", "error", err)
				snap.Templates = nil
				break
			}
			snap.Templates = append(snap.Templates, rt)
		}
	}
	if caps.Prompts != nil {
		for pr, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				log.Warn("listing upstream prompts", "error", err)
				snap.Prompts = snap.Prompts[:0]
				break
			}
			snap.Prompts = append(snap.Prompts, pr)
		}
	}
	return snap, ctx.Err()
}
