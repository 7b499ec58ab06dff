//go:build linux

package shim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/shim/wire"
)

// echoDaemon accepts shim connections on a unix socket, answers the
// handshake, and answers every request line with a response of the same
// ID and about the same size, whose result gives the request's length. Like the daemon, it reads
// on while its answers wait to be written. Each connection it accepted
// is sent on conns.
func echoDaemon(t *testing.T) (sock string, conns chan net.Conn) {
	t.Helper()
	sock = filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns = make(chan net.Conn, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
			go serveEcho(c)
		}
	}()
	return sock, conns
}

func serveEcho(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 1<<20)
	if _, err := br.ReadBytes('\n'); err != nil {
		return
	}
	wel, _ := json.Marshal(wire.Welcome{OK: true, Version: "test"})
	c.Write(append(wel, '\n'))
	answers := make(chan []byte, 1<<17)
	written := make(chan struct{})
	go func() {
		defer close(written)
		for a := range answers {
			if _, err := c.Write(a); err != nil {
				return
			}
		}
	}()
	defer func() { close(answers); <-written }()
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(line, &req) == nil && req.ID != nil {
				n := len(bytes.TrimSpace(line))
				answers <- []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"len":%d,"pad":%q}}`+"\n", req.ID, n, strings.Repeat("a", n)))
			}
		}
		if err != nil {
			return
		}
	}
}

// answerFor is the echo daemon's answer to a request line.
func answerFor(id any, line string) string {
	idJSON, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"len":%d,"pad":%q}}`, idJSON, len(line), strings.Repeat("a", len(line)))
}

// runPumped runs the shim between pipes standing in for the client's
// stdin and stdout; it returns the client's ends and Run's result.
func runPumped(t *testing.T, sock string) (stdin *os.File, stdout *os.File, done chan error) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// A client's pipes are blocking on the shim's side, as a spawned
	// process gets them (Fd puts them in blocking mode).
	inR.Fd()
	outW.Fd()
	done = make(chan error, 1)
	go func() {
		err := Run(context.Background(), inR, outW, Options{
			Dial:         func(context.Context) (net.Conn, error) { return net.Dial("unix", sock) },
			ReconnectFor: 5 * time.Second,
		})
		outW.Close()
		inR.Close()
		done <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return inW, outR, done
}

// TestPumpCopiesBothWays: lines of every size, many at once, reach the
// daemon and come back whole and in order, and the session ends cleanly
// once the client's input ends.
func TestPumpCopiesBothWays(t *testing.T) {
	sock, _ := echoDaemon(t)
	stdin, stdout, done := runPumped(t, sock)
	var lines, want []string
	for i := range 300 {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"x","params":{"pad":%q}}`, i, strings.Repeat("p", i*37)))
		want = append(want, answerFor(i, lines[i]))
	}
	big := `{"jsonrpc":"2.0","id":"big","method":"x","params":{"pad":"` + strings.Repeat("b", 3<<20) + `"}}`
	lines = append(lines, big)
	want = append(want, answerFor("big", big))
	var got []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				got = append(got, strings.TrimSuffix(line, "\n"))
			}
			if err != nil {
				return
			}
		}
	}()
	// Written all at once, and the last line without its newline: the
	// pump takes the end of input as its end.
	all := strings.Join(lines, "\n")
	if _, err := io.Copy(stdin, strings.NewReader(all)); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the session did not end after the client's input did")
	}
	wg.Wait()
	if len(got) != len(lines) {
		t.Fatalf("%d lines came back; want %d", len(got), len(lines))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("answer %d is %.100q; want %q", i, got[i], want[i])
		}
	}
}

// TestPumpKeepsReadingWhileTheClientDoesNot: a client that writes a lot
// before it reads anything (its stdout pipe full meanwhile) still gets
// everything: the pump never blocks one way on the other.
func TestPumpKeepsReadingWhileTheClientDoesNot(t *testing.T) {
	sock, _ := echoDaemon(t)
	stdin, stdout, done := runPumped(t, sock)
	line := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"pad":"` + strings.Repeat("q", 16<<10) + `"}}` + "\n"
	const n = 300 // 5 MiB each way: far more than the pipes hold
	writeDone := make(chan error, 1)
	go func() {
		for range n {
			if _, err := stdin.WriteString(line); err != nil {
				writeDone <- err
				return
			}
		}
		writeDone <- stdin.Close()
	}()
	select {
	case err := <-writeDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the client's writes stalled while it was not reading")
	}
	data, err := io.ReadAll(stdout)
	if err != nil {
		t.Fatal(err)
	}
	answer := answerFor(1, strings.TrimSpace(line)) + "\n"
	if want := n * len(answer); len(data) != want || bytes.Count(data, []byte(answer)) != n {
		t.Fatalf("got %d bytes, %d answers; want %d, %d", len(data), bytes.Count(data, []byte(answer)), want, n)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestPumpReconnects: when the daemon's connection drops, a request in
// flight is answered with an error, the session dials again, replays its
// initialize, and later lines reach the new connection.
func TestPumpReconnects(t *testing.T) {
	sock, conns := echoDaemon(t)
	stdin, stdout, done := runPumped(t, sock)
	br := bufio.NewReader(stdout)
	first := <-conns
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`+"\n")
	if line, _ := br.ReadString('\n'); !strings.Contains(line, `"id":0,"result"`) {
		t.Fatalf("initialize answered %q", line)
	}
	first.Close() // the daemon goes away
	second := <-conns
	_ = second
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":5,"method":"after","params":{}}`+"\n")
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":5,"result"`) {
		t.Fatalf("after reconnecting, got %q, %v", line, err)
	}
	stdin.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestClientPipes: pipes and sockets are handed to the daemon; a regular
// file (or a terminal) stays with the shim.
func TestClientPipes(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer inW.Close()
	c1, c2 := net.Pipe() // not files: no descriptors to hand over
	defer c1.Close()
	defer c2.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fds, ok := clientPipes(inR, inW); !ok || len(fds) != 2 {
		t.Errorf("two pipes: %v, %v; want their descriptors", fds, ok)
	}
	if _, ok := clientPipes(inR, f); ok {
		t.Error("a regular file as stdout was offered to the daemon")
	}
	if _, ok := clientPipes(c1, c2); ok {
		t.Error("a net.Pipe was offered to the daemon")
	}
}
