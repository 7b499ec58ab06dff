package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// serverIdentity holds the values pi-mcp-adapter's computeServerHash hashes
// (metadata-cache.ts), after the adapter's own resolution. nil means the
// field is absent, which the adapter hashes differently from an empty value.
type serverIdentity struct {
	Command         *string
	Args            []string
	Env             map[string]string
	Cwd             *string
	URL             *string
	Headers         map[string]string
	Auth            any // nil, "oauth", "bearer" or false
	BearerToken     *string
	BearerTokenEnv  *string
	ExposeResources *bool
	IncludeTools    []string
	ExcludeTools    []string
}

// hash returns the identity hash: sha256 hex of the adapter's
// stableStringify of its identity object.
//
// TEMPORARY: this is a local copy until cachefile.Hash lands; then Hash is
// cachefile.Hash(cachefile.Identity{...}) and this file goes away. The
// adapter's identity object also has socket, requestHeadersCommand and
// protocolVersion keys, which mcpgw does not support: they are always
// undefined here.
func (id *serverIdentity) hash() string {
	var b strings.Builder
	// Keys in stableStringify's order (sorted by UTF-16 code units).
	fields := []struct {
		key string
		val func()
	}{
		{"args", func() { writeJSList(&b, id.Args) }},
		{"auth", func() {
			switch a := id.Auth.(type) {
			case string:
				writeJSString(&b, a)
			case bool:
				b.WriteString(strconv.FormatBool(a))
			default:
				b.WriteString("undefined")
			}
		}},
		{"bearerToken", func() { writeJSOptional(&b, id.BearerToken) }},
		{"bearerTokenEnv", func() { writeJSOptional(&b, id.BearerTokenEnv) }},
		{"command", func() { writeJSOptional(&b, id.Command) }},
		{"cwd", func() { writeJSOptional(&b, id.Cwd) }},
		{"env", func() { writeJSMap(&b, id.Env) }},
		{"excludeTools", func() { writeJSList(&b, id.ExcludeTools) }},
		{"exposeResources", func() {
			if id.ExposeResources == nil {
				b.WriteString("undefined")
			} else {
				b.WriteString(strconv.FormatBool(*id.ExposeResources))
			}
		}},
		{"headers", func() { writeJSMap(&b, id.Headers) }},
		{"includeTools", func() { writeJSList(&b, id.IncludeTools) }},
		{"protocolVersion", func() { b.WriteString("undefined") }},
		{"requestHeadersCommand", func() { b.WriteString("undefined") }},
		{"socket", func() { b.WriteString("undefined") }},
		{"url", func() { writeJSOptional(&b, id.URL) }},
	}
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSString(&b, f.key)
		b.WriteByte(':')
		f.val()
	}
	b.WriteByte('}')
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

func writeJSOptional(b *strings.Builder, s *string) {
	if s == nil {
		b.WriteString("undefined")
		return
	}
	writeJSString(b, *s)
}

func writeJSList(b *strings.Builder, list []string) {
	if list == nil {
		b.WriteString("undefined")
		return
	}
	b.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSString(b, s)
	}
	b.WriteByte(']')
}

func writeJSMap(b *strings.Builder, m map[string]string) {
	if m == nil {
		b.WriteString("undefined")
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUTF16)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSString(b, k)
		b.WriteByte(':')
		writeJSString(b, m[k])
	}
	b.WriteByte('}')
}

// compareUTF16 orders strings as JavaScript's default sort does.
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// writeJSString writes s as JavaScript's JSON.stringify does: only '"',
// '\\' and control characters are escaped; "<", U+2028 and the like are not.
func writeJSString(b *strings.Builder, s string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hexDigits[r>>4])
				b.WriteByte(hexDigits[r&0xf])
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
