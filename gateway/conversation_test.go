package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// sessionless is the first protocol version without sessions.
const sessionless = "2026-07-28"

// connectHTTP connects a go-sdk client to gw's /mcp over Streamable HTTP
// at protocol version, with query added to the endpoint.
func connectHTTP(t *testing.T, gw *Hub, version, query string, changed func()) *mcp.ClientSession {
	t.Helper()
	ts := httptest.NewServer(gw.Handler(nil))
	t.Cleanup(ts.Close)
	var opts mcp.ClientOptions
	if changed != nil {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { changed() }
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp" + query}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
}

func listedTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return resultText(res), res.IsError
}

// A 2026-07-28 client over HTTP is served without a session, in the mode
// it asks for; toolsearch is served as proxy (see conversation.go).
func TestSessionlessHTTPModes(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{}, "alpha")
	for _, tc := range []struct {
		query string
		tools []string
	}{
		{"", []string{"mcp"}},
		{"?mode=toolsearch", []string{"mcp"}},
		{"?mode=direct", []string{"alpha_add", "alpha_echo", "alpha_fail"}},
	} {
		cs := connectHTTP(t, gw, sessionless, tc.query, nil)
		if tc.query == "?mode=direct" {
			// Direct mode lists what is known: connect alpha first.
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_echo", Arguments: map[string]any{"message": "x"}}); err != nil {
				t.Fatal(err)
			}
		}
		got := listedTools(t, cs)
		for _, want := range tc.tools {
			if !slices.Contains(got, want) {
				t.Errorf("%q lists %v, want %s among them", tc.query, got, want)
			}
		}
		if tc.query != "?mode=direct" && !slices.Equal(got, tc.tools) {
			t.Errorf("%q lists %v, want %v", tc.query, got, tc.tools)
		}
		var text string
		var isErr bool
		if tc.query == "?mode=direct" {
			text, isErr = callText(t, cs, "alpha_echo", map[string]any{"message": "hello"})
		} else {
			text, isErr = callText(t, cs, "mcp", map[string]any{"tool": "alpha_echo", "args": map[string]any{"message": "hello"}})
		}
		if isErr || text != "hello" {
			t.Errorf("%q: call alpha_echo = %q (error %v)", tc.query, text, isErr)
		}
	}
	// Requests that describe themselves alike share a conversation: three
	// descriptions, three conversations.
	gw.convs.mu.Lock()
	n := len(gw.convs.byKey)
	gw.convs.mu.Unlock()
	if n != 3 {
		t.Errorf("%d conversations, want 3", n)
	}
}

// The 2025 era is as it was on the same endpoint, beside the new one.
func TestBothErasOnOneEndpoint(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{}, "alpha")
	old := connectHTTP(t, gw, "2025-11-25", "", nil)
	if old.ID() == "" {
		t.Error("a 2025-11-25 client has no session ID")
	}
	current := connectHTTP(t, gw, sessionless, "", nil)
	if current.ID() != "" {
		t.Errorf("a %s client has session ID %q", sessionless, current.ID())
	}
	// A 2025 client offering 2026-07-28 in its initialize is given the
	// newest version a session has.
	ts := httptest.NewServer(gw.Handler(nil))
	defer ts.Close()
	_, m := rawPost(t, ts.URL+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if res, _ := m["result"].(map[string]any); res["protocolVersion"] != "2025-11-25" {
		t.Errorf("initialize offering %s: %v, want 2025-11-25", sessionless, m)
	}
	for _, cs := range []*mcp.ClientSession{old, current} {
		text, isErr := callText(t, cs, "mcp", map[string]any{"tool": "alpha_echo", "args": map[string]any{"message": "both"}})
		if isErr || text != "both" {
			t.Errorf("call = %q (error %v)", text, isErr)
		}
	}
}

// rawPost sends one JSON-RPC message to /mcp with the headers of protocol
// version, and returns the status and the decoded answer (as JSON, or the
// last message of an event stream).
func rawPost(t *testing.T, url, version, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
		var msg struct {
			Method string
			Params struct{ Name string }
		}
		_ = json.Unmarshal([]byte(body), &msg)
		req.Header.Set("Mcp-Method", msg.Method) // required from 2026-07-28 on
		if msg.Params.Name != "" {
			req.Header.Set("Mcp-Name", msg.Params.Name) // of tools/call and prompts/get
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The answer is the stream's last message.
		for line := range strings.Lines(string(data)) {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = []byte(d)
			}
		}
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("answer %s is not JSON: %q", resp.Status, data)
	}
	return resp.StatusCode, m
}

// newEraMeta is the _meta a 2026-07-28 request carries.
const newEraMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// server/discover answers mcpgw's capabilities, identity and the
// instructions of the mode; the methods the revision removed are not
// found.
func TestSessionlessDiscoverAndRemovedMethods(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{}, "alpha")
	ts := httptest.NewServer(gw.Handler(nil))
	defer ts.Close()
	status, m := rawPost(t, ts.URL+"/mcp", sessionless, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+newEraMeta+`}}`)
	res, _ := m["result"].(map[string]any)
	if status != http.StatusOK || res == nil {
		t.Fatalf("server/discover: %d %v", status, m)
	}
	if v, _ := res["supportedVersions"].([]any); !slices.Contains(v, any(sessionless)) {
		t.Errorf("supportedVersions = %v, want %s among them", v, sessionless)
	}
	caps, _ := res["capabilities"].(map[string]any)
	for _, c := range []string{"tools", "prompts", "resources"} {
		if caps[c] == nil {
			t.Errorf("capabilities %v lack %s", caps, c)
		}
	}
	if ins, _ := res["instructions"].(string); !strings.Contains(ins, "mcp") {
		t.Errorf("instructions = %q", ins)
	}
	if res["cacheScope"] != "private" || res["ttlMs"] != float64(0) {
		t.Errorf("cache hints %v %v, want private and 0", res["cacheScope"], res["ttlMs"])
	}
	meta, _ := res["_meta"].(map[string]any)
	info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if info["name"] != "mcpgw" {
		t.Errorf("serverInfo = %v, want mcpgw", meta)
	}
	for _, method := range []string{"initialize", "ping", "logging/setLevel", "resources/subscribe"} {
		_, m := rawPost(t, ts.URL+"/mcp", sessionless, `{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":{`+newEraMeta+`}}`)
		e, _ := m["error"].(map[string]any)
		if code, _ := e["code"].(float64); code != -32601 {
			t.Errorf("%s at %s: %v, want error -32601", method, sessionless, m)
		}
	}
	// Without the header, a request that names the protocol only in its
	// _meta is told the header is missing.
	status, m = rawPost(t, ts.URL+"/mcp", "", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+newEraMeta+`}}`)
	if e, _ := m["error"].(map[string]any); status != http.StatusBadRequest || e == nil || !strings.Contains(e["message"].(string), "header is required") {
		t.Errorf("no header: %d %v", status, m)
	}
}

// Over the shim's connection a 2026-07-28 client is one session: its
// ToolSearch activations list, announced on its subscriptions/listen.
func TestSessionlessShimToolSearch(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeToolSearch}, "alpha")
	if _, err := gw.Pool().Upstream(gw.Catalog().View().Config.Servers["alpha"]).Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gw.ServeSession(ctx, st, SessionOptions{}, nil)
	}()
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := c.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: sessionless})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	if got := cs.InitializeResult().ProtocolVersion; got != sessionless {
		t.Fatalf("negotiated %s over the shim, want %s", got, sessionless)
	}
	if got := listedTools(t, cs); !slices.Equal(got, []string{"ToolSearch", "mcp_script"}) {
		t.Fatalf("lists %v", got)
	}
	text, isErr := callText(t, cs, "ToolSearch", map[string]any{"query": "select:alpha_echo"})
	if isErr || !strings.Contains(text, "Activated 1 tool") {
		t.Fatalf("select = %q (error %v)", text, isErr)
	}
	<-changed
	if got := listedTools(t, cs); !slices.Equal(got, []string{"ToolSearch", "alpha_echo", "mcp_script"}) {
		t.Errorf("after select lists %v", got)
	}
	if text, isErr := callText(t, cs, "alpha_echo", map[string]any{"message": "on"}); isErr || text != "on" {
		t.Errorf("alpha_echo = %q (error %v)", text, isErr)
	}
}

// A conversation ends once conversationIdle has passed since its last
// request, not while one is in flight, and leaves the daemon's sessions.
func TestConversationIdleExpiry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		cfg := &registry.Config{Servers: map[string]*registry.Server{}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer}}
		gw := New(cfg, &Options{NoBootstrap: true})
		defer gw.Close()
		open := func() int {
			gw.convs.mu.Lock()
			defer gw.convs.mu.Unlock()
			return len(gw.convs.byKey)
		}
		srv := gw.Conversation(SessionOptions{Mode: ModeDirect})
		if srv == nil || open() != 1 || len(gw.sessionList()) != 1 {
			t.Fatalf("after the first request: server %v, %d conversations, %d sessions", srv, open(), len(gw.sessionList()))
		}
		if again := gw.Conversation(SessionOptions{Mode: ModeDirect}); again != srv {
			t.Fatal("a request that describes itself alike got another conversation")
		}
		var ss *session
		for s := range gw.sessions {
			ss = s
		}
		if !ss.sessionless || ss.saver != nil || ss.mode.Name() != ModeDirect {
			t.Errorf("conversation: sessionless %v, saver %v, mode %s", ss.sessionless, ss.saver != nil, ss.mode.Name())
		}
		ss.inFlight.Add(1) // a call longer than the idle time
		time.Sleep(2 * conversationIdle)
		synctest.Wait()
		if open() != 1 {
			t.Fatal("a conversation with a request in flight ended")
		}
		ss.lastActive.Store(time.Now().UnixNano()) // as the call ends
		ss.inFlight.Add(-1)
		time.Sleep(conversationIdle / 2)
		synctest.Wait()
		if open() != 1 {
			t.Fatal("a conversation ended before it was idle for conversationIdle")
		}
		time.Sleep(conversationIdle)
		synctest.Wait()
		if open() != 0 || len(gw.sessionList()) != 0 {
			t.Errorf("idle for conversationIdle: %d conversations, %d sessions", open(), len(gw.sessionList()))
		}
	})
}

// A toolsearch conversation is served as proxy, and keeps no grant.
func TestConversationKeepsNothingPrivate(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{}, "alpha")
	gw.Conversation(SessionOptions{Mode: ModeToolSearch})
	ss := gw.sessionList()[0]
	if ss.mode.Name() != ModeProxy {
		t.Errorf("toolsearch conversation in mode %s, want proxy", ss.mode.Name())
	}
	ss.Grant("server:alpha")
	if ss.Granted("server:alpha") {
		t.Error("a conversation kept a grant")
	}
}

// An upstream's input_required result reaches a 2026-07-28 client as it
// is, and the client's answers reach the upstream with its next call
// (SEP-2322): the go-sdk client answers the sampling request itself. A
// 2025 client of the same upstream is asked the old way, by a request.
func TestSessionlessRelaysInputRequired(t *testing.T) {
	t.Parallel()
	ts := fixturesGateway(t, ModeDirect)
	for _, version := range []string{sessionless, "2025-11-25"} {
		var asked []string
		c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				asked = append(asked, req.Params.Messages[0].Content.(*mcp.TextContent).Text)
				return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "from the client"}}, nil
			},
		})
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		text, isErr := callText(t, cs, "test_sampling", map[string]any{"prompt": "question " + version})
		if isErr || text != "LLM response: from the client" || !slices.Equal(asked, []string{"question " + version}) {
			t.Errorf("%s: test_sampling = %q (error %v), client asked %q", version, text, isErr, asked)
		}
		cs.Close()
	}
}

// A 2026-07-28 client over HTTP hears of its conversation's tool changes
// on its subscriptions/listen stream.
func TestSessionlessListChanged(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{}, "alpha")
	changed := make(chan struct{}, 16)
	cs := connectHTTP(t, gw, sessionless, "?mode=direct", func() { changed <- struct{}{} })
	if got := listedTools(t, cs); slices.Contains(got, "alpha_echo") {
		t.Fatalf("lists %v before alpha is known", got)
	}
	if _, err := gw.Pool().Upstream(gw.Catalog().View().Config.Servers["alpha"]).Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed on the listen stream")
	}
	if got := listedTools(t, cs); !slices.Contains(got, "alpha_echo") {
		t.Errorf("after list_changed lists %v", got)
	}
}

// A call of a tool the conversation does not have is answered, at
// 2026-07-28, with a result that says it is complete, as every result of
// that protocol does (SEP-2322), though no tool handler made it.
func TestSessionlessUnknownToolIsComplete(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{}, "alpha")
	ts := httptest.NewServer(gw.Handler(nil))
	defer ts.Close()
	status, m := rawPost(t, ts.URL+"/mcp", sessionless, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope",`+newEraMeta+`}}`)
	res, _ := m["result"].(map[string]any)
	if status != http.StatusOK || res == nil {
		t.Fatalf("tools/call nope: %d %v", status, m)
	}
	if res["resultType"] != "complete" || res["isError"] != true {
		t.Errorf("tools/call nope: resultType %v, isError %v, want complete and true: %v", res["resultType"], res["isError"], res)
	}
	content, _ := res["content"].([]any)
	if len(content) != 1 || !strings.HasPrefix(fmt.Sprint(content[0].(map[string]any)["text"]), `Unknown tool "nope".`) {
		t.Errorf("tools/call nope: content %v", res["content"])
	}
}
