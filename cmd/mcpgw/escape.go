package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// What the CLI prints of what clients, upstreams and models wrote (client
// names, session IDs, tool names, argument keys, log lines, errors) goes
// through oneLine or lines first: a newline in a client's name must not
// print as a forged audit line, nor an escape sequence clear the screen or
// move the cursor. Characters a terminal does not show as themselves are
// written as JSON escapes (\n, \t, \r, \u001b, \u202e); so an escaped JSON
// line is the same JSON, and --json output stays valid. Normal text,
// non-ASCII letters included, prints as it is, unquoted.

// oneLine returns s with every character that is not graphic escaped:
// C0 and C1 controls (newlines and ESC among them), DEL, format characters
// such as bidirectional overrides, line and paragraph separators; invalid
// UTF-8 prints as \ufffd.
func oneLine(s string) string { return escapeText(s, false) }

// lines is oneLine for text of several lines (a tool's result): newlines
// and tabs are kept; carriage returns and every other control are escaped.
func lines(s string) string { return escapeText(s, true) }

func escapeText(s string, keepLines bool) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return s // printable ASCII: nothing to do
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		switch {
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == ' ' || (unicode.IsGraphic(r) && r != utf8.RuneError):
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r) // RuneError too: invalid UTF-8
		}
	}
	return b.String()
}
