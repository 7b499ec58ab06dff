package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// httpSession is a raw Streamable HTTP client session: it posts JSON-RPC
// bodies and returns the response bodies.
type rawHTTPSession struct {
	t   testing.TB
	url string
	id  string
}

func openRawSession(t testing.TB, url string) *rawHTTPSession {
	t.Helper()
	return openRawSessionWith(t, url, `{}`)
}

// openRawSessionWith initializes a session whose client declares
// capabilities (a JSON object).
func openRawSessionWith(t testing.TB, url, capabilities string) *rawHTTPSession {
	t.Helper()
	s := &rawHTTPSession{t: t, url: url}
	body, hdr := s.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":` + capabilities + `,"clientInfo":{"name":"raw","version":"1"}}}`)
	if s.id = hdr.Get("Mcp-Session-Id"); s.id == "" {
		t.Fatalf("initialize: no session ID; answer %s", body)
	}
	s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// stream opens the session's GET stream, failing the test unless it is
// answered 200; the caller closes the response's body.
func (s *rawHTTPSession) stream() *http.Response {
	s.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		s.t.Fatalf("GET stream: %s", resp.Status)
	}
	return resp
}

// post sends body and returns the answer, failing the test on an HTTP
// error or a status other than 2xx.
func (s *rawHTTPSession) post(body string) ([]byte, http.Header) {
	s.t.Helper()
	status, data, hdr, err := s.send(body)
	if err != nil {
		s.t.Fatal(err)
	}
	if status/100 != 2 {
		s.t.Fatalf("POST %s: %d %s", body, status, data)
	}
	return data, hdr
}

// send sends body and returns the answer's status, body and header; it
// fails nothing, so it may run off the test's goroutine.
func (s *rawHTTPSession) send(body string) (int, []byte, http.Header, error) {
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header, nil
}

// openShimSession serves a session of gw as the shim's socket does, on
// one end of a pipe, and returns a function that sends a request line and
// returns the answer line with the same ID.
func openShimSession(t testing.TB, gw *Hub) func(string) []byte {
	t.Helper()
	send := openShimConn(t, gw)
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return send
}

// openShimConn is openShimSession without the initialize, as a client of
// protocol 2026-07-28 starts; its function returns nil for a line without
// an ID (a notification), which gets no answer.
func openShimConn(t testing.TB, gw *Hub) func(string) []byte {
	t.Helper()
	write, br := dialShim(t, gw)
	return func(msg string) []byte {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal([]byte(msg), &req)
		write(msg)
		if req.ID == nil {
			return nil
		}
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				t.Fatalf("reading the answer to %s: %v", msg, err)
			}
			var ans struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(line, &ans) == nil && string(ans.ID) == string(req.ID) {
				return bytes.TrimSpace(line)
			}
		}
	}
}

// dialShim connects to gw as the shim does, on one end of a pipe, past
// the shim's handshake: write sends a line, br reads what comes back.
func dialShim(t testing.TB, gw *Hub) (write func(string), br *bufio.Reader) {
	t.Helper()
	client, daemon := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = gw.transports.ServeShim(ctx, daemon) }()
	t.Cleanup(func() { client.Close(); cancel(); <-done })
	br = bufio.NewReaderSize(client, 1<<20)
	write = func(line string) {
		if _, err := io.WriteString(client, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"mcpgw":1,"version":"test"}`)
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"ok":true`) {
		t.Fatalf("handshake: %q, %v", line, err)
	}
	return write, br
}

// with2026Meta returns the request msg as a client of protocol 2026-07-28
// sends it: its params' _meta names the version, the client and its
// capabilities.
func with2026Meta(t testing.TB, msg string) string {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal([]byte(msg), &req); err != nil {
		t.Fatal(err)
	}
	params, _ := req["params"].(map[string]any)
	if params == nil {
		params = map[string]any{}
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["io.modelcontextprotocol/protocolVersion"] = "2026-07-28"
	meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "raw", "version": "1"}
	meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{}
	params["_meta"], req["params"] = meta, params
	out, _ := json.Marshal(req)
	return string(out)
}

// canonical re-encodes a JSON value with sorted keys.
func canonical(t testing.TB, data []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON: %s", data)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// TestFastPathAnswersAsTheSDK sends the same calls to a gateway with the
// fast path and to one without, over HTTP against real stdio upstreams,
// and compares the answers: the same JSON, and the fast path taken.
func TestFastPathAnswersAsTheSDK(t *testing.T) {
	t.Parallel()
	calls := map[Mode][]string{
		ModeDirect: {
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a_echo","arguments":{"message":"héllo <&> \"quoted\"\n"}}}`,
			`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"a_add","arguments":{"a":1.5,"b":2}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a_fail","arguments":{"message":"broken"}}}`,
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a_image"}}`,
			`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a_meta","arguments":{},"_meta":{"trace":"t-1","n":[1,2]}}}`,
			`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"a_echo","arguments":[1]}}`,
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a_echo","arguments":{"tool":"x","args":{}}}}`,
			`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"a_ech"}}`,
			`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"b_echo","arguments":{"message":"` + string(bytes.Repeat([]byte("x"), 1200)) + `"}}}`,
			`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"a_echo","arguments":null}}`,
			`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"a_meta","arguments":{},"_meta":{ "trace" : "t-3", "nested": {"a": [1, 2.50]}, "trace": "t-4" }}}`,
			`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"a_meta","arguments":{},"_meta":{"tr\u0061ce":"t-5","é":"\u00e9"}}}`,
			// Unknown names: cased otherwise, and one far too long.
			`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"A_ECHO","arguments":{"message":"hi"}}}`,
			`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"a_echo` + strings.Repeat("é", 40000) + `"}}`,
			// Members repeated: the last counts, as the go-sdk decodes.
			`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"a_ech","arguments":{"message":"first"},"name":"a_echo","arguments":{"message":"last"}}}`,
		},
		ModeProxy: {
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"a_echo","args":{"message":"hi"}}}}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"a_add","args":"{\"a\":1,\"b\":2}"}}}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"a_fail","args":{"message":"no"}}}}`,
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"a_nope"}}}`,
			`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mcp","arguments":{"search":"echo"}}}`,
			`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"a_image"}}}`,
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"a_meta","args":{}},"_meta":{"trace":"t-2"}}}`,
			`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"b_echo","args":{"message":"` + string(bytes.Repeat([]byte("y"), 1200)) + `"}}}}`,
			// An upstream tool called by its name: not listed in this mode.
			`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"a_echo","arguments":{"message":"hi"}}}`,
		},
	}
	// The calls answered with the upstream's bytes as they are: in direct
	// mode the two echoes, add (its structured content passes), image and the three
	// meta; through the mcp tool echo, image and meta (add's structured
	// content becomes text). Errors get the tool's parameters appended, the long
	// echo is cut.
	relays := map[Mode]int64{ModeDirect: 7, ModeProxy: 3}
	for _, tc := range []struct {
		mode      Mode
		transport string
	}{{ModeDirect, "http"}, {ModeProxy, "http"}, {ModeDirect, "socket"}, {ModeProxy, "socket"},
		// A client of protocol 2026-07-28 on the shim: no initialize, and
		// each request says its version; one whose _meta lacks the
		// client's capabilities is the go-sdk's to refuse.
		{ModeDirect, "socket-2026"}, {ModeProxy, "socket-2026"}} {
		mode := tc.mode
		msgs := calls[mode]
		if tc.transport == "socket-2026" {
			msgs = nil
			for _, c := range calls[mode] {
				msgs = append(msgs, with2026Meta(t, c))
			}
			msgs = append(msgs, `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"a_echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
		}
		t.Run(string(mode)+"/"+tc.transport, func(t *testing.T) {
			t.Parallel()
			var answers [2][]string
			var lists [2]string
			var fast, relayed, fastLists [2]int64
			for i, noFast := range []bool{false, true} {
				cfg := &registry.Config{Servers: map[string]*registry.Server{}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: mode, MaxOutputBytes: 1000, DiscoveryTimeout: 2 * waitBound}}
				for _, name := range []string{"a", "b"} {
					cfg.Servers[name] = fakeupstream.Server(name, nil)
				}
				gw := New(cfg, &Options{NoFastPath: noFast})
				gw.Start()
				var send func(string) []byte
				if tc.transport == "http" {
					ts := httptest.NewServer(gw.Handler(nil))
					defer ts.Close()
					s := openRawSession(t, ts.URL+"/mcp")
					send = func(msg string) []byte { body, _ := s.post(msg); return body }
				} else if tc.transport == "socket" {
					send = openShimSession(t, gw)
				} else {
					send = openShimConn(t, gw)
				}
				list := `{"jsonrpc":"2.0","id":100,"method":"tools/list"}`
				if tc.transport == "socket-2026" {
					list = with2026Meta(t, list)
				}
				// The first list of a session in direct mode waits for
				// the servers' discovery, on the SDK's path; the second
				// has nothing to wait for.
				send(list)
				lists[i] = string(send(list))
				// What the fast path leaves to the go-sdk, and _meta it
				// passes over, answered alike.
				for _, l := range []string{
					`{"jsonrpc":"2.0","id":101,"method":"tools/list","params":{"cursor":"abc"}}`,
					`{"jsonrpc":"2.0","id":102,"method":"tools/list","params":{"_meta":{"progressToken":"p"}}}`,
					`{"jsonrpc":"2.0","id":103,"method":"tools/list","params":{"_meta":{"progressToken":"p"},"x":1}}`,
				} {
					if tc.transport == "socket-2026" {
						l = with2026Meta(t, l)
					}
					lists[i] += "\n" + string(send(l))
				}
				for _, c := range msgs {
					answers[i] = append(answers[i], canonical(t, send(c)))
				}
				fast[i], relayed[i], fastLists[i] = gw.fastCalls.Load(), gw.relayedCalls.Load(), gw.fastLists.Load()
				gw.Close()
			}
			// The list, byte for byte; answered on the fast path by a
			// session of the 2025 era only.
			listed := map[Mode]string{ModeDirect: `"name":"a_echo"`, ModeProxy: `"name":"mcp"`}[mode]
			if lists[0] != lists[1] || !strings.Contains(lists[0], listed) {
				t.Errorf("tools/list\nfast path: %s\nSDK path:  %s", lists[0], lists[1])
			}
			if era2026 := tc.transport == "socket-2026"; era2026 && fastLists[0] != 0 || !era2026 && fastLists[0] < 2 || fastLists[1] != 0 {
				t.Errorf("lists on the fast path: %d, and %d with NoFastPath", fastLists[0], fastLists[1])
			}
			for j, c := range msgs {
				if answers[0][j] != answers[1][j] {
					t.Errorf("%s\nfast path: %s\nSDK path:  %s", c, answers[0][j], answers[1][j])
				}
			}
			if relayed[0] != relays[mode] || relayed[1] != 0 {
				t.Errorf("relayed calls: %d with the fast path, %d without; want %d and 0", relayed[0], relayed[1], relays[mode])
			}
			if fast[1] != 0 {
				t.Errorf("with NoFastPath, %d calls took the fast path", fast[1])
			}
			// The long name is quoted in part, with its length.
			if mode == ModeDirect {
				if a := answers[0][13]; len(a) > 2000 || !strings.Contains(a, `…\" (80006 bytes).`) {
					t.Errorf("the answer to a call of an 80,006-byte name is %d bytes: %.400s", len(a), a)
				}
			}
			// All but the mcp tool's search are fast, unknown tools too.
			want := int64(len(calls[mode]))
			if mode == ModeProxy {
				want--
			}
			if fast[0] != want {
				t.Errorf("%d calls took the fast path; want %d", fast[0], want)
			}
		})
	}
}

// BenchmarkFastCall measures a forwarded echo call over HTTP, in direct
// mode and through the mcp tool, to a real stdio upstream: the gateway's
// time and allocations per call, with and without the fast path.
func BenchmarkFastCall(b *testing.B) {
	for _, mode := range []Mode{ModeDirect, ModeProxy} {
		for _, noFast := range []bool{false, true} {
			name := string(mode) + "/fast"
			if noFast {
				name = string(mode) + "/sdk"
			}
			b.Run(name, func(b *testing.B) {
				cfg := &registry.Config{Servers: map[string]*registry.Server{"a": fakeupstream.Server("a", nil)},
					Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: mode, DiscoveryTimeout: 2 * waitBound}}
				gw := New(cfg, &Options{NoFastPath: noFast})
				gw.Start()
				defer gw.Close()
				ts := httptest.NewServer(gw.Handler(nil))
				defer ts.Close()
				s := openRawSession(b, ts.URL+"/mcp")
				s.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
				call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a_echo","arguments":{"message":"hello through mcpgw"}}}`
				if mode == ModeProxy {
					call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"a_echo","args":{"message":"hello through mcpgw"}}}}`
				}
				if body, _ := s.post(call); !bytes.Contains(body, []byte("hello through mcpgw")) {
					b.Fatalf("answer: %s", body)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					s.post(call)
				}
			})
		}
	}
}

// A client that stops reading cannot hold its session, nor the daemon's
// shutdown: closing the session hangs up on it.
func TestCloseHangsUpOnAClientThatDoesNotRead(t *testing.T) {
	t.Parallel()
	cfg := func(names ...string) *registry.Config {
		c := &registry.Config{Servers: map[string]*registry.Server{},
			Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect, DiscoveryTimeout: registry.DefaultDiscoveryTimeout}}
		for _, n := range names {
			c.Servers[n] = fakeupstream.Server(n, nil)
		}
		return c
	}
	gw := New(cfg("a"), &Options{})
	gw.Start()
	client, daemon := net.Pipe() // no buffer: every write waits for a read
	defer client.Close()
	served := make(chan error, 1)
	go func() { served <- gw.transports.ServeShim(context.Background(), daemon) }()
	br := bufio.NewReader(client)
	for _, l := range []string{
		`{"mcpgw":1,"version":"test"}`,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
	} {
		if _, err := io.WriteString(client, l+"\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := io.WriteString(client, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	// A new server's tools make the session announce a changed list,
	// which this client reads one byte of, and no more.
	gw.Reload(cfg("a", "b"))
	_ = client.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := br.ReadByte(); err != nil {
		t.Fatalf("no notification: %v", err)
	}
	closed := make(chan struct{})
	go func() { gw.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("Close is still waiting for a client that does not read")
	}
	select {
	case <-served:
	case <-time.After(30 * time.Second):
		t.Fatal("the session still runs after Close")
	}
	// The client sees the connection end.
	if _, err := io.Copy(io.Discard, br); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("reading after the hang-up: %v", err)
	}
}

// A client that goes away in the middle of a fast call over HTTP ends
// the call: the upstream's tool is not left running for nobody.
func TestFastCallEndsWhenTheClientGoesAway(t *testing.T) {
	t.Parallel()
	gw, ts, s, inFlight := fastCallSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a_sleep","arguments":{"ms":600000}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	deadline := time.Now().Add(time.Minute)
	for inFlight() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call never started")
		}
		time.Sleep(time.Millisecond) // until the call is in flight
	}
	cancel()
	<-done
	for inFlight() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call still runs a minute after its client went away")
		}
		time.Sleep(time.Millisecond) // until the call ends
	}
	if n := gw.fastCalls.Load(); n != 1 {
		t.Errorf("%d fast calls, want 1", n)
	}
}

// A session's end (the client's DELETE) ends its fast calls in flight,
// two with the same request ID (a client's mistake) as well as one: each
// answers, none waits out its upstream.
func TestFastCallsEndWithTheirSession(t *testing.T) {
	t.Parallel()
	gw, ts, s, inFlight := fastCallSession(t)
	done := make(chan string, 2)
	for range 2 {
		go func() {
			_, body, _, err := s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a_sleep","arguments":{"ms":600000}}}`)
			if err != nil {
				done <- err.Error()
				return
			}
			done <- string(body)
		}()
	}
	deadline := time.Now().Add(time.Minute)
	for inFlight() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls in flight, want 2", inFlight())
		}
		time.Sleep(time.Millisecond) // until both calls are in flight
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", s.id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for range 2 {
		select {
		case got := <-done:
			if strings.Contains(got, "slept") {
				t.Errorf("a call of the ended session answered %s", got)
			}
		case <-time.After(time.Minute):
			t.Fatal("a call still runs a minute after its session ended")
		}
	}
	if n := inFlight(); n != 0 {
		t.Errorf("%d calls in flight after the session ended", n)
	}
	if n := gw.fastCalls.Load(); n != 2 {
		t.Errorf("%d fast calls, want 2", n)
	}
}

// fastCallSession is a direct-mode gateway over HTTP with a stdio
// upstream "a", a raw session of it that has listed its tools, and the
// count of that session's fast calls in flight.
func fastCallSession(t *testing.T) (*Hub, *httptest.Server, *rawHTTPSession, func() int) {
	t.Helper()
	cfg := &registry.Config{Servers: map[string]*registry.Server{"a": fakeupstream.Server("a", nil)},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect, DiscoveryTimeout: registry.DefaultDiscoveryTimeout}}
	gw := New(cfg, &Options{})
	gw.Start()
	t.Cleanup(func() { gw.Close() })
	ts := httptest.NewServer(gw.Handler(nil))
	t.Cleanup(ts.Close)
	s := openRawSession(t, ts.URL+"/mcp")
	s.post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	gw.mu.Lock()
	ss := gw.byHTTPID[s.id]
	gw.mu.Unlock()
	return gw, ts, s, func() int {
		ss.fast.mu.Lock()
		defer ss.fast.mu.Unlock()
		return len(ss.fast.calls)
	}
}
