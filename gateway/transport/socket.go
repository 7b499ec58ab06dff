package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/fdpass"
	"github.com/mcpgw/mcpgw/internal/rawio"
	"github.com/mcpgw/mcpgw/internal/shim/wire"
	"github.com/mcpgw/mcpgw/registry"
)

// ServeSocket accepts shim connections on ln until ctx ends or ln is
// closed, serving each as its own MCP session. It returns after every
// connection it accepted has ended.
func (t *Transports) ServeSocket(ctx context.Context, ln net.Listener) error {
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
			if err := t.ServeShim(ctx, conn); err != nil {
				t.log.Debug("shim session ended", "err", err)
			}
		}()
	}
}

// ServeShim serves the session of one shim connection until it ends.
func (t *Transports) ServeShim(ctx context.Context, conn net.Conn) error {
	handed := false
	defer func() {
		if !handed {
			conn.Close()
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br, fds, err := readHandshake(conn)
	if err == nil && len(fds) == 0 {
		// Not a shim's JSON handshake: HTTP, for the HTTP server (see
		// SocketHTTP).
		if b, perr := br.Peek(1); perr == nil && b[0] != '{' {
			_ = conn.SetReadDeadline(time.Time{})
			if handed = t.socketHTTP.hand(&socketConn{Conn: rawio.Conn(conn), r: br}); handed {
				return nil
			}
		}
	}
	var line []byte
	if err == nil {
		line, err = br.ReadBytes('\n')
	}
	if err != nil {
		fdpass.Close(fds)
		return fmt.Errorf("reading shim handshake: %w", err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	var hello wire.Hello
	if err := json.Unmarshal(line, &hello); err != nil || hello.Protocol < 1 {
		fdpass.Close(fds)
		writeWelcome(conn, wire.Welcome{Version: t.o.Version, Error: "not an mcpgw shim handshake"})
		return fmt.Errorf("bad shim handshake %q", line)
	}
	if t.teamOn() {
		fdpass.Close(fds)
		writeWelcome(conn, wire.Welcome{Version: t.o.Version, Error: refuseShimInTeamMode})
		return errors.New("a shim dialled a daemon in team mode")
	}
	if in, out, ok := clientPipes(hello, fds); ok {
		return t.servePipes(ctx, conn, hello, in, out)
	}
	fdpass.Close(fds)
	w := &lockedWriter{w: rawio.Conn(conn)}
	lf := &lineFilter{br: br, c: conn, w: w}
	return t.hub.ServeSession(ctx, &mcp.IOTransport{Reader: lf, Writer: w}, shimSessionOptions(hello), func(ss Session) error {
		// Fields are only ever added, optional, and ignored by daemons
		// that predate them: every protocol from 1 up is understood.
		wel := wire.Welcome{OK: true, Version: t.o.Version}
		wel.Session, wel.Secret = ss.ShimIdentity()
		if err := writeWelcome(conn, wel); err != nil {
			return err
		}
		ss.OnHangup(func() { conn.Close() })
		t.serveFastOn(lf, ss)
		return nil
	})
}

func shimSessionOptions(hello wire.Hello) SessionOptions {
	return SessionOptions{Cwd: hello.Cwd, Mode: registry.Mode(hello.Mode), DirectTools: hello.DirectTools, ClientPrefix: hello.ClientPrefix,
		ID: hello.Session, Resume: hello.Resume, Secret: hello.Secret}
}

// writeWelcomeRights writes wel with the descriptors in rights (an
// SCM_RIGHTS message, none when empty).
func writeWelcomeRights(conn net.Conn, wel wire.Welcome, rights []byte) error {
	uc, ok := conn.(*net.UnixConn)
	if len(rights) == 0 || !ok {
		wel.InFlight = false
		return writeWelcome(conn, wel)
	}
	data, _ := json.Marshal(wel)
	_, _, err := uc.WriteMsgUnix(append(data, '\n'), rights, nil)
	return err
}

func writeWelcome(w io.Writer, wel wire.Welcome) error {
	data, _ := json.Marshal(wel)
	_, err := w.Write(append(data, '\n'))
	return err
}
