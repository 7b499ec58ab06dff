package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

func TestWithResultType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in         string
		needsInput bool
		want       string
	}{
		{`{"content":[]}`, false, `{"resultType":"complete","content":[]}`},
		{`{"content":[]}`, true, `{"resultType":"input_required","content":[]}`},
		{`{}`, false, `{"resultType":"complete"}`},
		{`{ }`, false, `{"resultType":"complete" }`},
		// An upstream's own mark is kept, whichever it is.
		{`{"content":[],"resultType":"complete"}`, true, `{"content":[],"resultType":"complete"}`},
		{`{"inputRequests":{},"resultType":"input_required"}`, false, `{"inputRequests":{},"resultType":"input_required"}`},
		// Only a top-level member counts.
		{`{"structuredContent":{"resultType":"x"}}`, false, `{"resultType":"complete","structuredContent":{"resultType":"x"}}`},
		{`null`, false, `null`},
	} {
		got := string(withResultType([]byte(tc.in), tc.needsInput))
		if got != tc.want {
			t.Errorf("withResultType(%s, %v) = %s, want %s", tc.in, tc.needsInput, got, tc.want)
		}
		if json.Valid([]byte(tc.in)) && !json.Valid([]byte(got)) {
			t.Errorf("withResultType(%s) = %s: not JSON", tc.in, got)
		}
	}
}

// A direct session over many tools lists them all, in one answer, sorted
// by name with mcpgw's own tools among them; the definitions are the
// catalogue's, shared by every session of the view.
func TestToolTableSharedAndSorted(t *testing.T) {
	t.Parallel()
	yes := true
	cfg := &registry.Config{Servers: map[string]*registry.Server{"big": fakeupstream.Server("big", nil)},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect, Scripts: &yes, DiscoveryTimeout: registry.DefaultDiscoveryTimeout}}
	gw := New(cfg, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	gw.Catalog().SetListing(gw.Catalog().View().Config.Servers["big"].Hash, bigListing(1500))

	a, b := connect(t, gw, SessionOptions{}), connect(t, gw, SessionOptions{})
	res, err := a.sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.NextCursor != "" {
		t.Errorf("the list came in pages (next cursor %q)", res.NextCursor)
	}
	names := make([]string, len(res.Tools))
	for i, tool := range res.Tools {
		names[i] = tool.Name
	}
	if len(names) != 1501 || !slices.IsSorted(names) || !slices.Contains(names, "mcp_script") || names[0] != "big_tool_0000" {
		t.Fatalf("listed %d tools (sorted %v), first %q, mcp_script %v", len(names), slices.IsSorted(names), names[0], slices.Contains(names, "mcp_script"))
	}
	// Both sessions' tables hold the catalogue's own definitions.
	var tables []*toolTable
	for _, ss := range gw.sessionList() {
		tables = append(tables, ss.tools.Load())
	}
	if len(tables) != 2 {
		t.Fatalf("%d sessions", len(tables))
	}
	for i, def := range tables[0].list {
		if def != tables[1].list[i] {
			t.Fatalf("tool %s: each session has its own definition", def.Name)
		}
	}
	// A cursor no answer gave out is refused.
	if _, err := b.sess.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: "page2"}); err == nil || !strings.Contains(err.Error(), "cursor") {
		t.Errorf("an unknown cursor: %v", err)
	}
}

// Each mode lists its own tools and answers a tool it does not list in its
// own words.
func TestModesListAndRefuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode     Mode
		own      []string
		unlisted string // the answer to calling a_echo by name
	}{
		{ModeProxy, []string{"mcp"}, `reached through the mcp tool: mcp({tool:"a_echo"`},
		{ModeToolSearch, []string{"ToolSearch", "mcp_script"}, `not active in this session. Activate it first: ToolSearch({query:"select:a_echo"})`},
		{ModeDirect, nil, ""},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			gw, _ := newTestGateway(t, registry.Settings{Mode: tc.mode}, "a")
			srv := gw.Catalog().View().Config.Servers["a"]
			gw.Catalog().SetListing(srv.Hash, &registry.Listing{Source: registry.SourceCache, Tools: []*mcp.Tool{
				{Name: "echo", Description: "Returns the message.", InputSchema: map[string]any{"type": "object"}},
			}})
			c := connect(t, gw, SessionOptions{})
			got := c.tools(t)
			want := tc.own
			if tc.mode == ModeDirect {
				want = []string{"a_echo"}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("lists %v, want %v", got, want)
			}
			if tc.unlisted == "" {
				return
			}
			text, isErr := c.call(t, "a_echo", map[string]any{"message": "x"})
			if !isErr || !strings.Contains(text, tc.unlisted) {
				t.Errorf("calling a_echo: %q (error %v), want %q", text, isErr, tc.unlisted)
			}
			text, isErr = c.call(t, "a_ecoh", nil)
			if !isErr || !strings.Contains(text, `Unknown tool "a_ecoh"`) {
				t.Errorf("calling a_ecoh: %q (error %v)", text, isErr)
			}
		})
	}
}

func TestWithServerInfo(t *testing.T) {
	t.Parallel()
	info := []byte(`{"name":"mcpgw","version":"t"}`)
	for _, tc := range []struct{ in, want string }{
		{`{"content":[]}`, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpgw","version":"t"}},"content":[]}`},
		{`{}`, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpgw","version":"t"}}}`},
		{`{"content":[],"_meta":{"a":1}}`, `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpgw","version":"t"},"a":1}}`},
		{`{"content":[],"_meta":{}}`, `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcpgw","version":"t"}}}`},
		// An upstream's own, or a _meta that is not an object, is left alone.
		{`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}`, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"}}}`},
		{`{"_meta":null}`, `{"_meta":null}`},
	} {
		got := string(withServerInfo([]byte(tc.in), info))
		if got != tc.want || !json.Valid([]byte(got)) {
			t.Errorf("withServerInfo(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// A call of protocol 2026-07-28 over HTTP, which has no session, takes the
// fast path, and its answer is the one the go-sdk's path gives: marked
// complete, naming mcpgw in its _meta.
func TestSessionlessFastCall(t *testing.T) {
	t.Parallel()
	answers := map[bool]map[string]any{}
	for _, noFast := range []bool{false, true} {
		cfg := &registry.Config{Servers: map[string]*registry.Server{"a": fakeupstream.Server("a", nil)},
			Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect, DiscoveryTimeout: registry.DefaultDiscoveryTimeout}}
		gw := New(cfg, &Options{NoFastPath: noFast, Version: "t"})
		gw.Start()
		ts := httptest.NewServer(gw.Handler(nil))
		post := func(id int, name, args string) []byte {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, id, name, args)
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
			for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
				"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name} {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			// The go-sdk answers on an event stream: its one message.
			if i := bytes.Index(data, []byte("data: ")); i >= 0 {
				data, _, _ = bytes.Cut(data[i+len("data: "):], []byte("\n"))
			}
			return data
		}
		// The first call waits for the server's tools (the SDK's path);
		// the second is made as any other.
		post(1, "a_echo", `{"message":"warm"}`)
		before := gw.fastCalls.Load()
		data := post(2, "a_echo", `{"message":"hello 2026"}`)
		var msg struct{ Result map[string]any }
		if err := json.Unmarshal(data, &msg); err != nil || msg.Result == nil {
			t.Fatalf("NoFastPath %v: %s (%v)", noFast, data, err)
		}
		answers[noFast] = msg.Result
		if fast := gw.fastCalls.Load() - before; fast != map[bool]int64{false: 1, true: 0}[noFast] {
			t.Errorf("NoFastPath %v: %d fast calls", noFast, fast)
		}
		ts.Close()
		gw.Close()
	}
	if !reflect.DeepEqual(answers[false], answers[true]) {
		t.Errorf("fast path: %v\nSDK path:  %v", answers[false], answers[true])
	}
	res := answers[false]
	meta, _ := res["_meta"].(map[string]any)
	if res["resultType"] != "complete" || meta["io.modelcontextprotocol/serverInfo"] == nil || !strings.Contains(fmt.Sprint(res["content"]), "hello 2026") {
		t.Errorf("answer %v", res)
	}
}
