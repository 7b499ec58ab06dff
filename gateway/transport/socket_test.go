package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/shim/wire"
)

// echo serves a session as a hub would, simply: it gives ready ss (a
// session of no identity if nil), answers each request with its method,
// but never "hold", and tells received of each message's method.
func echo(ss Session, received chan<- string) func(context.Context, mcp.Transport, SessionOptions, func(Session) error) error {
	return func(ctx context.Context, tr mcp.Transport, _ SessionOptions, ready func(Session) error) error {
		if ready != nil {
			given := ss
			if given == nil {
				given = &fakeSession{}
			}
			if err := ready(given); err != nil {
				return err
			}
		}
		conn, err := tr.Connect(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				return err
			}
			method := "response"
			if req, ok := msg.(*jsonrpc.Request); ok {
				method = req.Method
				if req.ID.IsValid() && method != "hold" {
					result, _ := json.Marshal(map[string]string{"echo": method})
					if err := conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: result}); err != nil {
						return err
					}
				}
			}
			received <- method
		}
	}
}

// socketPair is a connected pair of unix sockets, as the shim and the
// daemon hold them.
func socketPair(t *testing.T) (client, daemon *net.UnixConn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socket")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

// shim is a shim connection served by ServeShim on hub, with its
// transports' Options.
type shim struct {
	conn  *net.UnixConn
	lines *bufio.Reader
	done  chan error // ServeShim's error
}

func startShim(t *testing.T, ctx context.Context, hub *fakeHub, o Options) *shim {
	t.Helper()
	client, daemon := socketPair(t)
	o.Version = "test"
	tr := New(hub, o)
	s := &shim{conn: client, lines: bufio.NewReader(client), done: make(chan error, 1)}
	go func() { s.done <- tr.ServeShim(ctx, daemon) }()
	return s
}

// line reads the next line the daemon sent, "" at its end.
func (s *shim) line(t *testing.T) string {
	t.Helper()
	l, err := s.lines.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return l
}

func (s *shim) send(t *testing.T, line string) {
	t.Helper()
	if _, err := s.conn.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
}

// The shim's handshake: one JSON line with the session's options, from
// protocol 1 up, answered with one welcome line; anything else is
// refused with a welcome that says why, and no session is served.
func TestShimHandshake(t *testing.T) {
	t.Parallel()
	const refused = `{"ok":false,"version":"test","error":"not an mcpgw shim handshake"}` + "\n"
	longCwd := "/" + strings.Repeat("d", 100<<10)
	for _, tc := range []struct {
		name    string
		hello   string // sent, and the connection closed after it when it has no newline
		welcome string // the daemon's line, "" for none
		served  *SessionOptions
		err     string // in ServeShim's error
	}{
		{name: "a shim's hello", hello: `{"mcpgw":1,"version":"v1","cwd":"/p","mode":"direct","directTools":"a_*","clientPrefix":"none","session":"S1","resume":true}` + "\n",
			welcome: `{"ok":true,"version":"test"}` + "\n",
			served:  &SessionOptions{Cwd: "/p", Mode: "direct", DirectTools: "a_*", ClientPrefix: "none", ID: "S1", Resume: true}},
		{name: "a newer shim, with fields this daemon does not know", hello: `{"mcpgw":2,"version":"v2","future":{"x":[1]}}` + "\n",
			welcome: `{"ok":true,"version":"test"}` + "\n", served: &SessionOptions{}},
		{name: "a hello longer than the first read", hello: `{"mcpgw":1,"cwd":"` + longCwd + `"}` + "\n",
			welcome: `{"ok":true,"version":"test"}` + "\n", served: &SessionOptions{Cwd: longCwd}},
		{name: "not JSON", hello: "hello daemon\n", welcome: refused, err: "bad shim handshake"},
		{name: "an MCP client, not a shim", hello: initializeBody + "\n", welcome: refused, err: "bad shim handshake"},
		{name: "no protocol", hello: `{"version":"v1","cwd":"/p"}` + "\n", welcome: refused, err: "bad shim handshake"},
		{name: "protocol 0", hello: `{"mcpgw":0}` + "\n", welcome: refused, err: "bad shim handshake"},
		{name: "protocol as a string", hello: `{"mcpgw":"1"}` + "\n", welcome: refused, err: "bad shim handshake"},
		{name: "a negative protocol", hello: `{"mcpgw":-1}` + "\n", welcome: refused, err: "bad shim handshake"},
		{name: "cut short", hello: `{"mcpgw":1,"cwd":"/p"`, err: "reading shim handshake"},
		{name: "nothing", hello: "", err: "reading shim handshake"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			received := make(chan string, 8)
			hub := &fakeHub{}
			hub.serve = echo(nil, received)
			s := startShim(t, context.Background(), hub, Options{})
			s.send(t, tc.hello)
			if !strings.HasSuffix(tc.hello, "\n") {
				_ = s.conn.CloseWrite()
			}
			welcome := s.line(t)
			_ = s.conn.CloseWrite() // ends a session served
			err := <-s.done
			_, served, _ := hub.record()
			if welcome != tc.welcome {
				t.Errorf("welcome %.200q, want %q", welcome, tc.welcome)
			}
			switch {
			case tc.served == nil && len(served) != 0:
				t.Errorf("served %+v, want no session", served)
			case tc.served != nil && (len(served) != 1 || served[0] != *tc.served):
				t.Errorf("served %.200v, want %.200v", served, *tc.served)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("ServeShim: %v, want %q", err, tc.err)
			}
		})
	}
}

// After the handshake, the connection carries the session's lines both
// ways. A line that is not a JSON-RPC message is answered here and the
// session goes on; a tools/call the session takes is answered here (the
// fast path), unless fast calls are off; a cancellation names the fast
// call to its session and goes on to the go-sdk; the session's hangup
// closes the connection.
func TestShimByteStream(t *testing.T) {
	t.Parallel()
	const fastCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	for _, noFast := range []bool{false, true} {
		received := make(chan string, 16)
		ss := &fakeSession{fast: true}
		hub := &fakeHub{}
		hub.serve = echo(ss, received)
		s := startShim(t, context.Background(), hub, Options{NoFastPath: noFast})
		s.send(t, `{"mcpgw":1}`+"\n")
		if w := s.line(t); w != `{"ok":true,"version":"test"}`+"\n" {
			t.Fatalf("welcome %q", w)
		}
		for _, step := range []struct{ send, answer, received string }{
			{send: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, answer: `{"jsonrpc":"2.0","id":1,"result":{"echo":"ping"}}`, received: "ping"},
			{send: "not json", answer: parseErrorLine},
			{send: "\xff\xfe{}", answer: parseErrorLine},
			{send: "42", answer: invalidRequestLine},
			{send: `"a string"`, answer: invalidRequestLine},
			{send: "   "},
			{send: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, answer: `{"jsonrpc":"2.0","id":2,"result":{"echo":"ping"}}`, received: "ping"},
			{send: fastCall, answer: map[bool]string{
				false: `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
				true:  `{"jsonrpc":"2.0","id":7,"result":{"echo":"tools/call"}}`}[noFast],
				received: map[bool]string{true: "tools/call"}[noFast]},
			{send: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, received: "notifications/cancelled"},
		} {
			s.send(t, step.send+"\n")
			if step.answer != "" {
				if got := s.line(t); strings.TrimSuffix(got, "\n") != strings.TrimSuffix(step.answer, "\n") {
					t.Errorf("NoFastPath %v: %q answered %q, want %q", noFast, step.send, got, step.answer)
				}
			}
			if step.received != "" {
				if got := <-received; got != step.received {
					t.Errorf("NoFastPath %v: %q reached the session as %q, want %q", noFast, step.send, got, step.received)
				}
			}
		}
		calls, cancelled := ss.record()
		wantCalls, wantCancelled := []string{`{"name":"echo","arguments":{}}`}, []string{"7"}
		if noFast {
			wantCalls, wantCancelled = nil, nil
		}
		if !slices.Equal(calls, wantCalls) || !slices.Equal(cancelled, wantCancelled) {
			t.Errorf("NoFastPath %v: fast calls %q, cancelled %q; want %q, %q", noFast, calls, cancelled, wantCalls, wantCancelled)
		}
		ss.mu.Lock()
		hangup := ss.hangup
		ss.mu.Unlock()
		if hangup == nil {
			t.Fatal("the session was given no hangup")
		}
		hangup()
		if l := s.line(t); l != "" {
			t.Errorf("after the hangup: %q", l)
		}
		if err := <-s.done; err == nil {
			t.Errorf("ServeShim ended without the connection's error")
		}
	}
}

// ServeSocket serves each connection it accepts until ctx ends, and
// returns once they all have.
func TestServeSocket(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("unix", t.TempDir()+"/s")
	if err != nil {
		t.Fatal(err)
	}
	received := make(chan string, 4)
	hub := &fakeHub{}
	hub.serve = echo(nil, received)
	tr := New(hub, Options{Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.ServeSocket(ctx, ln) }()
	var conns []net.Conn
	for i := range 2 {
		c, err := net.Dial("unix", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
		_, _ = c.Write([]byte(`{"mcpgw":1}` + "\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
		r := bufio.NewReader(c)
		welcome, _ := r.ReadString('\n')
		answer, _ := r.ReadString('\n')
		if welcome != `{"ok":true,"version":"test"}`+"\n" || answer != `{"jsonrpc":"2.0","id":1,"result":{"echo":"ping"}}`+"\n" {
			t.Errorf("connection %d: %q %q", i, welcome, answer)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ServeSocket: %v", err)
	}
	if _, served, _ := hub.record(); len(served) != 2 {
		t.Errorf("%d sessions served, want 2", len(served))
	}
	for i, c := range conns {
		if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Errorf("connection %d still open after ServeSocket returned", i)
		}
	}
}

// TestShimHandshakeIdentity: the secret a shim presents reaches the hub
// with its resume, and the welcome tells the shim the ID and secret its
// session is resumed with, as the hub decided them.
func TestShimHandshakeIdentity(t *testing.T) {
	t.Parallel()
	hub := &fakeHub{ss: &fakeSession{id: "d41d8cd98f00b204", secret: "the-daemons-secret"}}
	hub.serve = func(_ context.Context, _ mcp.Transport, _ SessionOptions, ready func(Session) error) error {
		return ready(hub.ss)
	}
	tr := New(hub, Options{Version: "v"})
	daemon, shim := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- tr.ServeShim(context.Background(), daemon) }()

	hello, _ := json.Marshal(wire.Hello{Protocol: wire.HandshakeProtocol, Session: "0123", Resume: true, Secret: "the-shims-secret"})
	if _, err := shim.Write(append(hello, '\n')); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(shim).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var wel wire.Welcome
	if err := json.Unmarshal(line, &wel); err != nil || !wel.OK || wel.Session != "d41d8cd98f00b204" || wel.Secret != "the-daemons-secret" {
		t.Errorf("welcome %s, want the session's ID and secret", line)
	}
	shim.Close()
	<-done
	if _, served, _ := hub.record(); len(served) != 1 || served[0].ID != "0123" || !served[0].Resume || served[0].Secret != "the-shims-secret" {
		t.Errorf("the hub was asked for %+v", served)
	}
}
