// Package jsonwire reads the envelope of a JSON-RPC message without
// decoding it: the top-level members of an object, found by skipping over
// the values in between. The hot path of a tool call (see upstream's
// lineConn and the gateway's fast calls) looks at a message's id, method
// and a few params this way and relays the rest as bytes.
//
// The functions assume valid JSON (callers check it, or got it from a
// peer whose malformed output is an error anyway): on invalid input they
// report not found, never panic.
package jsonwire

import (
	"bytes"
	"encoding/json"
)

// Member returns the raw value of the top-level member key of the JSON
// object obj (leading whitespace allowed), or ok false if obj is not an
// object or has no such member. Keys are compared as written: a key
// spelled with escapes does not match.
func Member(obj []byte, key string) (raw []byte, ok bool) {
	Members(obj, func(k, v []byte) bool {
		if string(k) == key {
			raw, ok = v, true
			return false
		}
		return true
	})
	return raw, ok
}

// Without returns obj without its top-level member key (a copy), or obj
// itself when it has no such member.
func Without(obj []byte, key string) []byte {
	from, to, ok := memberSpan(obj, key)
	if !ok {
		return obj
	}
	out := make([]byte, 0, len(obj)-(to-from))
	out = append(out, obj[:from]...)
	return append(out, obj[to:]...)
}

// Delete is Without in place: it moves the bytes after the member over it
// and returns obj shortened, so obj must be the caller's alone.
func Delete(obj []byte, key string) []byte {
	from, to, ok := memberSpan(obj, key)
	if !ok {
		return obj
	}
	n := copy(obj[from:], obj[to:])
	return obj[:from+n]
}

// memberSpan is the part of obj that removing its top-level member key
// removes: the member and the comma that parts it from the next member
// (the first) or from the one before (any other).
func memberSpan(obj []byte, key string) (from, to int, ok bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return 0, 0, false
	}
	i++
	prevEnd := i // where the previous member's value ended (or just past '{')
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			return 0, 0, false
		}
		if obj[i] == ',' {
			i++
			continue
		}
		if obj[i] != '"' {
			return 0, 0, false
		}
		start := i
		end := skipString(obj, i)
		if end < 0 {
			return 0, 0, false
		}
		k := obj[i+1 : end-1]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return 0, 0, false
		}
		i = skipSpace(obj, i+1)
		vend := Skip(obj, i)
		if vend < 0 {
			return 0, 0, false
		}
		if string(k) == key {
			if prevEnd == skipSpace(obj, 0)+1 {
				// The first member: it and the comma after it.
				rest := skipSpace(obj, vend)
				if rest < len(obj) && obj[rest] == ',' {
					rest++
				}
				return start, rest, true
			}
			// A later one: it and the comma before it.
			return prevEnd, vend, true
		}
		prevEnd = vend
		i = vend
	}
}

// Members calls f with each top-level key (as written, without quotes)
// and raw value of the object obj, until f returns false. It reports
// whether obj was a well-formed object up to where it stopped.
func Members(obj []byte, f func(key, value []byte) bool) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case '}':
			return true
		case ',':
			i++
			continue
		case '"':
		default:
			return false
		}
		end := skipString(obj, i)
		if end < 0 {
			return false
		}
		k := obj[i+1 : end-1]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = skipSpace(obj, i+1)
		vend := Skip(obj, i)
		if vend < 0 {
			return false
		}
		if !f(k, obj[i:vend]) {
			return true
		}
		i = vend
	}
}

// Elements calls f with each raw element of the JSON array arr until f
// returns false; it reports whether arr was a well-formed array up to
// where it stopped.
func Elements(arr []byte, f func(elem []byte) bool) bool {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	i++
	for {
		i = skipSpace(arr, i)
		if i >= len(arr) {
			return false
		}
		switch arr[i] {
		case ']':
			return true
		case ',':
			i++
			continue
		}
		end := Skip(arr, i)
		if end < 0 {
			return false
		}
		if !f(arr[i:end]) {
			return true
		}
		i = end
	}
}

// Skip returns the index just past the JSON value starting at b[i], or -1
// if there is none.
func Skip(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end := skipString(b, i)
				if end < 0 {
					return -1
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		// A number or a literal: up to the next delimiter.
		start := i
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				if i == start {
					return -1
				}
				return i
			}
			i++
		}
		if i == start {
			return -1
		}
		return i
	}
}

// skipString returns the index just past the string starting at b[i] (a
// quote), or -1 if it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// IsTrue reports whether raw is the literal true.
func IsTrue(raw []byte) bool { return string(raw) == "true" }

// String returns the contents of the JSON string raw when it has no
// escapes (the common case for methods, tool names and ids), else ok
// false: callers then decode it properly.
func String(raw []byte) (s string, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
	}
	return string(inner), true
}

// Marshal is json.Marshal without HTML escaping: the bytes the go-sdk
// writes for v in a message, so that what is encoded ahead of time reads
// as what it would have written.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
