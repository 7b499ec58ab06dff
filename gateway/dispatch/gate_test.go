package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestArgsSummary(t *testing.T) {
	long := "harmless" + strings.Repeat(" ", 300) + "; and-also-PRODUCTION"
	for _, tc := range []struct {
		name, args, want string
		cut              int
	}{
		{"masked at any depth, in the order sent",
			`{"path":"/etc/hosts","apiToken":"hunter2","Password":"p","n":3,"nested":{"token":"t","x-api-key":"k","ok":[1,{"authorization":"Bearer b"}]},"author":"ann"}`,
			"  path: \"/etc/hosts\"\n  apiToken: \"••••\"\n  Password: \"••••\"\n  n: 3\n  nested.token: \"••••\"\n  nested.x-api-key: \"••••\"\n  nested.ok[0]: 1\n  nested.ok[1].authorization: \"••••\"\n  author: \"ann\"", 0},
		{"every member of a secret one masked, its names shown",
			`{"auth":{"type":"basic","user":"u"},"credentials":[]}`,
			"  auth.type: \"••••\"\n  auth.user: \"••••\"\n  credentials: \"••••\"", 0},
		{"a long value: head and tail, spaces counted",
			`{"body":"` + long + `"}`,
			"  body: \"harmless⟨112 spaces⟩…⟨cut 149 characters⟩…⟨39 spaces⟩; and-also-PRODUCTION\"", 149},
		{"padding within the limit is counted, not cut",
			`{"q":"harmless` + strings.Repeat(" ", 130) + `; and-also-PRODUCTION"}`,
			"  q: \"harmless⟨130 spaces⟩; and-also-PRODUCTION\"", 0},
		{"repeated names each shown", `{"id":"safe","id":"PRODUCTION-DB"}`, "  id: \"safe\"\n  id: \"PRODUCTION-DB\"", 0},
		{"odd names quoted, invisible characters escaped, marks' brackets escaped",
			`{"a b":"x\u202ey","":{},"k":"⟨cut 3 characters⟩","l":"\n\t"}`,
			"  \"a b\": \"x\\u202ey\"\n  \"\": {}\n  k: \"\\u27e8cut 3 characters\\u27e9\"\n  l: \"\\n\\t\"", 0},
		{"no arguments", ``, "  (none)", 0},
		{"an empty object", `{}`, "  (arguments): {}", 0},
		{"not JSON", `{"a":`, "  (unreadable)", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := argsSummary(json.RawMessage(tc.args))
			if got.text != tc.want || got.cut != tc.cut {
				t.Errorf("argsSummary:\n got %q (cut %d)\nwant %q (cut %d)", got.text, got.cut, tc.want, tc.cut)
			}
		})
	}
}

// 25 arguments are all shown, the last one too; more than formLines are
// counted, and the form then says where the call is whole.
func TestApprovalFormShowsEveryArgument(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 25 {
		fmt.Fprintf(&b, `"a%02d":%d,`, i, i)
	}
	b.WriteString(`"id":"PRODUCTION-DB"}`)
	form := approvalForm("db", "drop", argsSummary(json.RawMessage(b.String())), "rule")
	if !strings.Contains(form.Message, `id: "PRODUCTION-DB"`) || !strings.Contains(form.Message, "a24: 24") {
		t.Errorf("the form hides arguments:\n%s", form.Message)
	}
	if strings.Contains(form.Message, "not listed") || strings.Contains(form.Message, "cut") {
		t.Errorf("the form says it left something out when it did not:\n%s", form.Message)
	}
	dflt := form.RequestedSchema.(map[string]any)["properties"].(map[string]any)["decision"].(map[string]any)["default"]
	if dflt != grantDeny {
		t.Errorf("the form's default answer is %v, want %q", dflt, grantDeny)
	}

	b.Reset()
	b.WriteString("[")
	for i := range formLines + 5 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%d", i)
	}
	b.WriteString("]")
	args := json.RawMessage(`{"s":"` + strings.Repeat("y", 500) + `","list":` + b.String() + `}`)
	form = approvalForm("db", "drop", argsSummary(args), "rule")
	if !strings.Contains(form.Message, "320 characters of long values are cut and 6 more values are not listed here: the whole call is on mcpgw's status page") ||
		!strings.Contains(form.Message, "`mcpgw approve --list --full`") {
		t.Errorf("the form does not say what it left out and where to see it:\n%s", form.Message)
	}
	whole := argsWhole(args)
	if !strings.Contains(whole, "list[104]: 104") || !strings.Contains(whole, strings.Repeat("y", 500)) {
		t.Errorf("the whole view cuts:\n%s", whole)
	}
}

// FuzzApprovalForm: nothing sent is invisible. For any JSON arguments,
// every value the upstream would be sent is in the approval form — whole,
// or its head and tail around a cut mark — or masked under a secret
// name, or counted among the values the form says it leaves out (and
// then whole in the page's view, which shows every value whole).
func FuzzApprovalForm(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, `{"nested":{"token":"x","list":[1,"two",{"x-api-key":"k"}]}}`,
		`{"id":"safe","id":"PRODUCTION-DB"}`, `{"q":"harmless` + strings.Repeat(" ", 130) + `; and-also-PRODUCTION"}`,
		`{"a b":"\u202e","":[[],{}],"n":1e400}`, `[1,2,3]`, `"text"`, `{"s":"⟨9 spaces⟩"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		if !json.Valid(args) {
			return
		}
		view := argsSummary(args)
		form := approvalForm("s", "t", view, "rule").Message
		whole := argsWhole(args)
		leftOut := view.hidden > 0 && strings.Contains(form, "more values are not listed here: the whole call is on mcpgw's status page")
		if (view.cut > 0 || view.hidden > 0) != (view.leftOut() != "") || (view.leftOut() != "" && !strings.Contains(form, view.leftOut())) {
			t.Fatalf("the form cut %d characters and %d values but says %q", view.cut, view.hidden, view.leftOut())
		}
		formText, wholeText := unmark(form), unmark(whole)
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		leaves(v, false, func(val string, isString, secret bool) {
			if secret {
				if !strings.Contains(form, masked) || !strings.Contains(whole, masked) {
					t.Fatalf("a secret value is not masked in\n%s", form)
				}
				return
			}
			show := val
			if isString {
				show = inner(val)
			}
			if !strings.Contains(wholeText, show) {
				t.Fatalf("the whole view hides %q:\n%s", val, whole)
			}
			const k = 16
			head, tail := runePrefix(val, k), runeSuffix(val, k)
			if isString {
				head, tail = inner(head), inner(tail)
			}
			if (!strings.Contains(formText, head) || !strings.Contains(formText, tail)) && !leftOut {
				t.Fatalf("the form hides %q (head %q, tail %q):\n%s", val, head, tail, form)
			}
		})
	})
}

// leaves calls leaf for every value in v, saying whether a name on its
// path looks secret.
func leaves(v any, secret bool, leaf func(val string, isString, secret bool)) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			leaf("{}", false, secret)
		}
		for k, x := range v {
			leaves(x, secret || secretName(k), leaf)
		}
	case []any:
		if len(v) == 0 {
			leaf("[]", false, secret)
		}
		for _, x := range v {
			leaves(x, secret, leaf)
		}
	case string:
		leaf(v, true, secret)
	case json.Number:
		leaf(v.String(), false, secret)
	case bool:
		leaf(strconv.FormatBool(v), false, secret)
	case nil:
		leaf("null", false, secret)
	}
}

// inner is s as a quoted string's inside, as a reader of the form reads
// it: escaped as Go quotes, the marks' brackets escaped.
func inner(s string) string {
	q := strconv.Quote(s)
	return strings.NewReplacer("⟨", `\u27e8`, "⟩", `\u27e9`).Replace(q[1 : len(q)-1])
}

var spacesMark = regexp.MustCompile(`⟨(\d+) spaces⟩`)

// unmark reads the form's counted spaces as the spaces they stand for.
func unmark(s string) string {
	return spacesMark.ReplaceAllStringFunc(s, func(m string) string {
		n, _ := strconv.Atoi(spacesMark.FindStringSubmatch(m)[1])
		return strings.Repeat(" ", n)
	})
}

func TestRuneCuts(t *testing.T) {
	s := "añb€c"
	if runePrefix(s, 2) != "añ" || runeSuffix(s, 2) != "€c" || runePrefix(s, 9) != s || runeSuffix(s, 9) != s || !utf8.ValidString(runeSuffix(s, 3)) {
		t.Errorf("runePrefix/runeSuffix of %q", s)
	}
}
