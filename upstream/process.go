//go:build unix

package upstream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/rawio"
	"github.com/mcpgw/mcpgw/registry"
)

// Shutdown timing; variables so tests can shorten them.
var (
	// terminateGrace is how long Close waits after closing stdin, and again
	// after SIGTERM, before escalating (MCP spec: "a reasonable time").
	terminateGrace = 5 * time.Second
	// drainGrace bounds how long output of an exited process is read before
	// the pipes are closed (a process that escaped the group may hold them).
	drainGrace = time.Second
	// exitWait bounds how long a failed call waits to learn whether the
	// process died, so its error can say so.
	exitWait = 2 * time.Second
)

// A process is a running stdio upstream: the command, started in its own
// process group, with stdin/stdout as the MCP stream and stderr captured.
//
// The process owns two goroutines (stderr reader, waiter); both have
// finished when exited is closed. Close may be called any number of times.
type process struct {
	pool   *Pool
	server string
	pid    int
	cmd    *exec.Cmd
	log    *slog.Logger

	stdin     *os.File  // our end of the child's stdin
	in        io.Writer // its writes, raw (internal/rawio)
	stdinOnce sync.Once
	// written counts the bytes written to stdin; unread is how many of
	// them the child had not read when stdin was closed (-1: unknown).
	written   atomic.Int64
	unread    atomic.Int64
	stdout    *os.File  // our end of the child's stdout; closed by wait
	out       io.Reader // its reads, raw
	stdoutEOF chan struct{}
	eofOnce   sync.Once
	stderr    lineRing
	errDone   chan struct{} // stderr reader finished

	mu      sync.Mutex
	reaped  bool  // the leader has been waited for: its PID may be reused
	waitErr error // from cmd.Wait

	exited    chan struct{} // reaped, group ended, output drained
	closeOnce sync.Once
}

// startProcess starts srv's command: environment registry.ServerEnv,
// directory workDir(srv), in a new process group, with a parent-death signal on
// Linux, and registered with the pool's reaper.
func (p *Pool) startProcess(srv *registry.Server, log *slog.Logger) (*process, error) {
	name, args, env := command(srv, registry.ServerEnv(srv, os.Environ()))
	if filepath.Base(srv.Command) == "npx" && filepath.Base(name) != "npx" {
		log.Debug("running npx package directly", "command", name, "args", args)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = workDir(srv)
	cmd.SysProcAttr = childSysProcAttr()

	var files []*os.File // everything to close on failure
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW

	if err := p.spawn(cmd); err != nil {
		closeAll()
		return nil, err
	}
	// The child has its copies; ours of its ends must go so EOFs arrive.
	inR.Close()
	outW.Close()
	errW.Close()

	pr := &process{
		pool:      p,
		server:    srv.Name,
		pid:       cmd.Process.Pid,
		cmd:       cmd,
		log:       log,
		stdin:     inW,
		in:        rawio.File(inW),
		out:       rawio.File(outR),
		stdout:    outR,
		stdoutEOF: make(chan struct{}),
		errDone:   make(chan struct{}),
		exited:    make(chan struct{}),
	}
	p.processStarted(pr)
	go func() {
		defer close(pr.errDone)
		pr.stderr.readLines(errR, log)
		errR.Close()
	}()
	go pr.wait(errR)
	log.Debug("upstream process started", "pid", pr.pid, "command", name)
	return pr, nil
}

// wait reaps the leader, ends what it left in its group, drains its output
// and closes exited.
func (pr *process) wait(errR *os.File) {
	err := pr.cmd.Wait()
	pr.mu.Lock()
	pr.reaped = true
	pr.waitErr = err
	pr.mu.Unlock()
	// The server is gone; anything left in its group is an orphan nobody
	// talks to. (The group ID stays reserved while members remain.)
	_ = syscall.Kill(-pr.pid, syscall.SIGKILL)
	pr.pool.processExited(pr)
	pr.closeStdin()

	deadline := make(chan struct{})
	t := time.AfterFunc(drainGrace, func() { close(deadline) })
	select {
	case <-pr.errDone:
	case <-deadline:
		errR.Close() // unblocks the reader
		<-pr.errDone
	}
	select {
	case <-pr.stdoutEOF:
	case <-deadline:
	}
	t.Stop()
	pr.stdout.Close()
	pr.log.Debug("upstream process exited", "pid", pr.pid, "status", exitStatus(err))
	close(pr.exited)
}

func (pr *process) closeStdin() {
	pr.stdinOnce.Do(func() {
		pr.unread.Store(pipeUnread(pr.stdin))
		pr.stdin.Close()
	})
}

// readInput closes stdin and says whether the child read any of what it
// was sent (true when that cannot be told). A server that exits before it
// reads a byte failed at start; one that reads its first request and
// dies may be an old one that the request killed.
func (pr *process) readInput() bool {
	pr.closeStdin()
	unread := pr.unread.Load()
	return unread < 0 || pr.written.Load() > unread
}

// signalGroup signals the process group unless the leader was already reaped.
func (pr *process) signalGroup(sig syscall.Signal) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if !pr.reaped {
		_ = syscall.Kill(-pr.pid, sig)
	}
}

// Close ends the process as the MCP spec asks for stdio, applied to the
// whole group: close stdin, wait; SIGTERM, wait; SIGKILL. It returns once
// the process has exited and its output is drained.
func (pr *process) Close() error {
	pr.closeOnce.Do(func() {
		pr.closeStdin()
		if pr.waitExited(terminateGrace) {
			return
		}
		pr.log.Debug("upstream process ignored stdin close; sending SIGTERM", "pid", pr.pid)
		pr.signalGroup(syscall.SIGTERM)
		pr.signalGroup(syscall.SIGCONT) // a stopped process gets SIGTERM only once it runs
		if pr.waitExited(terminateGrace) {
			return
		}
		pr.log.Warn("upstream process ignored SIGTERM; sending SIGKILL", "pid", pr.pid)
		pr.signalGroup(syscall.SIGKILL)
	})
	<-pr.exited
	return nil
}

func (pr *process) waitExited(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-pr.exited:
		return true
	case <-t.C:
		return false
	}
}

func (pr *process) hasExited() bool {
	select {
	case <-pr.exited:
		return true
	default:
		return false
	}
}

// exitError waits up to d (or until ctx is done) for the process to exit and
// describes the exit; nil if it is still running.
func (pr *process) exitError(ctx context.Context, d time.Duration) *ExitError {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-pr.exited:
	case <-t.C:
		return nil
	case <-ctx.Done():
		return nil
	}
	pr.mu.Lock()
	err := pr.waitErr
	pr.mu.Unlock()
	return &ExitError{Server: pr.server, PID: pr.pid, Status: exitStatus(err), Stderr: pr.stderr.tail(stderrInError)}
}

// stderrLines returns up to n of the last stderr lines.
func (pr *process) stderrLines(n int) []string { return pr.stderr.tail(n) }

// stderrTail formats the last stderr lines for an error message.
func (pr *process) stderrTail() string { return stderrSuffix(pr.stderr.tail(stderrInError)) }

func exitStatus(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &ee):
		return ee.ProcessState.String()
	default:
		return err.Error()
	}
}

// stdioTransport connects an MCP client to a started process, over a
// lineConn. It keeps the connection so the session can be torn down
// without waiting for in-flight calls (see session.close), and make raw
// calls.
type stdioTransport struct {
	proc     *process
	log      *slog.Logger
	progress *progressWatches // the upstream's, counted as read
	conn     *lineConn
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	t.conn = newLineConn(stdoutReader{t.proc}, stdinWriter{t.proc}, stdinWriter{t.proc}, t.log, t.progress)
	return t.conn, nil
}

// stdoutReader reads the child's stdout and notes EOF. Closing it does
// nothing: the process closes the pipe once the child has gone.
type stdoutReader struct{ pr *process }

func (r stdoutReader) Read(b []byte) (int, error) {
	n, err := r.pr.out.Read(b)
	if err != nil {
		r.pr.eofOnce.Do(func() { close(r.pr.stdoutEOF) })
	}
	return n, err
}

func (stdoutReader) Close() error { return nil }

// stdinWriter writes the child's stdin; closing it ends the process
// without waiting for it: the SDK closes the connection inline when a
// connect fails, and the caller must learn of the failure at once, not
// after a process that ignores its stdin has been made to stop. (The
// session's owner waits for the end with Close where it needs to.)
type stdinWriter struct{ pr *process }

func (w stdinWriter) Write(b []byte) (int, error) {
	n, err := w.pr.in.Write(b)
	w.pr.written.Add(int64(n))
	return n, err
}
func (w stdinWriter) Close() error {
	w.pr.closeStdin()
	go w.pr.Close() // bounded: SIGKILL after two grace periods
	return nil
}

var _ io.ReadCloser = stdoutReader{}
