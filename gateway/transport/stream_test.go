package transport

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// heldServer is the go-sdk's Streamable HTTP handler behind holdStreams,
// as the daemon serves sessions, and a session opened on it by a go-sdk
// client that opens no GET of its own.
func heldServer(t *testing.T) (srv *mcp.Server, url string, cs *mcp.ClientSession) {
	t.Helper()
	srv = mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: true})
	ts := httptest.NewServer(holdStreams(h))
	t.Cleanup(ts.Close)
	c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return srv, ts.URL, cs
}

// openStream sends a session's GET on a connection of its own and reads
// the answer's status line and header.
func openStream(t *testing.T, url, session string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n",
		strings.TrimPrefix(url, "http://"), session)
	br := bufio.NewReader(conn)
	var head strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the answer's header: %v (so far %q)", err, head.String())
		}
		if line == "\r\n" {
			return conn, br, head.String()
		}
		head.WriteString(line)
	}
}

// readChunk reads one chunk of a chunked body.
func readChunk(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var n int
	if _, err := fmt.Fscanf(br, "%x\r\n", &n); err != nil {
		t.Fatalf("reading a chunk's size: %v", err)
	}
	b := make([]byte, n+2)
	if _, err := io.ReadFull(br, b); err != nil {
		t.Fatalf("reading a chunk of %d bytes: %v", n, err)
	}
	if string(b[n:]) != "\r\n" {
		t.Fatalf("chunk of %d bytes ends with %q, not CRLF", n, b[n:])
	}
	return string(b[:n])
}

func TestHeldStreamCarriesEventsAsChunks(t *testing.T) {
	srv, url, cs := heldServer(t)
	_, br, head := openStream(t, url, cs.ID())
	for _, want := range []string{"HTTP/1.1 200 OK\r\n", "Content-Type: text/event-stream\r\n", "Transfer-Encoding: chunked\r\n", "Connection: close\r\n"} {
		if !strings.Contains(head, want) {
			t.Errorf("the answer's header has no %q:\n%s", want, head)
		}
	}
	if got := readChunk(t, br); got != ": ok\n\n" {
		t.Fatalf("first chunk %q, want the go-sdk's %q", got, ": ok\n\n")
	}
	// A change of the tool list reaches the session on its stream.
	srv.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	ev := readChunk(t, br)
	if !strings.HasPrefix(ev, "event: message\n") || !strings.Contains(ev, `"method":"notifications/tools/list_changed"`) || !strings.HasSuffix(ev, "\n\n") {
		t.Fatalf("event chunk %q, want one SSE event of notifications/tools/list_changed", ev)
	}
	// The session's end ends the body (the last chunk) and the connection.
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("reading to the connection's end: %v", err)
	}
	if string(rest) != "0\r\n\r\n" {
		t.Fatalf("after the session ended the stream sent %q, want the last chunk %q and the connection's end", rest, "0\r\n\r\n")
	}
}

// A client that hangs up gives its stream back: its next GET is served,
// not refused as a second stream of the session (the go-sdk's 409).
func TestHeldStreamIsReleasedWhenTheClientLeaves(t *testing.T) {
	_, url, cs := heldServer(t)
	conn, _, head := openStream(t, url, cs.ID())
	if !strings.HasPrefix(head, "HTTP/1.1 200 ") {
		t.Fatalf("first GET answered %q", head)
	}
	// While it is open, a second GET is refused: the stream is the session's one.
	c2, br2, head2 := openStream(t, url, cs.ID())
	if !strings.HasPrefix(head2, "HTTP/1.1 409 ") {
		t.Fatalf("second GET while the first is open answered %q, want 409", head2)
	}
	// Refusals are framed as any answer: a chunked body, then the end.
	if body := readChunk(t, br2); !strings.Contains(body, "conflicts") {
		t.Errorf("409's body %q", body)
	}
	if rest, _ := io.ReadAll(br2); string(rest) != "0\r\n\r\n" {
		t.Errorf("after the 409's body: %q, want the last chunk", rest)
	}
	_ = c2.Close()
	_ = conn.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		c3, _, head3 := openStream(t, url, cs.ID())
		if strings.HasPrefix(head3, "HTTP/1.1 200 ") {
			break
		}
		_ = c3.Close()
		if !strings.HasPrefix(head3, "HTTP/1.1 409 ") || time.Now().After(deadline) {
			t.Fatalf("GET after the first client left answered %q", head3)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// What is not a session's GET over HTTP/1.1 is served by net/http as
// before: a POST, and a GET without a session (the go-sdk's 400/405).
func TestHoldStreamsLeavesOtherRequests(t *testing.T) {
	_, url, _ := heldServer(t)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 400 || resp.StatusCode >= 500 || resp.Close {
		t.Fatalf("GET without a session: %d %v %q", resp.StatusCode, resp.Header, body)
	}
}

// TestHeldStreamKeepsWhatTheSDKReads: a held stream's request keeps only
// the headers the go-sdk reads of a GET, with their values, not the
// client's whole header for the session's life.
func TestHeldStreamKeepsWhatTheSDKReads(t *testing.T) {
	seen := make(chan http.Header, 1)
	ts := httptest.NewServer(holdStreams(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {}\n\n"))
	})))
	t.Cleanup(ts.Close)
	host := strings.TrimPrefix(ts.URL, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nUser-Agent: agent/1\r\nAccept: text/event-stream\r\nAccept: application/json\r\n"+
		"Accept-Encoding: gzip\r\nMcp-Session-Id: S1\r\nMcp-Protocol-Version: 2025-11-25\r\nLast-Event-ID: 7_3\r\nX-Padding: %s\r\n\r\n",
		host, strings.Repeat("p", 2000))
	var h http.Header
	select {
	case h = <-seen:
	case <-time.After(10 * time.Second):
		t.Fatal("the held stream's handler never ran")
	}
	want := http.Header{
		"Mcp-Session-Id":       {"S1"},
		"Mcp-Protocol-Version": {"2025-11-25"},
		"Accept":               {"text/event-stream", "application/json"},
		"Last-Event-Id":        {"7_3"},
	}
	if fmt.Sprint(h) != fmt.Sprint(want) {
		t.Errorf("the held request's header is %v, want %v", h, want)
	}
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("status line %q, %v", status, err)
	}
}
