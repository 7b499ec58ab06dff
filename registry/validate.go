package registry

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tailscale/hujson"
)

// ValidationError is one invalid value in a config file. Load wraps it with
// the file name, so errors read
//
//	/home/u/.config/mcpgw/mcp.json: servers.github.url: parse "ht!tp://x": ...
type ValidationError struct {
	// Field is the path to the value: "servers.NAME.FIELD", "settings.FIELD",
	// "imports[2]". Server names that are not plain identifiers are quoted.
	// It is "" for the top-level value.
	Field string
	// Value is the offending value as written, when it is short and not a
	// secret (never an env or header value); "" otherwise.
	Value string
	Err   error
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return e.Field + ": " + e.Err.Error()
}

func (e *ValidationError) Unwrap() error { return e.Err }

// configChecker walks a parsed config file, collecting validation errors and
// warnings. Errors are reported in document order.
type configChecker struct {
	errs  []configIssue
	warns []configIssue
	data  []byte // the file, for line and column; nil: not known
}

type configIssue struct {
	offset int
	err    error  // errs
	msg    string // warns
}

func (c *configChecker) fail(v *hujson.Value, field, value string, err error) {
	c.errs = append(c.errs, configIssue{offset: v.StartOffset, err: &ValidationError{Field: field, Value: value, Err: err}})
}

func (c *configChecker) failf(v *hujson.Value, field, format string, args ...any) {
	c.fail(v, field, "", fmt.Errorf(format, args...))
}

func (c *configChecker) warnf(v *hujson.Value, field, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	c.warns = append(c.warns, configIssue{offset: v.StartOffset, msg: msg})
}

// errors returns the collected errors in document order, each prefixed with
// file, joined; nil if there are none.
func (c *configChecker) errors(file string) error {
	if len(c.errs) == 0 {
		return nil
	}
	slices.SortStableFunc(c.errs, func(a, b configIssue) int { return cmp.Compare(a.offset, b.offset) })
	errs := make([]error, len(c.errs))
	for i, e := range c.errs {
		if line, col, ok := lineCol(c.data, e.offset); ok {
			errs[i] = fmt.Errorf("%s:%d:%d: %w", file, line, col, e.err)
		} else {
			errs[i] = fmt.Errorf("%s: %w", file, e.err)
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// lineCol is the 1-based line and column (in characters) of offset in data.
func lineCol(data []byte, offset int) (line, col int, ok bool) {
	if data == nil || offset < 0 || offset > len(data) {
		return 0, 0, false
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return line, col, true
}

func (c *configChecker) warnings() []string {
	slices.SortStableFunc(c.warns, func(a, b configIssue) int { return cmp.Compare(a.offset, b.offset) })
	var out []string
	for _, w := range c.warns {
		out = append(out, w.msg)
	}
	return out
}

// jsonMember is one object member, after duplicate names are resolved.
type jsonMember struct {
	name  string
	key   *hujson.Value
	value *hujson.Value
}

// members returns the members of obj in document order. A name given twice
// keeps its last value (as JSON.parse does) and draws a warning.
func (c *configChecker) members(obj *hujson.Object, field string) []jsonMember {
	last := make(map[string]int, len(obj.Members))
	for i := range obj.Members {
		last[hujsonString(obj.Members[i].Name)] = i
	}
	out := make([]jsonMember, 0, len(last))
	for i := range obj.Members {
		m := &obj.Members[i]
		name := hujsonString(m.Name)
		if last[name] != i {
			c.warnf(&m.Name, joinField(field, name), "given more than once; the last one is used")
			continue
		}
		out = append(out, jsonMember{name: name, key: &m.Name, value: &m.Value})
	}
	return out
}

func hujsonString(v hujson.Value) string {
	lit, _ := v.Value.(hujson.Literal)
	return lit.String()
}

// jsonKindName names a JSON value's type for messages.
func jsonKindName(v *hujson.Value) string {
	switch v.Value.Kind() {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "invalid value"
}

// jsonIsNull reports whether v is JSON null, which every field treats as absent
// (pi-mcp-adapter reads fields with ??, so null means "not set").
func jsonIsNull(v *hujson.Value) bool { return v.Value.Kind() == 'n' }

// jsonGot describes v for a type error: "got number 8080; quote it: \"8080\""
// for scalars that would have been fine as strings, "got array" otherwise.
func jsonGot(v *hujson.Value, wantString bool) string {
	k := jsonKindName(v)
	lit, ok := v.Value.(hujson.Literal)
	if wantString && ok && (k == "number" || k == "boolean") {
		return fmt.Sprintf("got %s %s; quote it: %q", k, lit, string(lit))
	}
	return "got " + k
}

// str reads a string value; ok is false for null or a wrong type (which is
// reported).
func (c *configChecker) str(v *hujson.Value, field string) (s string, ok bool) {
	if jsonIsNull(v) {
		return "", false
	}
	if v.Value.Kind() != '"' {
		c.failf(v, field, "must be a string, %s", jsonGot(v, true))
		return "", false
	}
	return hujsonString(*v), true
}

func (c *configChecker) boolean(v *hujson.Value, field string) (b, ok bool) {
	switch v.Value.Kind() {
	case 'n':
		return false, false
	case 't':
		return true, true
	case 'f':
		return false, true
	}
	c.failf(v, field, "must be true or false, %s", jsonGot(v, false))
	return false, false
}

// number reads a non-negative number; what names its unit in messages.
func (c *configChecker) number(v *hujson.Value, field, what string) (f float64, ok bool) {
	if jsonIsNull(v) {
		return 0, false
	}
	if v.Value.Kind() != '0' {
		c.failf(v, field, "must be a number%s, %s", what, jsonGot(v, false))
		return 0, false
	}
	lit := v.Value.(hujson.Literal)
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || math.IsInf(f, 0) {
		c.fail(v, field, string(lit), fmt.Errorf("%s is out of range", lit))
		return 0, false
	}
	if f < 0 {
		c.fail(v, field, string(lit), fmt.Errorf("must not be negative, got %s", lit))
		return 0, false
	}
	return f, true
}

// limit reads a whole non-negative number into *n (0: the limit's
// default); what names its unit in messages.
func (c *configChecker) limit(v *hujson.Value, field, what string, n *int) {
	f, ok := c.number(v, field, what)
	if !ok {
		return
	}
	if f != math.Trunc(f) || f > math.MaxInt32 {
		lit := v.Value.(hujson.Literal)
		c.fail(v, field, string(lit), fmt.Errorf("must be a whole number up to %d, got %s", math.MaxInt32, lit))
		return
	}
	*n = int(f)
}

// duration reads a non-negative number of units (time.Minute or
// time.Millisecond).
func (c *configChecker) duration(v *hujson.Value, field string, unit time.Duration) (d time.Duration, ok bool) {
	what := " of minutes"
	if unit == time.Millisecond {
		what = " of milliseconds"
	}
	f, ok := c.number(v, field, what)
	if !ok {
		return 0, false
	}
	if f*float64(unit) >= math.MaxInt64 {
		lit := v.Value.(hujson.Literal)
		c.fail(v, field, string(lit), fmt.Errorf("%s is too large", lit))
		return 0, false
	}
	return time.Duration(f * float64(unit)), true
}

// stringList reads an array of strings. A present empty array gives a non-nil
// empty slice: pi-mcp-adapter's identity hash tells [] from absent.
func (c *configChecker) stringList(v *hujson.Value, field string) (list []string, ok bool) {
	if jsonIsNull(v) {
		return nil, false
	}
	arr, isArr := v.Value.(*hujson.Array)
	if !isArr {
		c.failf(v, field, "must be an array of strings, %s", jsonGot(v, false))
		return nil, false
	}
	list = make([]string, 0, len(arr.Elements))
	ok = true
	for i := range arr.Elements {
		e := &arr.Elements[i]
		if e.Value.Kind() != '"' {
			c.failf(e, fmt.Sprintf("%s[%d]", field, i), "must be a string, %s", jsonGot(e, true))
			ok = false
			continue
		}
		list = append(list, hujsonString(*e))
	}
	return list, ok
}

// stringMap reads an object whose values are strings (env, headers). Values
// are secrets: they never appear in errors. A present empty object gives a
// non-nil empty map.
func (c *configChecker) stringMap(v *hujson.Value, field string) (m map[string]string, ok bool) {
	if jsonIsNull(v) {
		return nil, false
	}
	obj, isObj := v.Value.(*hujson.Object)
	if !isObj {
		c.failf(v, field, "must be an object of strings, %s", jsonGot(v, false))
		return nil, false
	}
	m = make(map[string]string, len(obj.Members))
	ok = true
	for _, mem := range c.members(obj, field) {
		f := joinField(field, mem.name)
		if mem.value.Value.Kind() != '"' {
			c.failf(mem.value, f, "must be a string, %s", jsonGot(mem.value, true))
			ok = false
			continue
		}
		m[mem.name] = hujsonString(*mem.value)
	}
	return m, ok
}

// oneOf checks that s is one of allowed.
func (c *configChecker) oneOf(v *hujson.Value, field, s string, allowed ...string) bool {
	if slices.Contains(allowed, s) {
		return true
	}
	c.fail(v, field, s, fmt.Errorf("%q is not one of %s", s, strings.Join(allowed, ", ")))
	return false
}

// joinField appends key to a field path, quoting keys that are not plain
// names so that paths stay unambiguous: servers."my.server".url.
func joinField(parent, key string) string {
	if !isPlainName(key) {
		key = strconv.Quote(key)
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func isPlainName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isNameChar(r) {
			return false
		}
	}
	return true
}

// isNameChar reports whether r may appear in a tool name as LLM APIs accept
// it: [A-Za-z0-9_-].
func isNameChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// unknownField records a warning for a field mcpgw does not read. Fields
// pi-mcp-adapter defines (foreign) are named as ignored; anything else is
// unknown, with a suggestion when it is close to a known field.
func (c *configChecker) unknownField(m jsonMember, field string, known, foreign []string) {
	if slices.Contains(foreign, m.name) {
		c.warnf(m.key, field, "not supported by mcpgw; ignored")
		return
	}
	if s := suggestField(m.name, known); s != "" {
		c.warnf(m.key, field, "unknown field (did you mean %q?)", s)
		return
	}
	c.warnf(m.key, field, "unknown field")
}

// suggestField returns the known name closest to name, if it is close enough to
// be a likely typo: same letters in another case, or at most two edits
// (one for short names).
func suggestField(name string, known []string) string {
	best, bestDist := "", math.MaxInt
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	limit := 2
	if len(name) <= 4 {
		limit = 1
	}
	if bestDist <= limit {
		return best
	}
	return ""
}
