package tsshape

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func schema(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestType(t *testing.T) {
	cases := []struct{ schema, want string }{
		{`{"type":"string"}`, `string`},
		{`{"type":"integer"}`, `number`},
		{`{"type":["string","null"]}`, `string | null`},
		{`{"enum":["a","b",3]}`, `"a" | "b" | 3`},
		{`{"const":"x"}`, `"x"`},
		{`{"type":"array","items":{"type":"string"}}`, `string[]`},
		{`{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"number"}]}}`, `(string | number)[]`},
		{`{"type":"array","items":{"type":"object","properties":{"a":{"type":["string","null"]}}}}`, `{ a?: string | null }[]`},
		{`{"type":"array","items":{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"null"}]}}`, `({ a?: string } | null)[]`},
		{`{"type":"array","items":[{"type":"string"},{"type":"number"}]}`, `[string, number]`},
		{`{"type":"array"}`, `unknown[]`},
		{`{"type":"object"}`, `Record<string, unknown>`},
		{`{"type":"object","additionalProperties":{"type":"number"}}`, `Record<string, number>`},
		{`{"type":"object","required":["b"],"properties":{"a":{"type":"string"},"b":{"type":"object","properties":{"c":{"type":"boolean"}},"required":["c"]}}}`, `{ b: { c: boolean }; a?: string }`},
		{`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"string"}}`, `{ a?: string; [key: string]: string }`},
		{`{"properties":{"my-key":{"type":"string"}}}`, `{ "my-key"?: string }`},
		{`{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"number"}}}]}`, `{ a?: string } & { b?: number }`},
		{`{"$defs":{"N":{"type":"object","properties":{"next":{"$ref":"#/$defs/N"}}}},"$ref":"#/$defs/N"}`, `{ next?: unknown }`},
		{`{"$ref":"#/definitions/missing"}`, `unknown`},
		{`{"not":{"type":"string"}}`, `unknown`},
		{`{"enum":["a|b"]}`, `"a|b"`},
	}
	for _, c := range cases {
		if got := Type(schema(t, c.schema)); got != c.want {
			t.Errorf("Type(%s)\n got %s\nwant %s", c.schema, got, c.want)
		}
	}
}

// TestReusedRefsAreBounded: $refs that every level uses ten times would
// multiply into 10^8 nodes; the rendering stops at maxNodes.
func TestReusedRefsAreBounded(t *testing.T) {
	defs := map[string]any{}
	for i := range 9 {
		props := map[string]any{}
		for j := range 10 {
			props[fmt.Sprintf("p%d", j)] = map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)}
		}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"type": "object", "properties": props}
	}
	defs["d9"] = map[string]any{"type": "string"}
	s := map[string]any{"$defs": defs, "$ref": "#/$defs/d0"}
	got := Type(s)
	if len(got) > 100*maxNodes || !strings.Contains(got, "unknown") {
		t.Errorf("rendered %d bytes", len(got))
	}
}

func TestWrapSkipsStringLiterals(t *testing.T) {
	if got := wrap(`"a|b"`); got != `"a|b"` {
		t.Errorf("wrap = %s", got)
	}
	if got := wrap(`"a\"|" | "b"`); got != `("a\"|" | "b")` {
		t.Errorf("wrap = %s", got)
	}
}

func TestFields(t *testing.T) {
	s := schema(t, `{"type":"object","required":["message"],"properties":{
		"message":{"type":"string","description":"Text\n to echo"},
		"count":{"type":"integer","default":1},
		"opts":{"type":"object","properties":{"depth":{"enum":[1,2]},"tags":{"type":"array","items":{"type":"string"}}},"required":["tags"]}}}`)
	want := "{\n" +
		"  message: string; // Text to echo\n" +
		"  count?: number; // (default 1)\n" +
		"  opts?: { tags: string[]; depth?: 1 | 2 };\n" +
		"}"
	if got := Fields(s); got != want {
		t.Errorf("Fields =\n%s\nwant\n%s", got, want)
	}
	if got := Fields(schema(t, `{"type":"object"}`)); got != "{}" {
		t.Errorf("Fields(no properties) = %s", got)
	}
	if got := Fields(schema(t, `{"type":"object","additionalProperties":{"type":"string"}}`)); got != "Record<string, string>" {
		t.Errorf("Fields(map) = %s", got)
	}
}

func TestSignature(t *testing.T) {
	in := schema(t, `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)
	out := schema(t, `{"type":"object","properties":{"hits":{"type":"array","items":{"type":"string"}}}}`)
	if got, want := Signature("s_find", in, out), `s_find(args: { q: string }): { hits?: string[] }`; got != want {
		t.Errorf("Signature = %s, want %s", got, want)
	}
	if got, want := Signature("s_ping", nil, nil), `s_ping(args: {}): unknown`; got != want {
		t.Errorf("Signature = %s, want %s", got, want)
	}
}

// FuzzType: any JSON an upstream sends as a schema renders without
// panicking, in bounded size, and the same twice.
func FuzzType(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#"}}}}`,
		`{"anyOf":[{"type":"string"},{"enum":[1,"x",null,{"a":1}]}],"allOf":[{"$ref":"#/$defs/x"}],"$defs":{"x":{"$ref":"#/$defs/x"}}}`,
		`{"type":["object","null"],"properties":{"k\"ey":{"const":"v"}},"additionalProperties":{"type":"integer"}}`,
		`{"type":"array","items":[{"type":"string"},{"prefixItems":[]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		if json.Unmarshal(data, &m) != nil {
			return
		}
		a, b := Type(m), Fields(m)
		if a != Type(m) || b != Fields(m) {
			t.Fatal("rendering is not deterministic")
		}
		if len(a) > 64*len(data)+1024 || len(b) > 64*len(data)+1024 {
			t.Fatalf("%d bytes of schema rendered as %d and %d bytes", len(data), len(a), len(b))
		}
	})
}
