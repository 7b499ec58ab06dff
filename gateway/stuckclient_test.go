package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// stuckServer serves the hub's HTTP handler with the test server "a"
// configured, and a session whose client wants every log message and has
// opened its event stream with a tiny receive buffer it never reads. It
// returns the /mcp URL. At the test's end the stuck connection is cut, as
// the daemon's shutdown does after its grace, and the hub must then close.
func stuckServer(t *testing.T) (url string) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	cmd, _, env := fakeupstream.Command()
	srv, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"a": map[string]any{"command": cmd, "env": env}}})
	if err := os.WriteFile(path, srv, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := registry.Load(path, &registry.LoadOptions{Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	gw := New(cfg, &Options{NoBootstrap: true})
	gw.Start()
	hs := httptest.NewServer(gw.Handler(&HTTPOptions{}))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		closed := make(chan struct{})
		go func() { gw.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(30 * time.Second):
			t.Error("the hub is still closing 30 s after the stuck client's connection was cut")
		}
		hs.Close()
	})
	url = hs.URL + "/mcp"
	addr := hs.Listener.Addr().String()
	stuck := openRawSession(t, url)
	stuck.post(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`)
	if body, _ := stuck.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"a_echo","args":{"message":"x"}}}}`); !bytes.Contains(body, []byte(`"x"`)) {
		t.Fatalf("echo: %s", body)
	}
	dialer := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
	}}
	conn, err := dialer.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n", addr, stuck.id)
	return url
}

// logMuch has session s make the test server log n messages of 256 KiB,
// failing if a call is not answered within 30 s.
func logMuch(t *testing.T, s *rawHTTPSession, n int, tag string) {
	t.Helper()
	msg := tag + strings.Repeat("y", 256<<10)
	for i := range n {
		answered := make(chan []byte, 1)
		go func() {
			body, _ := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"a_log","args":{"message":%q,"level":"error"}}}}`, 10+i, msg))
			answered <- body
		}()
		select {
		case body := <-answered:
			if !bytes.Contains(body, []byte("logged")) {
				t.Fatalf("call %d: %.200s", i, body)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("call %d is held up by the client that does not read", i)
		}
	}
}

// The upstream's log messages, and the answers to its calls, reach a
// client that reads them while another client, which does not read, has
// stopped taking its own; once that client's connection is cut (as the
// daemon's shutdown does after its grace), the hub closes (stuckServer's
// cleanup).
func TestStuckClientHoldsNoOtherSessionsLogs(t *testing.T) {
	url := stuckServer(t)
	watcher := openRawSession(t, url)
	watcher.post(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`)
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", watcher.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	marker := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "marker-7f3a") {
				close(marker)
				return
			}
		}
	}()
	logMuch(t, watcher, 60, "")           // enough to fill the stuck client's buffers
	logMuch(t, watcher, 1, "marker-7f3a") // then one the watcher looks for
	select {
	case <-marker:
	case <-time.After(30 * time.Second):
		t.Fatal("the watcher never got the last log message: the stuck client holds the others' logs")
	}
}
