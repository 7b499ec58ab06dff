package upstream

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDecodeResultAsTheSDK decodes results with every content type both
// ways and compares what they encode to.
func TestDecodeResultAsTheSDK(t *testing.T) {
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
