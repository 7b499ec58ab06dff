package gateway

import (
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"
	"weak"
)

// An ended session is collected: nothing the daemon keeps (its pools,
// subscriptions, held streams, fast calls, timers) holds it once its client
// has closed it. Each of twenty sessions holds its GET stream open, lists
// its tools and makes a fast call before its client's DELETE.
func TestEndedSessionsAreCollected(t *testing.T) {
	gw, ts, _, _ := fastCallSession(t)
	gw.mu.Lock()
	before := make(map[*session]bool, len(gw.sessions))
	for ss := range gw.sessions {
		before[ss] = true
	}
	gw.mu.Unlock()
	var ids []string
	for range 20 {
		s := openRawSession(t, ts.URL+"/mcp")
		resp := s.stream()
		go func() { _, _ = io.Copy(io.Discard, resp.Body); resp.Body.Close() }()
		s.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if body, _ := s.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a_echo","arguments":{"message":"hi"}}}`); len(body) == 0 {
			t.Fatal("no answer to the call")
		}
		ids = append(ids, s.id)
	}
	var ended []weak.Pointer[session]
	gw.mu.Lock()
	for ss := range gw.sessions {
		if !before[ss] {
			ended = append(ended, weak.Make(ss))
		}
	}
	gw.mu.Unlock()
	if len(ended) != len(ids) {
		t.Fatalf("%d new sessions registered, want %d", len(ended), len(ids))
	}
	for _, id := range ids {
		req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/mcp", nil)
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	alive := len(ended)
	for deadline := time.Now().Add(time.Minute); alive > 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		runtime.GC() // until what the sessions' ends set going has finished
		alive = 0
		for _, wp := range ended {
			if wp.Value() != nil {
				alive++
			}
		}
	}
	if alive > 0 {
		t.Errorf("%d of %d ended sessions still reachable a minute after their DELETE", alive, len(ended))
	}
}
