package search

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpgw/mcpgw/internal/jsonwire"
)

// A tool's input schema: the words of its properties, and whether it
// requires an identifier.

// schemaWords returns the words of the property names of a JSON Schema,
// and the words of their descriptions and titles, at any depth (through
// properties, items, anyOf, oneOf and allOf, at most 8 levels), in
// document order, appended to names and descriptions; and whether the
// schema requires an identifier (idName) at its top level. It scans the bytes
// rather than decoding the schema: on a catalogue's worth of tools,
// decoding was a fifth of the index build.
func schemaWords(schema json.RawMessage, in interner, names, descriptions []string) ([]string, []string, bool) {
	var needsID bool
	var walk func(node []byte, depth int)
	walk = func(node []byte, depth int) {
		if depth > 8 {
			return
		}
		jsonwire.Members(node, func(k, v []byte) bool {
			switch string(k) {
			case "properties":
				jsonwire.Members(v, func(name, prop []byte) bool {
					names = appendTextWords(names, jsonKey(name, in), in)
					jsonwire.Members(prop, func(pk, pv []byte) bool {
						if string(pk) == "title" || string(pk) == "description" {
							if text, ok := jsonText(pv, in); ok {
								descriptions = appendTextWords(descriptions, text, in)
							}
						}
						return true
					})
					walk(prop, depth+1)
					return true
				})
			case "items":
				walk(v, depth+1)
			case "anyOf", "oneOf", "allOf":
				jsonwire.Elements(v, func(e []byte) bool {
					walk(e, depth+1)
					return true
				})
			case "required":
				if depth == 0 {
					jsonwire.Elements(v, func(e []byte) bool {
						needsID = needsID || len(e) > 2 && e[0] == '"' && idName(e[1:len(e)-1])
						return true
					})
				}
			}
			return true
		})
	}
	walk(schema, 0)
	return names, descriptions, needsID
}

// idName reports whether a property name, as JSON writes it, names an
// identifier: "id", "paper_id", "storyId", "ids".
func idName(name []byte) bool {
	n := len(name)
	for _, suffix := range [...]string{"id", "ids"} {
		k := len(suffix)
		if n < k || !strings.EqualFold(string(name[n-k:]), suffix) {
			continue
		}
		if n == k || name[n-k] == 'I' || name[n-k-1] == '_' || name[n-k-1] == '-' {
			return true
		}
	}
	return false
}

// jsonKey decodes an object key as jsonwire.Members gives it (without its
// quotes), escapes included.
func jsonKey(k []byte, in interner) string {
	if bytes.IndexByte(k, '\\') < 0 {
		return in.str(k)
	}
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &s) != nil {
		return string(k)
	}
	return s
}

// jsonText decodes a JSON string value; false for any other value.
func jsonText(raw []byte, in interner) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return in.str(raw[1 : len(raw)-1]), true
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
