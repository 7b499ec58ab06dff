package jsonwire

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestMember(t *testing.T) {
	obj := []byte(` {"result":{"id":"inner","a":[1,{"id":2}],"s":"x\"id\":3"}, "jsonrpc" : "2.0","id":"mcpgw-7" ,"n":-1.5e3,"t":true}`)
	for _, tc := range []struct{ key, want string }{
		{"id", `"mcpgw-7"`},
		{"jsonrpc", `"2.0"`},
		{"n", `-1.5e3`},
		{"t", `true`},
		{"result", `{"id":"inner","a":[1,{"id":2}],"s":"x\"id\":3"}`},
	} {
		got, ok := Member(obj, tc.key)
		if !ok || string(got) != tc.want {
			t.Errorf("Member(%q) = %s, %v; want %s", tc.key, got, ok, tc.want)
		}
		// Whatever Member returns is the value a decoder finds.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(obj, &m); err != nil {
			t.Fatal(err)
		}
		if string(m[tc.key]) != tc.want {
			t.Errorf("decoder disagrees on %q: %s", tc.key, m[tc.key])
		}
	}
	for _, bad := range []string{``, `[]`, `{"id"}`, `{"id":`, `{"a":"unterminated`, `{"a":{"b":1}`, `"id"`} {
		if got, ok := Member([]byte(bad), "id"); ok {
			t.Errorf("Member(%q) = %s, found in invalid input", bad, got)
		}
	}
	if _, ok := Member([]byte(`{"a":1,"b":{"id":1}}`), "id"); ok {
		t.Error("a nested id was taken for the top-level one")
	}
}

func TestMembersAndElements(t *testing.T) {
	var keys []string
	if !Members([]byte(`{"a":1,"b":[2,3],"c":{"d":"}"}}`), func(k, v []byte) bool {
		keys = append(keys, string(k)+"="+string(v))
		return true
	}) {
		t.Fatal("Members: not well formed")
	}
	if got := len(keys); got != 3 || keys[1] != "b=[2,3]" || keys[2] != `c={"d":"}"}` {
		t.Errorf("Members: %q", keys)
	}
	var elems []string
	if !Elements([]byte(` [ {"type":"text"} , "x]" ,3]`), func(e []byte) bool {
		elems = append(elems, string(e))
		return true
	}) {
		t.Fatal("Elements: not well formed")
	}
	if len(elems) != 3 || elems[0] != `{"type":"text"}` || elems[1] != `"x]"` || elems[2] != "3" {
		t.Errorf("Elements: %q", elems)
	}
}

func TestWithout(t *testing.T) {
	for _, tc := range []struct{ in, key, want string }{
		{`{"a":1,"resultType":"complete","b":[2]}`, "resultType", `{"a":1,"b":[2]}`},
		{`{"resultType":"complete","a":1}`, "resultType", `{"a":1}`},
		{`{"a":1,"resultType":"complete"}`, "resultType", `{"a":1}`},
		{`{"resultType":"complete"}`, "resultType", `{}`},
		{` { "a" : {"resultType":1} , "resultType" : "x" } `, "resultType", ` { "a" : {"resultType":1} } `},
		{`{"a":1}`, "resultType", `{"a":1}`},
	} {
		got := Without([]byte(tc.in), tc.key)
		if string(got) != tc.want {
			t.Errorf("Without(%s) = %s; want %s", tc.in, got, tc.want)
		}
		if !json.Valid(got) {
			t.Errorf("Without(%s) = %s: not JSON", tc.in, got)
		}
	}
}

func TestString(t *testing.T) {
	if s, ok := String([]byte(`"tools/call"`)); !ok || s != "tools/call" {
		t.Errorf("String = %q, %v", s, ok)
	}
	if _, ok := String([]byte(`"a\nb"`)); ok {
		t.Error("an escaped string was returned undecoded")
	}
}

func FuzzWithout(f *testing.F) {
	f.Add([]byte(`{"a":1,"resultType":"complete","b":[2]}`), "resultType")
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		out := Without(b, key)
		if del := Delete(bytes.Clone(b), key); !bytes.Equal(del, out) {
			t.Fatalf("Delete(%s, %q) = %s, Without gave %s", b, key, del, out)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Without(%s, %q) = %s: not JSON", b, key, out)
		}
		n := 0
		Members(b, func(k, _ []byte) bool {
			if string(k) == key {
				n++
			}
			return true
		})
		count := func(obj []byte) (all int) {
			Members(obj, func(_, _ []byte) bool { all++; return true })
			return all
		}
		if n == 1 {
			if _, found := Member(out, key); found {
				t.Fatalf("Without(%s, %q) = %s: still there", b, key, out)
			}
			if count(out) != count(b)-1 {
				t.Fatalf("Without(%s, %q) = %s: lost other members", b, key, out)
			}
		}
	})
}

func FuzzMember(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), "id")
	f.Add([]byte(`{"a":[{"b":"\\\""}],"id":"x"}`), "id")
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		raw, ok := Member(b, key)
		if !ok || !json.Valid(b) {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return
		}
		if want, found := m[key]; found && string(want) != string(raw) {
			// Duplicate keys: the decoder keeps the last, Member the first.
			n := 0
			Members(b, func(k, _ []byte) bool {
				if string(k) == key {
					n++
				}
				return true
			})
			if n < 2 {
				t.Fatalf("Member(%q) = %s; decoder says %s", key, raw, want)
			}
		}
	})
}

// Delete removes a member as Without does, in obj's own bytes, without
// allocating.
func TestDelete(t *testing.T) {
	for _, tc := range []struct{ obj, key, want string }{
		{`{"resultType":"complete","content":[]}`, "resultType", `{"content":[]}`},
		{`{"content":[] , "resultType":"complete" ,"isError":true}`, "resultType", `{"content":[] ,"isError":true}`},
		{`{"content":[],"resultType":"complete"}`, "resultType", `{"content":[]}`},
		{`{"resultType":"complete"}`, "resultType", `{}`},
		{`{"content":[{"resultType":1}]}`, "resultType", `{"content":[{"resultType":1}]}`},
		{`[1,2]`, "resultType", `[1,2]`},
	} {
		obj := []byte(tc.obj)
		if got := Delete(obj, tc.key); string(got) != tc.want {
			t.Errorf("Delete(%s, %q) = %s, want %s", tc.obj, tc.key, got, tc.want)
		}
		if got := Without([]byte(tc.obj), tc.key); string(got) != tc.want {
			t.Errorf("Without(%s, %q) = %s, want %s", tc.obj, tc.key, got, tc.want)
		}
	}
	buf := []byte(`{"_meta":{"a":1},"resultType":"complete","content":[]}`)
	work := make([]byte, len(buf))
	if n := testing.AllocsPerRun(100, func() {
		copy(work, buf)
		_ = Delete(work, "resultType")
	}); n != 0 {
		t.Errorf("Delete allocates %v times", n)
	}
}
