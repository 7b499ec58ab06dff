//go:build unix

package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestForeignHostRefusedOnEveryPath: a page that reached the daemon by DNS
// rebinding (a loopback connection under a foreign Host) or from another
// origin is refused on /mcp before anything answers it — the fast path's
// tools/call of an established session as much as what the go-sdk
// serves — and the upstream never sees the call.
func TestForeignHostRefusedOnEveryPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
	}, nil)
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")

	post := func(sid, body string, header map[string]string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest("POST", d.MCPURL(), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		for k, v := range header {
			if k == "Host" {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(data)
	}
	code, h, body := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil)
	sid := h.Get("Mcp-Session-Id")
	if code != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	if code, _, body := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); code != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", code, body)
	}
	echo := func(msg string) string {
		return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"go_echo","args":{"message":"` + msg + `"}}}}`
	}
	// The session works, through the fast path.
	if code, _, body := post(sid, echo("from here"), nil); code != 200 || !strings.Contains(body, "from here") {
		t.Fatalf("a call from the loopback name: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, body string
		header     map[string]string
	}{
		{"fast call, foreign Host", echo("REBOUND"), map[string]string{"Host": "evil.example"}},
		{"fast call, foreign Host with the port", echo("REBOUND"), map[string]string{"Host": "evil.example:7332"}},
		{"fast call, a name ending in localhost", echo("REBOUND"), map[string]string{"Host": "localhost.evil.example"}},
		{"fast call, cross-origin", echo("XORIGIN"), map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}},
		{"go-sdk request, foreign Host", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, map[string]string{"Host": "evil.example"}},
	} {
		code, _, body := post(sid, tc.body, tc.header)
		if code != http.StatusForbidden || strings.Contains(body, "REBOUND") || strings.Contains(body, "XORIGIN") {
			t.Errorf("%s: %d %s, want 403 and no answer", tc.name, code, body)
		}
	}
}
