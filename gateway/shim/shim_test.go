package shim

import "testing"

func TestEnvelopeID(t *testing.T) {
	for _, tc := range []struct {
		line string
		id   string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"id":9}}`, "7", true},
		{`{"jsonrpc":"2.0","id":"a-b","result":{}}`, `"a-b"`, true},
		{`{"jsonrpc": "2.0", "id" : 12 }`, "12", true},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":3}}`, "", false},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, "", false},
		{`{"method":"x","params":{"nested":{"id":4}}}`, "", false},
	} {
		id, ok := envelopeID([]byte(tc.line))
		if ok != tc.ok || string(id) != tc.id {
			t.Errorf("envelopeID(%s) = %q, %v; want %q, %v", tc.line, id, ok, tc.id, tc.ok)
		}
	}
}
