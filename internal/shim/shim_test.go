package shim

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/shim/wire"
)

func TestEnvelopeID(t *testing.T) {
	for _, tc := range []struct {
		line string
		id   string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"id":9}}`, "7", true},
		{`{"jsonrpc":"2.0","id":"a-b","result":{}}`, `"a-b"`, true},
		{`{"jsonrpc": "2.0", "id" : 12 }`, "12", true},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":3}}`, "", false},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, "", false},
		{`{"method":"x","params":{"nested":{"id":4}}}`, "", false},
	} {
		id, ok := envelopeID([]byte(tc.line))
		if ok != tc.ok || string(id) != tc.id {
			t.Errorf("envelopeID(%s) = %q, %v; want %q, %v", tc.line, id, ok, tc.id, tc.ok)
		}
	}
}

// TestShimResumesWithTheDaemonsSecret: the shim resumes under the ID and
// with the secret the daemon's welcome gave it, not its own ID; a first
// handshake presents no secret.
func TestShimResumesWithTheDaemonsSecret(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	hellos := make(chan wire.Hello, 4)
	go func() {
		for n := 1; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(c)
			line, _ := br.ReadBytes('\n')
			var h wire.Hello
			_ = json.Unmarshal(line, &h)
			hellos <- h
			wel, _ := json.Marshal(wire.Welcome{OK: true, Version: "test", Session: fmt.Sprint("daemon-id-", n), Secret: fmt.Sprint("secret-", n)})
			c.Write(append(wel, '\n'))
			// Answer each request; the first connection goes away after
			// its first answer.
			for {
				line, err := br.ReadBytes('\n')
				if err != nil {
					break
				}
				id, _ := envelopeID(line)
				fmt.Fprintf(c, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id)
				if n == 1 {
					break
				}
			}
			c.Close()
		}
	}()
	stdinR, stdin := io.Pipe()
	stdout, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), stdinR, stdoutW, Options{
			Dial:         func(context.Context) (net.Conn, error) { return net.Dial("unix", sock) },
			Hello:        wire.Hello{Protocol: wire.HandshakeProtocol},
			ReconnectFor: 5 * time.Second,
		})
		stdoutW.Close()
	}()
	out := bufio.NewReader(stdout)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n")
	if line, _ := out.ReadString('\n'); !strings.Contains(line, `"id":1,"result"`) {
		t.Fatalf("initialize answered %q", line)
	}
	first := <-hellos
	if first.Session == "" || first.Resume || first.Secret != "" {
		t.Errorf("first handshake %+v, want a session ID of the shim's and no secret", first)
	}
	second := <-hellos
	if second.Session != "daemon-id-1" || !second.Resume || second.Secret != "secret-1" {
		t.Errorf("resume handshake %+v, want daemon-id-1 with secret-1", second)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	if line, _ := out.ReadString('\n'); !strings.Contains(line, `"id":2,"result"`) {
		t.Fatalf("after the resume, got %q", line)
	}
	stdin.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
