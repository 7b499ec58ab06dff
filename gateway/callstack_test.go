package gateway

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// A fast call's whole path, from net/http's connection goroutine down to
// the write of its request to a stdio upstream, fits in an 8 KB stack: a
// connection that carried calls keeps the stack its deepest call grew
// (the collector halves a stack only when a quarter of it is in use), and
// 64 sessions each waiting on a call hold 64 of them. The connections are
// raw TCP, so the stacks counted are the daemon's; the collector is off
// while they are counted, so that none shrinks.
//
// Not parallel: it reads the process's stack memory. CI runs it without
// the race detector too (.ci/run).
func TestFastCallPathFitsASmallStack(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector doubles each goroutine's stack guard and grows its frames: stack sizes are the release's only without it")
	}
	_, ts, s, _ := fastCallSession(t)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a_echo","arguments":{"message":"hello through mcpgw"}}}`
	s.post(call) // the upstream is up, and every first-use cache filled

	const conns = 32
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	host := strings.TrimPrefix(ts.URL, "http://")
	for i := range conns {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s",
			host, s.id, len(call), call)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), "hello through mcpgw") {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, body)
		}
		// The connection stays open: its goroutine waits for the next
		// request with the stack the call grew.
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	perConn := (int64(after.StackInuse) - int64(before.StackInuse)) / conns
	t.Logf("stack memory per connection that carried a call: %d bytes", perConn)
	if perConn > 12<<10 {
		t.Errorf("each connection that carried a fast call holds %d bytes of stack; want 8 KB (a call's path deeper than 8 KB doubles it to 16)", perConn)
	}
}
