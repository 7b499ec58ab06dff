package registry

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// suggestView is a catalogue of n tools over a few servers, named as
// real servers name theirs.
func suggestView(n int) *View {
	verbs := []string{"get", "list", "create", "update", "delete", "search", "read", "write"}
	nouns := []string{"issue", "file", "page", "comment", "pull_request", "branch", "user", "repository_contents"}
	servers := []*Server{{Name: "github", Enabled: true}, {Name: "fs", Enabled: true}, {Name: "browser", Enabled: true}}
	c := NewCatalog(testConfig(servers...))
	var v *View
	for i, s := range servers {
		var names []string
		for j := i; j < n; j += len(servers) {
			names = append(names, fmt.Sprintf("%s_%s_%d", verbs[j%len(verbs)], nouns[(j/len(verbs))%len(nouns)], j))
		}
		v = c.SetListing("h-"+s.Name, &Listing{Tools: tools(names...), Source: SourceLive})
	}
	return v
}

// suggestEveryPair is Suggest as it was before it skipped the names too
// long or too short to be near: the edit distance of every pair.
func suggestEveryPair(v *View, name string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	lname := strings.ToLower(name)
	var cs []cand
	for _, t := range v.Tools {
		ln := strings.ToLower(t.Name)
		d := editDistance(lname, ln)
		if lo := strings.ToLower(t.Original); lo != ln {
			d = min(d, editDistance(lname, lo))
		}
		if strings.Contains(ln, lname) || strings.Contains(lname, strings.ToLower(t.Original)) {
			d = min(d, 1+abs(len(ln)-len(lname))/4)
		}
		if d <= max(3, len(lname)/2) {
			cs = append(cs, cand{t.Name, d})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	out := []string{}
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// TestSuggestSkipsOnlyWhatCannotBeNear checks Suggest against the edit
// distance of every pair, on names a model gets wrong: misspelt, cut,
// run on, cased otherwise, of another length altogether.
func TestSuggestSkipsOnlyWhatCannotBeNear(t *testing.T) {
	v := suggestView(300)
	r := rand.New(rand.NewPCG(1, 2))
	var names []string
	for range 400 {
		name := []byte(v.Tools[r.IntN(len(v.Tools))].Original)
		switch r.IntN(6) {
		case 0: // a typo or two
			for range 1 + r.IntN(2) {
				name[r.IntN(len(name))] = byte('a' + r.IntN(26))
			}
		case 1: // cut short
			name = name[:1+r.IntN(len(name))]
		case 2: // run on
			name = append(name, strings.Repeat("_x", 1+r.IntN(12))...)
		case 3: // with its server, in capitals
			name = []byte(strings.ToUpper("github." + string(name)))
		case 4: // a word of its own
			name = []byte(strings.Repeat("q", 1+r.IntN(40)))
		case 5: // in a sentence
			name = []byte("please call " + string(name) + " with the path of the file")
		}
		names = append(names, string(name))
	}
	suggested := 0
	for _, name := range names {
		got, want := v.Suggest(name, 5), suggestEveryPair(v, name, 5)
		if !slices.Equal(got, want) && (len(got) > 0 || len(want) > 0) {
			t.Errorf("Suggest(%q) = %v; every pair gives %v", name, got, want)
		}
		if len(got) > 0 {
			suggested++
		}
	}
	if suggested < len(names)/2 {
		t.Errorf("only %d of %d names got a suggestion", suggested, len(names))
	}
}

// TestSuggestLongNames: a name up to SuggestLimit is still matched when
// it holds a tool's name; a longer one gets no suggestion at all.
func TestSuggestLongNames(t *testing.T) {
	v := suggestView(300)
	tool := v.Tools[7]
	pad := strings.Repeat("é", (SuggestLimit-len(tool.Original))/4)
	within := pad + tool.Original + pad
	if len(within) > SuggestLimit {
		t.Fatalf("the padded name is %d bytes", len(within))
	}
	if got := v.Suggest(within, 5); !slices.Contains(got, tool.Name) {
		t.Errorf("a %d-byte name holding %s: Suggest = %v", len(within), tool.Original, got)
	}
	for _, name := range []string{within + strings.Repeat("e", SuggestLimit-len(within)+1), strings.Repeat(tool.Original, 1<<20/len(tool.Original))} {
		if got := v.Suggest(name, 5); len(got) != 0 {
			t.Errorf("a %d-byte name: Suggest = %v; want none", len(name), got)
		}
	}
}

// BenchmarkSuggest is the unknown-tool answer's search for names like
// the one called, over 1,600 tools: a misspelt name, and names of 1 KiB
// and 1 MiB.
func BenchmarkSuggest(b *testing.B) {
	v := suggestView(1600)
	for _, name := range []string{"get_isue_17", strings.Repeat("get_issue_", SuggestLimit/10), strings.Repeat("get_issue_", 1<<20/10)} {
		b.Run(fmt.Sprintf("%dB", len(name)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v.Suggest(name, 5)
			}
		})
	}
}
