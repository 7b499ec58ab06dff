package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// An HTTP session whose client never sends notifications/initialized is
// closed after initTimeout (it used to hold its memory for the hour of the
// idle timeout); an initialized one is kept.
func TestUninitializedSessionExpires(t *testing.T) {
	old := initTimeout
	initTimeout = 300 * time.Millisecond
	defer func() { initTimeout = old }()
	gw := New(&registry.Config{Servers: map[string]*registry.Server{}}, &Options{NoBootstrap: true})
	defer gw.Close()
	ts := httptest.NewServer(gw.Handler(&HTTPOptions{SessionTimeout: time.Hour}))
	defer ts.Close()

	post := func(id, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gone","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, id)
	}
	// A client that completes the handshake keeps its session.
	c := mcp.NewClient(&mcp.Implementation{Name: "kept", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	deadline := time.Now().Add(10 * time.Second)
	for {
		resp := post(id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the uninitialized session still answers after 10 s: %s", resp.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Errorf("the initialized session was closed too: %v", err)
	}
}
