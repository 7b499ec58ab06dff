package cachefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// The cache file can hold megabytes of tool schemas, of which a caller
// usually wants one server's entry. encoding/json validates and walks
// every byte again for each Unmarshal into a map of RawMessage; these
// helpers walk the members of an object that json.Valid already accepted,
// once, without copying.

var errNotObject = errors.New("not a JSON object")

// eachMember calls fn for each member of the JSON object in data, which
// must be valid JSON (checked by json.Valid), with its unquoted key and its
// value as a sub-slice of data. It stops early when fn returns false.
func eachMember(data []byte, fn func(key string, value []byte) bool) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return errNotObject
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return nil
	}
	for i < len(data) {
		kEnd := skipString(data, i)
		key, err := unquote(data[i:kEnd])
		if err != nil {
			return err
		}
		i = skipSpace(data, kEnd)
		i = skipSpace(data, i+1) // ':'
		vEnd := skipValue(data, i)
		if !fn(key, data[i:vEnd:vEnd]) {
			return nil
		}
		i = skipSpace(data, vEnd)
		if i >= len(data) || data[i] == '}' {
			return nil
		}
		i = skipSpace(data, i+1) // ','
	}
	return nil
}

// members returns the members of a valid JSON object.
func members(data []byte) (map[string]json.RawMessage, error) {
	m := make(map[string]json.RawMessage)
	err := eachMember(data, func(k string, v []byte) bool {
		m[k] = v
		return true
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// unquote decodes a JSON string as encoding/json does (escapes, and
// invalid UTF-8 as U+FFFD), quickly when there is neither.
func unquote(q []byte) (string, error) {
	body := q[1 : len(q)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body), nil
	}
	var s string
	err := json.Unmarshal(q, &s)
	return s, err
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string starting at data[i] ('"').
func skipString(data []byte, i int) int {
	start := i + 1
	for i = start; ; i++ {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return len(data)
		}
		i += j
		n := 0 // backslashes just before the quote: odd means it is escaped
		for k := i - 1; k >= start && data[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
	}
}

// skipValue returns the index after the value starting at data[i].
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = skipString(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return len(data)
	default: // number, true, false, null
		for ; i < len(data); i++ {
			switch data[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}
