package cachefile

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzMembers checks the member scan against encoding/json on every valid
// JSON input.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":"x\"}","b":[1,{"c":"]"}],"d":null}`,
		`{"k\u00e9y\n":"v\\\\","e":"\\"}`, `{"a":{"b":{"c":[[],{}]}},"n":-1.5e3,"t":true,"f":false}`,
		"{\n\t\"a\" :\r\n 1 ,\"b\":\"\\\\\\\"\"}", `[]`, `"s"`, `{"dup":1,"dup":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(data, &want) != nil || want == nil
		got, err := members(data)
		if wantErr {
			if err == nil {
				t.Fatalf("members(%q) = %v, want an error", data, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("members(%q): %v", data, err)
		}
		if len(got) != len(want) {
			t.Fatalf("members(%q) = %d members, want %d", data, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(bytes.TrimSpace(got[k]), bytes.TrimSpace(v)) {
				t.Fatalf("members(%q)[%q] = %q, want %q", data, k, got[k], v)
			}
		}
	})
}
