package gateway

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/upstreamtest"
)

// rawSession is a Streamable HTTP client written out by hand, so that a
// test decides when (and whether) it opens its GET stream.
type rawSession struct {
	t   *testing.T
	gw  *Server
	url string
	id  string
}

// gwKept is how many messages the gateway keeps for the session's stream.
func (rs *rawSession) gwKept(t *testing.T) int {
	e := rs.gw.events
	e.mu.Lock()
	defer e.mu.Unlock()
	if es := e.sessions[rs.id]; es != nil {
		return len(es.kept)
	}
	return 0
}

// post sends msg and returns the response body.
func (rs *rawSession) post(msg string) (*http.Response, []byte) {
	rs.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, rs.url, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if rs.id != "" {
		req.Header.Set("Mcp-Session-Id", rs.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		rs.t.Error(err)
		return nil, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// listen opens the session's GET stream and returns the JSON-RPC messages
// it carries, one per event.
func (rs *rawSession) listen() <-chan map[string]any {
	rs.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, rs.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", rs.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		rs.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		rs.t.Fatalf("GET stream: %s", resp.Status)
	}
	rs.t.Cleanup(func() { resp.Body.Close() })
	out := make(chan map[string]any, 16)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m map[string]any
			if json.Unmarshal([]byte(data), &m) == nil {
				out <- m
			}
		}
	}()
	return out
}

// startRaw serves gw over HTTP and initializes a session that can answer
// elicitation, without opening its GET stream.
func startRaw(t *testing.T, gw *Server, query string) *rawSession {
	t.Helper()
	ts := httptest.NewServer(gw.Handler(nil))
	t.Cleanup(ts.Close)
	rs := &rawSession{t: t, gw: gw, url: ts.URL + "/mcp" + query}
	resp, body := rs.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	if resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %v %s", resp, body)
	}
	rs.id = resp.Header.Get("Mcp-Session-Id")
	if resp, _ := rs.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp == nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %v", resp)
	}
	return rs
}

// elicitingGateway is a gateway whose server "conf" elicits (over
// Streamable HTTP, on protocol 2026-07-28).
func elicitingGateway(t *testing.T) *Server {
	t.Helper()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return upstreamtest.ConformanceServer()
	}, nil))
	t.Cleanup(up.Close)
	cfg := &registry.Config{Settings: registry.Settings{ToolPrefix: registry.PrefixServer}, Servers: map[string]*registry.Server{
		"conf": {Name: "conf", URL: up.URL, Enabled: true, Lifecycle: registry.LifecycleLazy, Hash: "conf"},
	}}
	gw := New(cfg, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "conf")
	return gw
}

// A client opens its GET stream in the background after initializing; an
// upstream's elicitation during its first call waits for that stream
// instead of being dropped, and the call completes with the answer.
func TestElicitationWaitsForTheClientsStream(t *testing.T) {
	rs := startRaw(t, elicitingGateway(t), "?mode=direct")
	type answer struct {
		status int
		body   string
	}
	done := make(chan answer, 1)
	go func() {
		resp, body := rs.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"conf_test_elicitation","arguments":{"message":"who?"}}}`)
		if resp == nil {
			done <- answer{}
			return
		}
		done <- answer{resp.StatusCode, string(body)}
	}()
	time.Sleep(300 * time.Millisecond) // the call reaches the upstream before the client listens
	events := rs.listen()
	var req map[string]any
	select {
	case req = <-events:
	case a := <-done:
		t.Fatalf("the call ended before the client listened: %d %s", a.status, a.body)
	case <-time.After(30 * time.Second):
		t.Fatal("no elicitation on the GET stream")
	}
	if req["method"] != "elicitation/create" {
		t.Fatalf("first message on the stream = %v, want elicitation/create", req)
	}
	id, _ := json.Marshal(req["id"])
	if resp, body := rs.post(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"accept","content":{"username":"ada","email":"ada@example.com"}}}`); resp == nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("answering the elicitation: %v %s", resp, body)
	}
	a := <-done
	if a.status != http.StatusOK || !strings.Contains(a.body, `Elicitation completed: action=accept`) || !strings.Contains(a.body, `ada@example.com`) || strings.Contains(a.body, `"isError":true`) {
		t.Fatalf("call = %d %s, want the elicited answer", a.status, a.body)
	}
}

// A client that never listens gets an error naming the stream, after
// listenWait, rather than a call that hangs.
func TestElicitationWithoutAStreamFails(t *testing.T) {
	old := listenWait
	listenWait = 200 * time.Millisecond
	t.Cleanup(func() { listenWait = old })
	rs := startRaw(t, elicitingGateway(t), "?mode=direct")
	resp, body := rs.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"conf_test_elicitation","arguments":{"message":"who?"}}}`)
	if resp == nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"isError":true`) || !strings.Contains(string(body), "has not opened its event stream") {
		t.Fatalf("call = %v %s, want an error result naming the event stream", resp, body)
	}
}

// What the gateway sends a session before its client listens (here the
// tools ToolSearch activated) is replayed when it does, in order, once.
func TestEarlyNotificationsReplayedOnListen(t *testing.T) {
	rs := startRaw(t, elicitingGateway(t), "?mode=toolsearch")
	resp, body := rs.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ToolSearch","arguments":{"query":"select:conf_test_elicitation"}}}`)
	if resp == nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "conf_test_elicitation") {
		t.Fatalf("ToolSearch = %v %s", resp, body)
	}
	// The notification is queued for the session (see post); wait until
	// the store holds it.
	deadline := time.Now().Add(10 * time.Second)
	for rs.gwKept(t) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	events := rs.listen()
	select {
	case m := <-events:
		if m["method"] != "notifications/tools/list_changed" {
			t.Fatalf("first message = %v, want notifications/tools/list_changed", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the list_changed sent before the client listened never arrived")
	}
	if n := rs.gwKept(t); n != 0 {
		t.Errorf("%d messages still kept after the client listened", n)
	}
}
