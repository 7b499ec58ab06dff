package gateway

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// passedMeta keeps a request's _meta as it came, member by member, and
// what it keeps encodes as decoding it would: the same members, the same
// values, the last of a repeated key.
func TestPassedMeta(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		meta    string
		raw     bool // kept as written, not decoded
		members int  // -1: nil (not an object)
	}{
		{`{}`, true, 0},
		{`{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`, true, 3},
		{`{"trace": "a b", "n": 1.50, "list": [1, {"x": null}], "t": true}`, true, 4},
		{`{"k":1,"k":2}`, true, 1},
		{`{"pro\u0067ressToken":1,"x":"y"}`, false, 2},
		{`{"a\"b":1}`, false, 1},
		{`{"k":"\u00e9"}`, true, 1},
		{`null`, false, -1},
		{`[1]`, false, -1},
		{`{"k":}`, false, -1},
	} {
		got := passedMeta([]byte(tc.meta))
		if tc.members < 0 {
			if got != nil {
				t.Errorf("%s: %v, want nil", tc.meta, got)
			}
			continue
		}
		if len(got) != tc.members {
			t.Errorf("%s: %d members, want %d", tc.meta, len(got), tc.members)
			continue
		}
		raw := true
		for _, v := range got {
			if _, ok := v.(json.RawMessage); !ok {
				raw = false
			}
		}
		if raw != tc.raw && len(got) > 0 {
			t.Errorf("%s: kept as written %v, want %v", tc.meta, raw, tc.raw)
		}
		var want mcp.Meta
		if err := json.Unmarshal([]byte(tc.meta), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(reencode(t, got), reencode(t, want)) {
			t.Errorf("%s: encodes as %s, decoding as %s", tc.meta, mustJSON(t, got), mustJSON(t, want))
		}
	}
}

// reencode is m encoded and decoded again: what an upstream receives.
func reencode(t *testing.T, m mcp.Meta) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(mustJSON(t, m), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
