package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// TestListAnswerBytes: a tools/list answer written from the tools'
// encodings made once is byte for byte the SDK's encoding of the same
// result: own and upstream tools, text the encoder would escape for HTML,
// a raw schema, and the _meta the SDK adds for protocol 2026-07-28; and
// the upstream tools' encodings are shared by the next answer.
func TestListAnswerBytes(t *testing.T) {
	table := &toolTable{upstream: map[string]*registry.Tool{}}
	table.list = append(table.list, &mcp.Tool{Name: "a_own", Description: "mcpgw's own <tool> & more",
		InputSchema: map[string]any{"type": "object"}})
	for i, schema := range []any{
		map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string", "description": "<b>bold</b> & \u2028"}}},
		json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
		nil,
	} {
		rt := &registry.Tool{Name: fmt.Sprintf("srv_t%d", i), Server: "srv", Original: fmt.Sprintf("t%d", i),
			Def: &mcp.Tool{Name: fmt.Sprintf("t%d", i), Description: "upstream <tool> " + fmt.Sprint(i), InputSchema: schema,
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: i == 0}}}
		table.upstream[rt.Name] = rt
		table.list = append(table.list, rt.Exposed())
	}
	for _, meta := range []mcp.Meta{nil, {mcp.MetaKeyServerInfo: &mcp.Implementation{Name: "mcpgw", Version: "1"}}} {
		res := &mcp.ListToolsResult{Meta: meta, Tools: table.list}
		res.TTLMs, res.CacheScope = 0, "private"
		want := sdkEncoding(t, res)
		got := sdkEncoding(t, &listAnswer{ListToolsResult: res, table: table})
		if string(got) != string(want) {
			t.Errorf("the answer's bytes:\n%s\nwant the SDK's:\n%s", got, want)
		}
	}
	empty := sdkEncoding(t, &mcp.ListToolsResult{Tools: []*mcp.Tool{}})
	if got := sdkEncoding(t, &listAnswer{ListToolsResult: &mcp.ListToolsResult{}, table: &toolTable{}}); string(got) != string(empty) {
		t.Errorf("an empty list: %s, want %s", got, empty)
	}
	first := table.upstream["srv_t0"].ExposedJSON()
	if again := table.upstream["srv_t0"].ExposedJSON(); &again[0] != &first[0] {
		t.Error("a tool's encoding is made again for the next answer")
	}
}

// sdkEncoding encodes v as the go-sdk's jsonrpc2 encodes a result:
// encoding/json without HTML escaping, no newline.
func sdkEncoding(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
