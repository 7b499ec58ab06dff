package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/fdpass"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HandshakeProtocol is the version of the shim ↔ daemon handshake. The
// daemon refuses a shim that speaks another one, with a message saying
// which side to restart.
const HandshakeProtocol = 1

// Hello is the one JSON line the stdio shim sends when it connects to the
// daemon's unix socket; everything after it is MCP (newline-delimited
// JSON-RPC), copied byte for byte, unless the daemon takes the client's
// pipes (Pipes): then only PipeNotes follow, from the daemon.
type Hello struct {
	Protocol int    `json:"mcpgw"`
	Version  string `json:"version"`        // the shim's mcpgw version
	Cwd      string `json:"cwd,omitempty"`  // the client's working directory
	Mode     string `json:"mode,omitempty"` // proxy, toolsearch, direct or "" for the default
	// DirectTools is the client's MCP_DIRECT_TOOLS, if set.
	DirectTools string `json:"directTools,omitempty"`
	// ClientPrefix is SessionOptions.ClientPrefix (the shim's
	// --client-prefix); shims that predate it send none.
	ClientPrefix string `json:"clientPrefix,omitempty"`
	// Session identifies the client's session across connections: the
	// daemon keeps the session's state (activated tools) under it, on disk,
	// so that a shim that re-dials after a daemon restart resumes it.
	Session string `json:"session,omitempty"`
	// Resume says this connection continues Session: the shim replays the
	// client's initialize next (or, with Pipes, sends it in Replay).
	Resume bool `json:"resume,omitempty"`
	// Pipes says the message carries the client's stdin and stdout (an
	// SCM_RIGHTS message with the handshake's first bytes): the daemon
	// may read and write them itself, and the shim then only watches the
	// connection (see Welcome.Pipes).
	Pipes bool `json:"pipes,omitempty"`
	// Replay, with Pipes and Resume, are the client's initialize request
	// and initialized notification, as the daemon passed them on
	// (PipeNote.Replay): the daemon replays them, and the client does not
	// see the second answer to initialize.
	Replay []string `json:"replay,omitempty"`
}

// PipeNote is one JSON line the daemon writes to a shim whose pipes it
// serves.
type PipeNote struct {
	// Replay is a line of the client's that a resumed session needs: its
	// initialize request, then its initialized notification.
	Replay string `json:"replay,omitempty"`
	// Done says the client has ended the session; the shim exits.
	Done bool `json:"done,omitempty"`
}

// Welcome is the daemon's one-line answer to Hello.
type Welcome struct {
	OK      bool   `json:"ok"`
	Version string `json:"version"`         // the daemon's mcpgw version
	Error   string `json:"error,omitempty"` // why the connection is refused
	// Pipes says the daemon serves the client's pipes the shim passed: no
	// MCP goes over the connection, only PipeNotes from the daemon.
	Pipes bool `json:"pipes,omitempty"`
	// InFlight says the message carries the in-flight table (Linux, see
	// inflight_linux.go): what the shim answers if the daemon is killed.
	InFlight bool `json:"inFlight,omitempty"`
}

// ServeSocket accepts shim connections on ln until ctx ends or ln is
// closed, serving each as its own MCP session. It returns after every
// connection it accepted has ended.
func (s *Server) ServeSocket(ctx context.Context, ln net.Listener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("accepting shim connection: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.serveShim(ctx, conn); err != nil {
				s.log.Debug("shim session ended", "err", err)
			}
		}()
	}
}

func (s *Server) serveShim(ctx context.Context, conn net.Conn) error {
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br, fds, err := readHandshake(conn)
	var line []byte
	if err == nil {
		line, err = br.ReadBytes('\n')
	}
	if err != nil {
		fdpass.Close(fds)
		return fmt.Errorf("reading shim handshake: %w", err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	var hello Hello
	if err := json.Unmarshal(line, &hello); err != nil || hello.Protocol == 0 {
		fdpass.Close(fds)
		writeWelcome(conn, Welcome{Version: s.version, Error: "not an mcpgw shim handshake"})
		return fmt.Errorf("bad shim handshake %q", line)
	}
	if in, out, ok := clientPipes(hello, fds); ok {
		return s.servePipes(ctx, conn, br, hello, in, out)
	}
	fdpass.Close(fds)
	// Fields are only ever added, optional, and ignored by daemons that
	// predate them: every protocol from 1 up is understood.
	if err := writeWelcome(conn, Welcome{OK: true, Version: s.version}); err != nil {
		return err
	}
	w := &lockedWriter{w: conn}
	lf := &lineFilter{br: br, c: conn, w: w}
	t := &mcp.IOTransport{Reader: lf, Writer: w}
	return s.serveTransport(ctx, t, shimSessionOptions(hello), func(ss *session) {
		ss.hangup = func() { conn.Close() }
		if !s.opts.NoFastPath {
			lf.ss.Store(ss)
		}
	})
}

func shimSessionOptions(hello Hello) SessionOptions {
	return SessionOptions{Cwd: hello.Cwd, Mode: Mode(hello.Mode), DirectTools: hello.DirectTools, ClientPrefix: hello.ClientPrefix,
		ID: hello.Session, Resume: hello.Resume}
}

// writeWelcomeRights writes wel with the descriptors in rights (an
// SCM_RIGHTS message, none when empty).
func writeWelcomeRights(conn net.Conn, wel Welcome, rights []byte) error {
	uc, ok := conn.(*net.UnixConn)
	if len(rights) == 0 || !ok {
		wel.InFlight = false
		return writeWelcome(conn, wel)
	}
	data, _ := json.Marshal(wel)
	_, _, err := uc.WriteMsgUnix(append(data, '\n'), rights, nil)
	return err
}

func writeWelcome(w io.Writer, wel Welcome) error {
	data, _ := json.Marshal(wel)
	_, err := w.Write(append(data, '\n'))
	return err
}
