package gateway

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// listen opens the session's GET stream and returns the JSON-RPC messages
// it carries, one per event.
func (s *rawHTTPSession) listen() <-chan map[string]any {
	s.t.Helper()
	resp := s.stream()
	s.t.Cleanup(func() { resp.Body.Close() })
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
func startRaw(t *testing.T, gw *Hub, query string) *rawHTTPSession {
	t.Helper()
	ts := httptest.NewServer(gw.Handler(nil))
	t.Cleanup(ts.Close)
	return openRawSessionWith(t, ts.URL+"/mcp"+query, `{"elicitation":{}}`)
}

// kept is how many messages gw keeps for session id's stream.
func kept(gw *Hub, id string) int { return gw.transports.Events().Kept(id) }

// elicitingGateway is a gateway whose server "conf" elicits (over
// Streamable HTTP, on protocol 2026-07-28).
func elicitingGateway(t *testing.T) *Hub {
	t.Helper()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return fakeupstream.ConformanceServer()
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
	t.Parallel()
	rs := startRaw(t, elicitingGateway(t), "?mode=direct")
	type answer struct {
		status int
		body   string
	}
	done := make(chan answer, 1)
	go func() {
		status, body, _, err := rs.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"conf_test_elicitation","arguments":{"message":"who?"}}}`)
		if err != nil {
			body = []byte(err.Error())
		}
		done <- answer{status, string(body)}
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
	if status, body, _, err := rs.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"action":"accept","content":{"username":"ada","email":"ada@example.com"}}}`); err != nil || status != http.StatusAccepted {
		t.Fatalf("answering the elicitation: %d %s %v", status, body, err)
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
	body, _ := rs.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"conf_test_elicitation","arguments":{"message":"who?"}}}`)
	if !strings.Contains(string(body), `"isError":true`) || !strings.Contains(string(body), "has not opened its event stream") {
		t.Fatalf("call = %s, want an error result naming the event stream", body)
	}
}

// What the gateway sends a session before its client listens (here the
// tools ToolSearch activated) is replayed when it does, in order, once.
func TestEarlyNotificationsReplayedOnListen(t *testing.T) {
	t.Parallel()
	gw := elicitingGateway(t)
	rs := startRaw(t, gw, "?mode=toolsearch")
	body, _ := rs.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ToolSearch","arguments":{"query":"select:conf_test_elicitation"}}}`)
	if !strings.Contains(string(body), "conf_test_elicitation") {
		t.Fatalf("ToolSearch = %s", body)
	}
	// The notification is queued for the session (see post); wait until
	// the store holds it.
	deadline := time.Now().Add(10 * time.Second)
	for kept(gw, rs.id) == 0 && time.Now().Before(deadline) {
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
	if n := kept(gw, rs.id); n != 0 {
		t.Errorf("%d messages still kept after the client listened", n)
	}
}
