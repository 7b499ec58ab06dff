package gateway

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestOversizedNamesGetShortAnswers: a caller that writes a megabyte
// where a name or a search goes (a tool, a server, a prompt, a search
// or a pattern, a client's name) gets the answer it would
// get for a short one, quoting the start of what it sent and its length,
// and the audit log a line of a few kilobytes: the model is not sent back
// what it sent, and the log's files are not filled by one request.
func TestOversizedNamesGetShortAnswers(t *testing.T) {
	t.Parallel()
	const n = 1 << 20
	long := "a_echo" + strings.Repeat("é", n/2)
	words := strings.Repeat("echo words ", n/11)
	for _, tc := range []struct {
		mode     registry.Mode
		name     string
		args     map[string]any
		want     string // the start of the answer's text
		sentSize int    // the size the answer gives for what was sent
	}{
		{registry.ModeDirect, long, nil, `Unknown tool "a_echoéé`, len(long)},
		{registry.ModeToolSearch, "ToolSearch", map[string]any{"query": words}, `Activated 2 tools for this session`, 0},
		{registry.ModeToolSearch, "ToolSearch", map[string]any{"query": "zzqx " + strings.Repeat("q", n)}, `No tools match "zzqx qqq`, n + 5},
		{registry.ModeProxy, "mcp", map[string]any{"tool": long}, `Unknown tool "a_echoéé`, len(long)},
		{registry.ModeProxy, "mcp", map[string]any{"connect": long}, `Unknown server "a_echoéé`, len(long)},
		{registry.ModeProxy, "mcp", map[string]any{"prompt": long}, `Unknown prompt "a_echoéé`, len(long)},
		{registry.ModeProxy, "mcp", map[string]any{"search": "zzqx " + strings.Repeat("q", n)}, `No tools match "zzqx qqq`, n + 5},
		{registry.ModeProxy, "mcp", map[string]any{"search": strings.Repeat("(e|", n/3), "regex": true}, `Search "(e|(e|`, n / 3 * 3},
	} {
		t.Run(string(tc.mode)+"/"+tc.want[:12], func(t *testing.T) {
			t.Parallel()
			s, auditLog := auditedSession(t, tc.mode, strings.Repeat("c", n))
			req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": tc.name, "arguments": tc.args}})
			body, _ := s.post(string(req))
			var resp struct {
				Result struct {
					Content []struct{ Text string }
					IsError bool
				}
			}
			if err := json.Unmarshal(body, &resp); err != nil || len(resp.Result.Content) == 0 {
				t.Fatalf("answer %.300s: %v", body, err)
			}
			text := resp.Result.Content[0].Text
			if !strings.HasPrefix(text, tc.want) || len(body) > 4096 {
				t.Errorf("a %d-byte request: a %d-byte answer: %.600s", len(req), len(body), text)
			}
			if tc.sentSize > 0 && !strings.Contains(text, `…" (`+strconv.Itoa(tc.sentSize)+" bytes)") {
				t.Errorf("the answer does not say how long what was sent is (%d bytes): %.600s", tc.sentSize, text)
			}
			data := auditLog()
			if tc.mode == registry.ModeDirect && !strings.Contains(data, `"outcome":"unknown_tool"`) {
				t.Errorf("the unknown tool is not on the audit log: %.300s", data)
			}
		})
	}
}

// TestOversizedRequestsGetShortErrors: a megabyte where a prompt's name,
// a resource's URI or a completion's reference goes gets an error of a
// few hundred bytes, not its request back; and the audit log a short
// line.
func TestOversizedRequestsGetShortErrors(t *testing.T) {
	t.Parallel()
	const n = 1 << 20
	long := strings.Repeat("é", n/2)
	s, auditLog := auditedSession(t, registry.ModeDirect, "c")
	uriSize := strconv.Itoa(len("test://" + long))
	for i, tc := range []struct {
		method string
		params map[string]any
		want   string // the answer's error message starts so
		size   int    // and gives this size, of what was sent or of the data left out
	}{
		// The SDK's answers, cut.
		{"prompts/get", map[string]any{"name": long}, `unknown prompt \"ééé`, 0},
		{"resources/read", map[string]any{"uri": "test://" + long}, `Resource not found (its data, `, len(long) + 17},
		// mcpgw's.
		{"resources/subscribe", map[string]any{"uri": "test://" + long}, `Resource not found: a URI of ` + uriSize + ` bytes","data":{"uri":"test://ééé`, 0},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": long}, "argument": map[string]any{"name": "x", "value": "y"}}, `unknown prompt \"ééé`, len(long)},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://" + long}, "argument": map[string]any{"name": "x", "value": "y"}}, `Resource not found: a URI of ` + uriSize + ` bytes`, 0},
	} {
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 2, "method": tc.method, "params": tc.params})
		body, _ := s.post(string(req))
		if len(body) > 4096 || !strings.Contains(string(body), `"message":"`+tc.want) {
			t.Errorf("%s, a %d-byte request: a %d-byte answer, want one with %s: %.300s", tc.method, len(req), len(body), tc.want, body)
		}
		if tc.size > 0 && !strings.Contains(string(body), strconv.Itoa(tc.size)+" bytes") {
			t.Errorf("%s: the answer does not say %d bytes: %.600s", tc.method, tc.size, body)
		}
	}
	auditLog()
}

// auditedSession is an initialized HTTP session of client, in mode, on a
// gateway with one stdio server "a" and an audit log. auditLog closes the
// gateway and its log and returns the log, after checking that no line of
// it is over 4 KiB.
func auditedSession(t *testing.T, mode registry.Mode, client string) (s *rawHTTPSession, auditLog func() string) {
	dir := t.TempDir()
	log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "audit.key"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &registry.Config{Servers: map[string]*registry.Server{"a": fakeupstream.Server("a", nil)},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: mode, DiscoveryTimeout: 2 * waitBound}}
	gw := New(cfg, &Options{NoBootstrap: true, Audit: log})
	gw.Start()
	t.Cleanup(func() { gw.Close() })
	connectNow(t, gw, "a")
	ts := httptest.NewServer(gw.Handler(nil))
	t.Cleanup(ts.Close)
	s = &rawHTTPSession{t: t, url: ts.URL + "/mcp"}
	_, hdr := s.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + client + `","version":"1"}}}`)
	if s.id = hdr.Get("Mcp-Session-Id"); s.id == "" {
		t.Fatal("initialize: no session ID")
	}
	s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s, func() string {
		gw.Close()
		if err := log.Close(); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
		for line := range strings.Lines(string(data)) {
			if len(line) > 4*audit.MaxField {
				t.Errorf("an audit line of %d bytes: %.300s", len(line), line)
			}
		}
		return string(data)
	}
}
