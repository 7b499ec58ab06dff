package shim

import (
	"bytes"
	"testing"
)

// FuzzEnvelopeID: the shim's framing scan never panics, and an ID it finds
// is a piece of the line's head.
func FuzzEnvelopeID(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`,
		`{"jsonrpc":"2.0","id":"a\"b","result":{}}`,
		`{"id":null}`, `{"x":{"id":3}}`, `{"id" :  7 }`, `"id"`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		id, ok := envelopeID(line)
		if ok && (len(id) == 0 || !bytes.Contains(line[:min(len(line), 256)], id)) {
			t.Fatalf("envelopeID(%q) = %q", line, id)
		}
		methodIs(line, "initialize")
	})
}
