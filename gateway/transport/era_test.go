package transport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// byEra sends a request of protocol 2026-07-28 or later to the sessionless
// handler, by its header or, without one, by its _meta, and the rest to
// the sessions' handler, body intact.
func TestByEra(t *testing.T) {
	const meta = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	const plain = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28"}}`
	const inArgs = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	for _, tc := range []struct {
		name, method, header, session, body string
		sessionless                         bool
	}{
		{"header 2026-07-28", http.MethodPost, "2026-07-28", "", plain, true},
		{"a later header", http.MethodPost, "2027-01-01", "", plain, true},
		{"header 2025-11-25", http.MethodPost, "2025-11-25", "", meta, false},
		{"no header, _meta says 2026-07-28", http.MethodPost, "", "", meta, true},
		{"no header, a session, _meta says 2026-07-28", http.MethodPost, "", "s1", meta, false},
		{"an initialize offering 2026-07-28", http.MethodPost, "", "", plain, false},
		{"the key among the arguments", http.MethodPost, "", "", inArgs, false},
		{"GET with header 2026-07-28", http.MethodGet, "2026-07-28", "", "", true},
		{"GET of a session", http.MethodGet, "2025-11-25", "s1", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			var body []byte
			record := func(which string) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					got = which
					if r.Body != nil {
						body, _ = io.ReadAll(r.Body)
					}
				})
			}
			var rb io.Reader
			if tc.body != "" {
				rb = strings.NewReader(tc.body)
			}
			r := httptest.NewRequest(tc.method, "/mcp", rb)
			if tc.header != "" {
				r.Header.Set("Mcp-Protocol-Version", tc.header)
			}
			if tc.session != "" {
				r.Header.Set("Mcp-Session-Id", tc.session)
			}
			byEra(record("sessionless"), record("sessions")).ServeHTTP(httptest.NewRecorder(), r)
			want := "sessions"
			if tc.sessionless {
				want = "sessionless"
			}
			if got != want {
				t.Errorf("went to %s, want %s", got, want)
			}
			if string(body) != tc.body {
				t.Errorf("the handler read body %q, want %q", body, tc.body)
			}
		})
	}
}

// A sessionless request's conversation is the one its headers and query
// describe.
func TestSessionlessConversationOptions(t *testing.T) {
	hub := &fakeHub{}
	h := New(hub, Options{}).Handler(nil, Control{})
	r := httptest.NewRequest(http.MethodPost, "/mcp?clientPrefix=none", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set(HeaderMode, "direct")
	r.Header.Set(HeaderCwd, "/home/u/project")
	r.Host = "127.0.0.1:7332"
	h.ServeHTTP(httptest.NewRecorder(), withPeer(r, os.Getuid()))
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if len(hub.convs) == 0 || len(hub.opened) != 0 {
		t.Fatalf("conversations %v, sessions opened %v; want a conversation only", hub.convs, hub.opened)
	}
	want := SessionOptions{Cwd: "/home/u/project", Mode: "direct", ClientPrefix: "none"}
	for _, got := range hub.convs {
		if got != want {
			t.Errorf("conversation of %+v, want %+v", got, want)
		}
	}
}
