package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/shim/wire"
	"github.com/mcpgw/mcpgw/registry"
)

// A shim hands the daemon its client's pipes: the daemon serves the client
// on them, passes the handshake lines to the shim, answers the request in
// flight when it stops, and a second daemon resumes the session from the
// replayed lines without the client seeing a second initialize answer.
func TestPipedSession(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeDirect}, "alpha")
	connectNow(t, gw, "alpha")
	dir, err := os.MkdirTemp("", "mcpgw-pipes")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	serve := func() (context.CancelFunc, chan error) {
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- gw.ServeSocket(ctx, ln) }()
		return cancel, done
	}

	inR, inW, _ := os.Pipe()   // the client's stdin
	outR, outW, _ := os.Pipe() // the client's stdout
	defer inW.Close()
	client := bufio.NewReader(outR)
	readClient := func() map[string]any {
		t.Helper()
		_ = outR.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := client.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading the client's stdout: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("client line %q: %v", line, err)
		}
		return m
	}
	send := func(line string) {
		t.Helper()
		if _, err := inW.WriteString(line + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	dial := func(hello wire.Hello) (*bufio.Reader, net.Conn) {
		t.Helper()
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(hello)
		if _, _, err := c.(*net.UnixConn).WriteMsgUnix(append(data, '\n'), syscall.UnixRights(int(inR.Fd()), int(outW.Fd())), nil); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(c)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := br.ReadBytes('\n')
		var wel wire.Welcome
		if err != nil || json.Unmarshal(line, &wel) != nil || !wel.OK || !wel.Pipes {
			t.Fatalf("welcome %q (%v), want the pipes taken", line, err)
		}
		return br, c
	}
	note := func(br *bufio.Reader) (wire.PipeNote, error) {
		line, err := br.ReadBytes('\n')
		var n wire.PipeNote
		if err == nil {
			err = json.Unmarshal(line, &n)
		}
		return n, err
	}

	stop1, done1 := serve()
	hello := wire.Hello{Protocol: wire.HandshakeProtocol, Session: "0123456789abcdef", Pipes: true}
	shim, conn := dial(hello)
	initLine := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	send(initLine)
	if m := readClient(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize answer: %v", m)
	}
	send(initialized)
	var replay []string
	for range 2 {
		n, err := note(shim)
		if err != nil {
			t.Fatal(err)
		}
		replay = append(replay, n.Replay)
	}
	if replay[0] != initLine || replay[1] != initialized {
		t.Fatalf("lines passed to the shim: %q", replay)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"message":"piped"}}}`)
	if m := readClient(); m["id"] != float64(2) || !strings.Contains(fmt.Sprint(m["result"]), "piped") {
		t.Fatalf("echo: %v", m)
	}

	// The daemon stops with a call in flight.
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alpha_sleep","arguments":{"ms":20000}}}`)
	time.Sleep(300 * time.Millisecond)
	stop1()
	m := readClient()
	if e, _ := m["error"].(map[string]any); m["id"] != float64(3) || e == nil || e["message"] != wire.RestartedInFlight {
		t.Fatalf("the call in flight at the stop: %v", m)
	}
	if n, err := note(shim); err == nil {
		t.Fatalf("the shim was told %+v by a daemon that stopped, want the connection closed", n)
	}
	conn.Close()
	if err := <-done1; err != nil {
		t.Fatal(err)
	}

	// The next daemon resumes the session.
	stop2, done2 := serve()
	defer func() { stop2(); <-done2 }()
	hello.Resume, hello.Replay = true, replay
	shim, conn = dial(hello)
	defer conn.Close()
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"message":"resumed"}}}`)
	if m := readClient(); m["id"] != float64(4) || !strings.Contains(fmt.Sprint(m["result"]), "resumed") {
		t.Fatalf("first line after the resume: %v (want the echo, not the replayed initialize's answer)", m)
	}
	inW.Close()
	if n, err := note(shim); err != nil || !n.Done {
		t.Fatalf("after the client's end, the shim got %+v, %v; want done", n, err)
	}
}

// When the shim goes away (its client stopped it), the daemon ends the
// session and lets go of the client's pipes: the client sees its stdout
// end, as when a server process exits.
func TestPipedSessionEndsWithTheShim(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeDirect})
	dir, err := os.MkdirTemp("", "mcpgw-pipes")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gw.ServeSocket(ctx, ln) }()
	defer func() { cancel(); <-done }()

	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	defer inW.Close()
	defer outR.Close()
	c, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(wire.Hello{Protocol: wire.HandshakeProtocol, Session: "fedcba9876543210", Pipes: true})
	if _, _, err := c.(*net.UnixConn).WriteMsgUnix(append(data, '\n'), syscall.UnixRights(int(inR.Fd()), int(outW.Fd())), nil); err != nil {
		t.Fatal(err)
	}
	// The shim's own copies go: only the daemon holds the pipes now.
	inR.Close()
	outW.Close()
	line, err := bufio.NewReader(c).ReadBytes('\n')
	var wel wire.Welcome
	if err != nil || json.Unmarshal(line, &wel) != nil || !wel.Pipes {
		t.Fatalf("welcome %q (%v)", line, err)
	}
	if _, err := inW.WriteString(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"); err != nil {
		t.Fatal(err)
	}
	client := bufio.NewReader(outR)
	_ = outR.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := client.ReadBytes('\n'); err != nil || !strings.Contains(string(line), `"id":1`) {
		t.Fatalf("ping: %q, %v", line, err)
	}
	c.Close()
	if line, err := client.ReadBytes('\n'); err == nil {
		t.Fatalf("after the shim went, the client read %q; want its stdout to end", line)
	} else if !errors.Is(err, io.EOF) {
		t.Fatalf("after the shim went: %v, want the end of stdout", err)
	}
}
