package upstream

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDecodeResultAsTheSDK decodes results with every content type both
// ways and compares what they encode to.
func TestDecodeResultAsTheSDK(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"héllo <b>","_meta":{"k":1},"annotations":{"audience":["user"],"priority":0.5}}]}`,
		`{"content":[{"type":"image","data":"aGVsbG8=","mimeType":"image/png"},{"type":"audio","data":"AAEC","mimeType":"audio/wav"}],"isError":true}`,
		`{"content":[{"type":"resource_link","uri":"file:///a","name":"a","title":"A","description":"d","mimeType":"text/plain","size":3,"icons":[{"src":"https://x/i.png"}]}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///b","mimeType":"text/plain","text":"b"}},{"type":"resource","resource":{"uri":"file:///c","blob":"AAE="}}]}`,
		`{"content":[],"structuredContent":{"n":1.5,"list":[1,"two",null]},"_meta":{"progress":false}}`,
		`{"content":[{"type":"tool_use","id":"x","name":"n","input":{}}]}`,
	} {
		var ours, sdk mcp.CallToolResult
		if err := DecodeResult(json.RawMessage(raw), &ours); err != nil {
			t.Fatalf("DecodeResult(%s): %v", raw, err)
		}
		if err := json.Unmarshal([]byte(raw), &sdk); err != nil {
			t.Fatalf("SDK decode of %s: %v", raw, err)
		}
		a, _ := json.Marshal(&ours)
		b, _ := json.Marshal(&sdk)
		if string(a) != string(b) {
			t.Errorf("%s\nours: %s\nSDK:  %s", raw, a, b)
		}
	}
	// "resultType": "complete" is dropped (the SDK would keep it).
	var res mcp.CallToolResult
	if err := DecodeResult(json.RawMessage(`{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`), &res); err != nil {
		t.Fatal(err)
	}
	if data, _ := json.Marshal(&res); string(data) != `{"content":[{"type":"text","text":"x"}]}` {
		t.Errorf("a complete result re-encodes as %s", data)
	}
	if err := DecodeResult(json.RawMessage(`{"content":[{"type":"text","text":1}]}`), &res); err == nil {
		t.Error("a text that is a number decoded without an error")
	}
}

func BenchmarkDecodeResult(b *testing.B) {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"hello through mcpgw"}],"structuredContent":{"message":"hello through mcpgw"}}`)
	b.Run("gateway", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var res mcp.CallToolResult
			if err := DecodeResult(raw, &res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var res mcp.CallToolResult
			if err := json.Unmarshal(raw, &res); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestWithoutServerInfo(t *testing.T) {
	t.Parallel()
	const si = `"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"}`
	for _, tc := range []struct{ in, want string }{
		{`{"content":[]}`, `{"content":[]}`},
		{`{"_meta":{` + si + `},"content":[]}`, `{"content":[]}`},
		{`{"content":[],"_meta":{` + si + `}}`, `{"content":[]}`},
		{`{"content":[],"_meta":{"a":1,` + si + `}}`, `{"content":[],"_meta":{"a":1}}`},
		{`{"_meta":{` + si + `,"b":[2]},"content":[]}`, `{"_meta":{"b":[2]},"content":[]}`},
		// What follows _meta moves up over what was taken out of it.
		{`{"content":[],"_meta":{"a":1,` + si + `},"isError":true}`, `{"content":[],"_meta":{"a":1},"isError":true}`},
		{`{"_meta":{` + si + `},"content":[{"type":"text","text":"}"}],"isError":false}`, `{"content":[{"type":"text","text":"}"}],"isError":false}`},
		// Only _meta's own member goes.
		{`{"content":[{"type":"text","text":"x","_meta":{` + si + `}}]}`, `{"content":[{"type":"text","text":"x","_meta":{` + si + `}}]}`},
		{`{"structuredContent":{` + si + `},"content":[]}`, `{"structuredContent":{` + si + `},"content":[]}`},
	} {
		if got := string(withoutServerInfo([]byte(tc.in))); got != tc.want {
			t.Errorf("withoutServerInfo(%s)\n = %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// A 2026-07-28 server names itself in every result; no result the pool
// hands on carries that.
func TestCallResultsCarryNoServerInfo(t *testing.T) {
	t.Parallel()
	srv, _ := testServer(t, "si", nil)
	u := newPool(t, nil).Upstream(srv)
	args := map[string]any{"message": "x"}
	raw, err := u.CallRaw(context.Background(), "echo", args, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`; string(raw) != want {
		t.Errorf("raw result %s, want %s", raw, want)
	}
	// Through the SDK (progress makes the call take it).
	res, err := u.Call(context.Background(), "echo", args, &CallOptions{OnProgress: func(context.Context, *mcp.ProgressNotificationParams) {}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta != nil || textOf(t, res) != "x" {
		t.Errorf("SDK result: meta %v, text %q", res.Meta, textOf(t, res))
	}
	pr, err := u.GetPrompt(context.Background(), "greet", map[string]string{"name": "Ada"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := u.ReadResource(context.Background(), "test://hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Meta != nil || len(pr.Messages) == 0 || rr.Meta != nil || len(rr.Contents) == 0 {
		t.Errorf("prompt: meta %v, %d messages; resource: meta %v, %d contents", pr.Meta, len(pr.Messages), rr.Meta, len(rr.Contents))
	}
	if snap := u.Snapshot(); snap == nil || snap.ProtocolVersion != "2026-07-28" {
		t.Errorf("negotiated %+v, want 2026-07-28 (the test needs a server that names itself)", snap)
	}
}

// A raw call carries the per-request _meta of protocol 2026-07-28 as the
// SDK's own requests do.
func TestRawCallCarriesTheRequestMeta(t *testing.T) {
	t.Parallel()
	srv, _ := testServer(t, "rm", nil)
	u := newPool(t, nil).Upstream(srv)
	metaOf := func(opts *CallOptions) map[string]json.RawMessage {
		t.Helper()
		res, err := u.Call(context.Background(), "meta", nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(textOf(t, res)), &m); err != nil {
			t.Fatalf("meta %q: %v", textOf(t, res), err)
		}
		return m
	}
	raw := metaOf(nil)
	sdk := metaOf(&CallOptions{OnProgress: func(context.Context, *mcp.ProgressNotificationParams) {}})
	for _, k := range requestMetaKeys {
		if len(raw[k]) == 0 || string(raw[k]) != string(sdk[k]) {
			t.Errorf("%s: raw call sent %s, the SDK %s", k, raw[k], sdk[k])
		}
	}
	if _, ok := raw["progressToken"]; ok || len(raw) != len(requestMetaKeys) {
		t.Errorf("raw call's _meta has %d members, want the %d of the protocol: %v", len(raw), len(requestMetaKeys), raw)
	}
}
