package transport

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replay is what After yields.
func replay(t *testing.T, e *EarlyEvents, session, stream string) []string {
	t.Helper()
	var got []string
	for data, err := range e.After(context.Background(), session, stream, 0) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	return got
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// What is sent to a session's standalone stream before its client opens
// it is kept, and replayed in order when the client first opens it; from
// then on nothing is kept. Other streams, and other sessions, keep
// nothing of it.
func TestEarlyEventsKeptUntilListening(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := NewEarlyEvents(nil)
	for _, m := range []string{"m1", "m2"} {
		if err := e.Append(ctx, "s", "", []byte(m)); err != nil {
			t.Fatalf("Append %s: %v", m, err)
		}
	}
	if err := e.Append(ctx, "s", "req-stream", []byte("answer")); err != errLive {
		t.Errorf("Append to a request's stream: %v, want errLive", err)
	}
	if err := e.Append(ctx, "s", "", nil); err != errLive {
		t.Errorf("Append of nothing: %v, want errLive", err)
	}
	listening := e.Listening("s")
	if e.Kept("s") != 2 || isClosed(listening) || e.Kept("other") != 0 {
		t.Fatalf("kept %d (other %d), listening %v", e.Kept("s"), e.Kept("other"), isClosed(listening))
	}
	if got := replay(t, e, "s", "req-stream"); len(got) != 0 || isClosed(listening) || e.Kept("s") != 2 {
		t.Fatalf("another stream replayed %q; listening %v, kept %d", got, isClosed(listening), e.Kept("s"))
	}
	if got := replay(t, e, "other", ""); len(got) != 0 {
		t.Errorf("another session replayed %q", got)
	}
	if got := replay(t, e, "s", ""); !slices.Equal(got, []string{"m1", "m2"}) {
		t.Errorf("replayed %q, want m1, m2", got)
	}
	if !isClosed(listening) || !isClosed(e.Listening("s")) || e.Kept("s") != 0 {
		t.Errorf("after the client listens: listening %v, kept %d", isClosed(listening), e.Kept("s"))
	}
	if err := e.Append(ctx, "s", "", []byte("m3")); err != errLive {
		t.Errorf("Append once listening: %v, want errLive", err)
	}
	if got := replay(t, e, "s", ""); len(got) != 0 {
		t.Errorf("a second open replayed %q", got)
	}
}

// A session keeps at most earlyLimit messages and earlyBytes bytes; what
// is over is refused, with how many wait.
func TestEarlyEventsBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := NewEarlyEvents(nil)
	for i := range earlyLimit {
		if err := e.Append(ctx, "many", "", []byte("x")); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	err := e.Append(ctx, "many", "", []byte("x"))
	if err == nil || err.Error() != "mcpgw: 256 messages wait for a client that has not opened its stream" || e.Kept("many") != earlyLimit {
		t.Errorf("message %d: %v, kept %d", earlyLimit+1, err, e.Kept("many"))
	}
	if err := e.Append(ctx, "big", "", make([]byte, earlyBytes)); err != nil {
		t.Fatalf("%d bytes: %v", earlyBytes, err)
	}
	if err := e.Append(ctx, "big", "", []byte("x")); err == nil || e.Kept("big") != 1 {
		t.Errorf("one byte more: %v, kept %d", err, e.Kept("big"))
	}
}

// A session the SDK closes is forgotten, and the hub told.
func TestEarlyEventsSessionClosed(t *testing.T) {
	t.Parallel()
	closed := make(chan string, 1)
	e := NewEarlyEvents(func(id string) { closed <- id })
	_ = e.Append(context.Background(), "s", "", []byte("m1"))
	if err := e.SessionClosed(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
	if id := <-closed; id != "s" || e.Kept("s") != 0 {
		t.Errorf("closed %q, kept %d", id, e.Kept("s"))
	}
}

// Over HTTP: a message the session sends its client before the client
// opens its GET stream is kept, and is the first event on that stream;
// the client's DELETE cancels the session's requests first and the hub
// hears that the session has closed.
func TestEarlyEventsOverHTTP(t *testing.T) {
	t.Parallel()
	s := newSurface("")
	s.hub.closed = make(chan string, 1)
	srv := httptest.NewUnstartedServer(s.h)
	srv.Config.ConnContext = ConnContext
	srv.Start()
	defer srv.Close()
	post := func(sid, body string) *http.Response {
		t.Helper()
		r, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Content-Type", "application/json")
		if sid != "" {
			r.Header.Set("Mcp-Session-Id", sid)
			r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post("", initializeBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	if opened, _, _ := s.hub.record(); len(opened) != 1 {
		t.Fatalf("%d sessions opened, want 1", len(opened))
	}
	if resp := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	var ss *mcp.ServerSession
	for ss = range s.hub.server.Sessions() {
	}
	if err := ss.NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: "t1", Progress: 1, Message: "early"}); err != nil {
		t.Fatal(err)
	}
	listening := s.tr.Events().Listening(sid)
	if s.tr.Events().Kept(sid) != 1 || isClosed(listening) {
		t.Fatalf("kept %d, listening %v; want 1 kept, not listening", s.tr.Events().Kept(sid), isClosed(listening))
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/mcp", nil)
	r.Header.Set("Accept", "text/event-stream")
	r.Header.Set("Mcp-Session-Id", sid)
	r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	stream, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stream.Body)
	var data string
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = d
			break
		}
	}
	cancel()
	stream.Body.Close()
	if !strings.Contains(data, `"method":"notifications/progress"`) || !strings.Contains(data, `"message":"early"`) {
		t.Errorf("the stream's first event is %q, want the progress sent before it opened", data)
	}
	if !isClosed(listening) || s.tr.Events().Kept(sid) != 0 {
		t.Errorf("after the GET: listening %v, kept %d", isClosed(listening), s.tr.Events().Kept(sid))
	}

	r, _ = http.NewRequest("DELETE", srv.URL+"/mcp", nil)
	r.Header.Set("Mcp-Session-Id", sid)
	r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	del, err := srv.Client().Do(r)
	if err != nil {
		t.Fatal(err)
	}
	del.Body.Close()
	if _, _, canceled := s.hub.record(); del.StatusCode >= 300 || !slices.Equal(canceled, []string{sid}) {
		t.Errorf("DELETE: %d, canceled %q", del.StatusCode, canceled)
	}
	if id := <-s.hub.closed; id != sid {
		t.Errorf("closed %q, want %q", id, sid)
	}
}
