package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What the person approving a call reads of its arguments. Everything
// the upstream will be sent is shown: one line per value, nested values
// under their path (a.b[0].c) so nothing nested is out of sight, members
// in the order they are sent and repeated names each on their line (an
// upstream may read either); values under a secret-looking name masked at
// any depth; runs of spaces counted, so that padding cannot push text
// out of view. The form cuts long values to their head and tail with the
// number of characters cut, and stops after formLines lines; it then says
// how much it left out and where the call is shown whole (the status page
// and `mcpgw approve --list --full`, which show argsView's whole form).
//
// Marks the view adds are set in ⟨ ⟩, which are escaped wherever they
// occur in a name or a value, so a value cannot pass for a mark.

// The form's cuts.
const (
	formHead  = 120 // characters of a long value shown before the cut
	formTail  = 60  // and after it
	formPath  = 120 // characters of a path shown whole; longer ones are cut too
	formLines = 100 // values shown in the form
	masked    = `"••••"`
)

// argsView is the rendering of one call's arguments.
type argsView struct {
	text   string
	cut    int // characters cut from long values and paths
	hidden int // values past formLines
}

// leftOut says what the form does not show and where it is shown whole;
// "" when it shows everything.
func (a argsView) leftOut() string {
	var parts []string
	if a.cut > 0 {
		parts = append(parts, fmt.Sprintf("%d characters of long values are cut", a.cut))
	}
	if a.hidden > 0 {
		parts = append(parts, fmt.Sprintf("%d more values are not listed", a.hidden))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " and ") + " here: the whole call is on mcpgw's status page (Calls waiting for your approval) and in `mcpgw approve --list --full`."
}

// listed is the view with what it leaves out, as `mcpgw approve --list`
// prints it.
func (a argsView) listed() string {
	if more := a.leftOut(); more != "" {
		return a.text + "\n  (" + more + ")"
	}
	return a.text
}

// argsSummary renders a call's arguments for the approval form: cut.
func argsSummary(args json.RawMessage) argsView { return renderArgs(args, true) }

// argsWhole renders them whole (secrets still masked), for the page and
// the CLI.
func argsWhole(args json.RawMessage) string { return renderArgs(args, false).text }

func renderArgs(args json.RawMessage, cut bool) argsView {
	var v argsView
	var b strings.Builder
	n := 0
	err := walkArgs(args, func(path string, secret bool, val string, isString bool) {
		n++
		if cut && n > formLines {
			v.hidden++
			return
		}
		if path == "" {
			path = "(arguments)"
		} else if cut {
			path = v.cutText(path, formPath, formPath*2/3, formPath/3)
		}
		switch {
		case secret:
			val = masked
		case isString:
			val = v.showString(val, cut)
		case cut:
			val = v.cutText(val, formHead+formTail, formHead, formTail)
		}
		fmt.Fprintf(&b, "  %s: %s\n", path, val)
	})
	switch {
	case err != nil:
		return argsView{text: "  (unreadable)"}
	case n == 0:
		return argsView{text: "  (none)"}
	}
	v.text = strings.TrimRight(b.String(), "\n")
	return v
}

// showString quotes s, cut to its head and tail when cut is set and it
// is long.
func (v *argsView) showString(s string, cut bool) string {
	n := utf8.RuneCountInString(s)
	if !cut || n <= formHead+formTail {
		return `"` + escape(s) + `"`
	}
	head, tail := runePrefix(s, formHead), runeSuffix(s, formTail)
	dropped := n - formHead - formTail
	v.cut += dropped
	return fmt.Sprintf(`"%s…⟨cut %d characters⟩…%s"`, escape(head), dropped, escape(tail))
}

// cutText cuts shown text (a path, a number) longer than most to its
// head and tail.
func (v *argsView) cutText(s string, most, head, tail int) string {
	n := utf8.RuneCountInString(s)
	if n <= most {
		return s
	}
	dropped := n - head - tail
	v.cut += dropped
	return fmt.Sprintf("%s…⟨cut %d characters⟩…%s", runePrefix(s, head), dropped, runeSuffix(s, tail))
}

func runePrefix(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

func runeSuffix(s string, n int) string {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// spaceRun is a run of spaces long enough to be counted rather than shown.
var spaceRun = regexp.MustCompile(` {4,}`)

// escape writes s as the inside of a quoted string: control, format and
// invalid characters escaped (strconv.Quote's rules: nothing invisible
// and nothing that turns the text around), the marks' brackets escaped,
// and runs of spaces counted.
func escape(s string) string {
	q := strconv.Quote(s)
	q = q[1 : len(q)-1]
	q = strings.NewReplacer("⟨", `\u27e8`, "⟩", `\u27e9`).Replace(q)
	return spaceRun.ReplaceAllStringFunc(q, func(run string) string {
		return fmt.Sprintf("⟨%d spaces⟩", len(run))
	})
}

// plainName is a member name shown as it is in a path.
var plainName = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$@-]*$`)

func joinPath(path, name string) string {
	if !plainName.MatchString(name) {
		name = `"` + escape(name) + `"`
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

// walkArgs calls leaf for every value in args, in the order they are
// written: its path, whether a name on its path looks secret, and the
// value — a string's text (isString), else its JSON. Empty objects and
// arrays are values ({} and []).
func walkArgs(args json.RawMessage, leaf func(path string, secret bool, val string, isString bool)) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var walk func(path string, secret bool) error
	walk = func(path string, secret bool) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			empty := true
			for i := 0; dec.More(); i++ {
				empty = false
				if t == '[' {
					if err := walk(fmt.Sprintf("%s[%d]", path, i), secret); err != nil {
						return err
					}
					continue
				}
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if err := walk(joinPath(path, k), secret || secretName(k)); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			if empty {
				leaf(path, secret, map[json.Delim]string{'{': "{}", '[': "[]"}[t], false)
			}
		case string:
			leaf(path, secret, t, true)
		case json.Number:
			leaf(path, secret, t.String(), false)
		case bool:
			leaf(path, secret, strconv.FormatBool(t), false)
		case nil:
			leaf(path, secret, "null", false)
		}
		return nil
	}
	if err := walk("", false); err != nil {
		return err
	}
	if _, err := dec.Token(); err == nil {
		return fmt.Errorf("more than one value")
	}
	return nil
}

// secretName reports whether a member's name looks like it holds a
// secret: its letters and digits (any case, separators dropped — x-api-key,
// apiKey and API_KEY alike) name a token, secret, password, API key,
// credential, private key, cookie, session key or authorization.
func secretName(name string) bool {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	k := b.String()
	for _, w := range []string{"token", "secret", "passw", "passphrase", "apikey", "credential", "privatekey", "cookie", "sessionid", "sessionkey", "bearer", "signature"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	// auth, authorization, authentication, oauth, x-auth — not author.
	return strings.Contains(k, "auth") && (!strings.Contains(k, "author") || strings.Contains(k, "authoriz"))
}
