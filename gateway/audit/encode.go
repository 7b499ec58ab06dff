package audit

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// appendRecord appends r as one JSON line, as encoding/json would write
// it (the same field names and omissions), without reflection: a line is
// written for every tool call. st keeps the formatted second of the last
// record's time for the next.
func appendRecord(b []byte, r *Record, st *timeStamp) []byte {
	b = append(b, `{"time":"`...)
	b = st.append(b, r.Time)
	b = append(b, `","event":`...)
	b = appendString(b, r.Event)
	b = appendField(b, "session", r.Session)
	b = appendField(b, "client", r.Client)
	b = appendField(b, "user", r.User)
	b = append(b, `,"server":`...)
	b = appendString(b, r.Server)
	b = append(b, `,"tool":`...)
	b = appendString(b, r.Tool)
	b = appendField(b, "method", r.Method)
	b = appendField(b, "script", r.Script)
	b = appendField(b, "args", r.Args)
	b = appendField(b, "outcome", r.Outcome)
	b = appendField(b, "approval", r.Approval)
	b = appendField(b, "decidedBy", r.DecidedBy)
	b = appendField(b, "rule", r.Rule)
	if r.DurationMs != 0 {
		b = append(b, `,"durationMs":`...)
		b = strconv.AppendFloat(b, r.DurationMs, 'f', -1, 64)
	}
	return append(b, "}\n"...)
}

func appendField(b []byte, name, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return appendString(b, v)
}

const hexDigits = "0123456789abcdef"

// plain holds the bytes appendString writes as they are: printable ASCII
// but for the quote, the backslash, <, > and &.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// MaxField bounds each string of a record, in bytes. What a caller names
// is written as the caller wrote it (a tool that does not exist, the
// client's name): past MaxField bytes the rest is left out and counted,
// so that one request cannot write megabytes to the log nor push other
// records out of the files kept.
const MaxField = 1024

// appendString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced, and <, >, & and the
// line separators escaped as encoding/json does. Past MaxField bytes it
// is cut, on a character's start, and ends "…(+N bytes)".
func appendString(b []byte, s string) []byte {
	left := 0
	if len(s) > MaxField {
		n := MaxField
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s, left = s[:n], len(s)-n
	}
	b = append(b, '"')
	for i := 0; i < len(s); {
		// Runs of bytes written as they are go in one append: a record's
		// strings (IDs, names, digests) are mostly nothing else.
		j := i
		for j < len(s) && plain[s[j]] {
			j++
		}
		if j > i {
			b = append(b, s[i:j]...)
			if i = j; i == len(s) {
				break
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	if left > 0 {
		b = append(b, "…(+"...)
		b = strconv.AppendInt(b, int64(left), 10)
		b = append(b, " bytes)"...)
	}
	return append(b, '"')
}

// timeStamp formats times as time.RFC3339Nano does, keeping the formatted
// second (date, time of day, zone) of the last: records come many a
// second, and formatting a whole time was a third of a record's cost.
type timeStamp struct {
	sec  int64
	loc  *time.Location
	head []byte // "2006-01-02T15:04:05"
	zone []byte // "Z" or "-07:00"
}

func (st *timeStamp) append(b []byte, t time.Time) []byte {
	if sec := t.Unix(); st.head == nil || sec != st.sec || t.Location() != st.loc {
		// The second as RFC 3339 writes it, without a fraction: the
		// zone is "Z" or "±hh:mm" at its end.
		whole := time.Unix(sec, 0).In(t.Location()).AppendFormat(nil, time.RFC3339)
		z := len(whole) - 1
		if whole[z] != 'Z' {
			z = len(whole) - len("-07:00")
		}
		st.sec, st.loc, st.head, st.zone = sec, t.Location(), whole[:z], whole[z:]
	}
	b = append(b, st.head...)
	if ns := t.Nanosecond(); ns != 0 {
		// As RFC3339Nano: nine digits, trailing zeros left out.
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i > 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 10
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, st.zone...)
}
