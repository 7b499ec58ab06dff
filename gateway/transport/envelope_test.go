package transport

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// parseFastRequest takes a single, well-formed JSON-RPC tools/call
// request with an ID and object params, or tools/list with object params
// or none, and nothing else: whatever the fast path cannot read as the
// go-sdk would goes to the go-sdk.
func TestParseFastRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg        string
		id, params string // "" = not a fast call
		list       bool   // tools/list, not tools/call
	}{
		{msg: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`, id: `7`, params: `{"name":"x"}`},
		{msg: `{"method":"tools/call","params":{"name":"x","arguments":{"a":[1]}},"id":"r-1","jsonrpc":"2.0"}`, id: `"r-1"`, params: `{"name":"x","arguments":{"a":[1]}}`},
		{msg: " \n{ \"jsonrpc\" : \"2.0\" , \"id\" : -3 , \"method\" : \"tools/call\" , \"params\" : { } }\r\n", id: `-3`, params: `{ }`},
		// the last of a repeated member, as encoding/json reads it
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{}}`, id: `1`, params: `{}`},
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list","params":{}}`, id: `1`, params: `{}`, list: true},
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, id: `1`, params: `{}`, list: true},
		{msg: `{"jsonrpc":"2.0","id":"l","method":"tools/list"}`, id: `"l"`, list: true},
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}`},
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`},
		{msg: `{"jsonrpc":"2.0","method":"tools/list"}`},
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/lists","params":{}}`},
		{msg: `{"jsonrpc":"2.0","id":1,"method":"prompts/list","params":{"x":"tools/list"}}`},
		{msg: `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}]`},
		{msg: `{"jsonrpc":"2.0","method":"tools/call","params":{}}`},
		{msg: `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{}}`},
		{msg: `{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{}}`},
		{msg: `{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{}}`},
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}`},
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},
		{msg: `{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{}}`},
		{msg: `{"id":1,"method":"tools/call","params":{}}`},
		// An unknown member is read past: a message malformed after it is
		// not taken, and a member repeated after it counts as its last.
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"x":0,"y"`},
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"x":0,"params":{"name":"b"}}`, id: `1`, params: `{"name":"b"}`},
		{msg: `{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{}}`},
		{msg: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}`},
		{msg: `{"jsonrpc":"2.0","id":1,"result":{"method":"tools/call"}}`},
		{msg: ``},
	} {
		r, ok := parseFastRequest([]byte(tc.msg))
		method := "tools/call"
		if tc.list {
			method = "tools/list"
		}
		if want := tc.id != ""; ok != want || ok && (string(r.id) != tc.id || string(r.params) != tc.params || r.method != method) {
			t.Errorf("%q: ok %v, %s id %s, params %s; want ok %v, %s id %s, params %s", tc.msg, ok, r.method, r.id, r.params, want, method, tc.id, tc.params)
		}
	}
}

// cancelledID is the requestId of a notifications/cancelled, as written.
func TestCancelledID(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}`:                       `7`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-5"}}`:                                `"r-5"`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`:                                                             ``,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"s":"notifications/cancelled"}}}`: ``,
	} {
		if got := string(cancelledID([]byte(msg))); got != want {
			t.Errorf("%s: %q, want %q", msg, got, want)
		}
	}
}

// A Streamable HTTP client must accept both JSON and event streams.
func TestAcceptsJSONAndSSE(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		values []string
		want   bool
	}{
		{[]string{"application/json, text/event-stream"}, true},
		{[]string{"application/json", "text/event-stream"}, true},
		{[]string{"text/event-stream;q=0.9, application/json;q=1"}, true},
		{[]string{"*/*"}, true},
		{[]string{"application/*, text/*"}, true},
		{[]string{"application/json"}, false},
		{[]string{"text/event-stream"}, false},
		{nil, false},
	} {
		if got := acceptsJSONAndSSE(tc.values); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.values, got, tc.want)
		}
	}
}

// Every fast call's Accept header is read this way: it allocates nothing.
// (Not parallel: AllocsPerRun counts the whole program's allocations.)
func TestAcceptsJSONAndSSEAllocations(t *testing.T) {
	values := []string{"application/json, text/event-stream;q=0.9"}
	if n := testing.AllocsPerRun(100, func() { acceptsJSONAndSSE(values) }); n != 0 {
		t.Errorf("acceptsJSONAndSSE allocates %v times per request, want 0", n)
	}
}

// A POST to /mcp whose body is not UTF-8 is answered with a JSON-RPC parse
// error; no session hears of it.
func TestBodyNotUTF8(t *testing.T) {
	t.Parallel()
	for _, session := range []string{"", "s1"} {
		s := newSurface("")
		rt := route{method: "POST", target: "/mcp", body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + "\xff" + `"}}`, session: session}
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, withPeer(rt.request(daemonAddr), os.Getuid()))
		want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the body is not valid UTF-8"}}` + "\n"
		if w.Code != http.StatusBadRequest || w.Body.String() != want || s.reached() != 0 {
			t.Errorf("session %q: %d %q, reached %d", session, w.Code, w.Body.String(), s.reached())
		}
	}
}

// A request that opens an HTTP session describes it in its query or its
// headers, the query first; the session is opened once.
func TestHTTPSessionOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query   string
		headers map[string]string
		want    SessionOptions
	}{
		{headers: map[string]string{HeaderCwd: "/p", HeaderMode: "direct", HeaderDirectTools: "gh_*", HeaderClientPrefix: "none"},
			want: SessionOptions{Cwd: "/p", Mode: "direct", DirectTools: "gh_*", ClientPrefix: "none"}},
		{query: "?mode=toolsearch&directTools=a&clientPrefix=KEY_", headers: map[string]string{HeaderMode: "direct", HeaderDirectTools: "b"},
			want: SessionOptions{Mode: "toolsearch", DirectTools: "a", ClientPrefix: "KEY_"}},
		{query: "?cwd=/q", want: SessionOptions{}},
	} {
		s := newSurface("")
		rt := route{method: "POST", target: "/mcp" + tc.query, body: initializeBody}
		r := rt.request(daemonAddr)
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, withPeer(r, os.Getuid()))
		opened, _, _ := s.hub.record()
		if w.Code != 200 || !strings.Contains(w.Body.String(), `"result"`) || len(opened) != 1 || opened[0] != tc.want {
			t.Errorf("%s %v: %d, opened %+v; want %+v", tc.query, tc.headers, w.Code, opened, tc.want)
		}
	}
}
