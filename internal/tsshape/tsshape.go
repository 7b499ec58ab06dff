// Package tsshape renders a JSON Schema as a compact TypeScript type, the
// shape a model reads fastest and writes calls against correctly: nested
// objects, arrays, enums, unions, required and optional fields, defaults.
// What has no TypeScript spelling (not, patternProperties, a $ref it
// cannot follow) becomes unknown; the input schema itself stays available
// to whoever needs the exact rules.
package tsshape

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// maxDepth bounds nesting (and $ref cycles); deeper shapes are unknown.
// maxNodes bounds the work of one rendering: $refs reused at every level
// would otherwise multiply it (a schema of a few hundred bytes could ask
// for 10^8 nodes); past it, the rest is unknown.
const (
	maxDepth = 8
	maxNodes = 2000
)

// Type renders schema (a decoded JSON object: map[string]any) as a
// TypeScript type on one line.
func Type(schema map[string]any) string {
	r := renderer{root: schema}
	return r.typ(schema, 0)
}

// Fields renders an object schema's properties one per line, each with
// its description as a comment, for a model reading a tool's parameters:
//
//	{
//	  message: string; // Text to echo
//	  count?: number; // default 1
//	}
//
// An object with no properties gives "{}"; a schema that is not an object
// gives its one-line type.
func Fields(schema map[string]any) string {
	r := renderer{root: schema}
	s := r.resolve(schema)
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 || !isObject(s) {
		if isObject(s) && s["additionalProperties"] == nil {
			return "{}"
		}
		return r.typ(s, 0)
	}
	var b strings.Builder
	b.WriteString("{\n")
	req := required(s)
	for _, name := range fieldOrder(props, req) {
		p, _ := props[name].(map[string]any)
		b.WriteString("  ")
		b.WriteString(key(name))
		if !req[name] {
			b.WriteString("?")
		}
		b.WriteString(": ")
		b.WriteString(r.typ(p, 1))
		b.WriteString(";")
		if c := comment(p); c != "" {
			b.WriteString(" // ")
			b.WriteString(c)
		}
		b.WriteString("\n")
	}
	b.WriteString("}")
	return b.String()
}

// Signature renders a call of name: `name(args: {...}): Result`, on one
// line; output may be nil (no declared output).
func Signature(name string, input, output map[string]any) string {
	in := "{}"
	if len(input) > 0 {
		in = Type(input)
	}
	out := "unknown"
	if len(output) > 0 {
		out = Type(output)
	}
	return name + "(args: " + in + "): " + out
}

type renderer struct {
	root   map[string]any
	active map[string]bool // $refs being expanded: a cycle renders as unknown
	nodes  int             // schemas rendered so far (maxNodes)
}

// resolve follows a local $ref ("#/$defs/X", "#/definitions/X").
func (r *renderer) resolve(s map[string]any) map[string]any {
	for range maxDepth {
		ref, _ := s["$ref"].(string)
		if ref == "" {
			return s
		}
		target := r.lookup(ref)
		if target == nil {
			return nil
		}
		s = target
	}
	return nil
}

func (r *renderer) lookup(ref string) map[string]any {
	path, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	cur := r.root
	for _, part := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		next, _ := cur[part].(map[string]any)
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

func (r *renderer) typ(s map[string]any, depth int) string {
	r.nodes++
	if depth > maxDepth || s == nil || r.nodes > maxNodes {
		return "unknown"
	}
	if ref, _ := s["$ref"].(string); ref != "" {
		target := r.lookup(ref)
		if target == nil || r.active[ref] {
			return "unknown"
		}
		if r.active == nil {
			r.active = map[string]bool{}
		}
		r.active[ref] = true
		defer delete(r.active, ref)
		return r.typ(target, depth+1)
	}
	if c, ok := s["const"]; ok {
		return literal(c)
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		parts := make([]string, 0, len(enum))
		for _, e := range enum {
			parts = append(parts, literal(e))
		}
		return strings.Join(parts, " | ")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			return r.union(alts, depth)
		}
	}
	if all, ok := s["allOf"].([]any); ok && len(all) > 0 {
		parts := make([]string, 0, len(all))
		for _, a := range all {
			am, _ := a.(map[string]any)
			parts = append(parts, wrap(r.typ(am, depth+1)))
		}
		return strings.Join(dedupe(parts), " & ")
	}
	switch t := s["type"].(type) {
	case string:
		return r.named(t, s, depth)
	case []any:
		parts := make([]string, 0, len(t))
		for _, x := range t {
			if name, ok := x.(string); ok {
				parts = append(parts, r.named(name, s, depth))
			}
		}
		return strings.Join(dedupe(parts), " | ")
	}
	if _, ok := s["properties"]; ok {
		return r.object(s, depth)
	}
	if _, ok := s["items"]; ok {
		return r.named("array", s, depth)
	}
	return "unknown"
}

func (r *renderer) union(alts []any, depth int) string {
	parts := make([]string, 0, len(alts))
	for _, a := range alts {
		am, _ := a.(map[string]any)
		parts = append(parts, r.typ(am, depth+1))
	}
	return strings.Join(dedupe(parts), " | ")
}

func (r *renderer) named(t string, s map[string]any, depth int) string {
	switch t {
	case "string", "boolean", "null":
		return t
	case "number", "integer":
		return "number"
	case "array":
		switch items := s["items"].(type) {
		case map[string]any:
			return wrap(r.typ(items, depth+1)) + "[]"
		case []any: // tuple (draft 4-7)
			parts := make([]string, 0, len(items))
			for _, it := range items {
				im, _ := it.(map[string]any)
				parts = append(parts, r.typ(im, depth+1))
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
		if prefix, ok := s["prefixItems"].([]any); ok {
			return r.union(prefix, depth) + "[]"
		}
		return "unknown[]"
	case "object":
		return r.object(s, depth)
	}
	return "unknown"
}

func (r *renderer) object(s map[string]any, depth int) string {
	props, _ := s["properties"].(map[string]any)
	var extra string
	switch ap := s["additionalProperties"].(type) {
	case map[string]any:
		extra = r.typ(ap, depth+1)
	case bool:
		if ap && len(props) == 0 {
			extra = "unknown"
		}
	}
	if len(props) == 0 {
		if extra == "" {
			extra = "unknown"
		}
		return "Record<string, " + extra + ">"
	}
	req := required(s)
	var b strings.Builder
	b.WriteString("{ ")
	for i, name := range fieldOrder(props, req) {
		if i > 0 {
			b.WriteString("; ")
		}
		p, _ := props[name].(map[string]any)
		b.WriteString(key(name))
		if !req[name] {
			b.WriteString("?")
		}
		b.WriteString(": ")
		b.WriteString(r.typ(p, depth+1))
	}
	if extra != "" {
		b.WriteString("; [key: string]: " + extra)
	}
	b.WriteString(" }")
	return b.String()
}

func isObject(s map[string]any) bool {
	switch t := s["type"].(type) {
	case string:
		return t == "object"
	case nil:
		_, ok := s["properties"]
		return ok
	}
	return false
}

func required(s map[string]any) map[string]bool {
	out := map[string]bool{}
	req, _ := s["required"].([]any)
	for _, x := range req {
		if name, ok := x.(string); ok {
			out[name] = true
		}
	}
	return out
}

// fieldOrder puts required fields first, each group alphabetical: what
// the model must supply leads, and the order is stable.
func fieldOrder(props map[string]any, req map[string]bool) []string {
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if req[a] != req[b] {
			if req[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return names
}

// comment is a property's description and default, on one line.
func comment(p map[string]any) string {
	d, _ := p["description"].(string)
	d = strings.Join(strings.Fields(d), " ")
	if def, ok := p["default"]; ok {
		if d != "" {
			d += " "
		}
		d += "(default " + literal(def) + ")"
	}
	return d
}

func literal(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "unknown"
	}
	return string(data)
}

// key quotes a property name that is not a plain identifier.
func key(name string) string {
	if name == "" {
		return `""`
	}
	for i, c := range name {
		if c == '_' || c == '$' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (i > 0 && '0' <= c && c <= '9') {
			continue
		}
		return strconv.Quote(name)
	}
	return name
}

// wrap parenthesises a union or intersection used as an array element.
func wrap(t string) string {
	depth := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '{', '[', '(', '<':
			depth++
		case '}', ']', ')', '>':
			depth--
		case '"':
			// Skip a string literal: its text is not syntax.
			for i++; i < len(t) && t[i] != '"'; i++ {
				if t[i] == '\\' {
					i++
				}
			}
		case '|', '&':
			if depth == 0 {
				return "(" + t + ")"
			}
		}
	}
	return t
}

func dedupe(parts []string) []string {
	out := parts[:0]
	for _, p := range parts {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
