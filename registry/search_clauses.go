package registry

import (
	"slices"
	"strings"
	"unicode"
)

// Long requests describe several steps ("get the forecast for the cell,
// then list all stations"); a tool serves one of them. Scoring the bag of
// all the request's words favours a tool whose name mixes words of two
// steps (list_stations_in_cell) over one that fits a step exactly. So a
// request of several clauses is also scored clause by clause, and a tool's
// score blends its best clause's with the whole request's: the whole
// request still carries what every step shares (the service named once).

// clauseConnectors start a new clause after a comma, or on their own.
var clauseConnectors = wordSet("then", "and", "finally", "also", "additionally", "afterwards", "next", "after", "before", "plus", "lastly", "subsequently")

// splitClauses cuts query into its clauses: at sentence ends, at semicolons,
// at "then" (with or without "and" or a comma before it) and at a comma
// followed by a connecting word. A dot inside a word (a file name, a
// version, a ticker) does not end a sentence. It returns nil for a query of
// one clause.
func splitClauses(query string) []string {
	var out []string
	start := 0
	cut := func(end, next int) {
		if c := strings.TrimSpace(query[start:end]); c != "" {
			out = append(out, c)
		}
		start = next
	}
	fields := fieldSpans(query)
	for i, f := range fields {
		word := strings.ToLower(strings.Trim(query[f[0]:f[1]], `"'()[]{}<>,;:!?.`))
		if word == "then" && f[0] > start {
			cut(f[0], f[1])
			continue
		}
		last := query[f[1]-1]
		switch {
		case last == ';' || last == '!' || last == '?':
			cut(f[1], f[1])
		case last == '.' && (i+1 == len(fields) || startsSentence(query[fields[i+1][0]:])):
			cut(f[1], f[1])
		case last == ',' && i+1 < len(fields):
			next := strings.ToLower(strings.Trim(query[fields[i+1][0]:fields[i+1][1]], `"'()[]{}<>,;:!?.`))
			if _, ok := clauseConnectors[next]; ok {
				cut(f[1], f[1])
			}
		}
	}
	cut(len(query), len(query))
	if len(out) < 2 {
		return nil
	}
	return out
}

// fieldSpans returns the [start, end) of each whitespace-separated field.
func fieldSpans(s string) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range s {
		if unicode.IsSpace(r) {
			if start >= 0 {
				out = append(out, [2]int{start, i})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}

// startsSentence reports whether s begins like a sentence: an upper-case
// letter.
func startsSentence(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r)
	}
	return false
}

// serverWords maps the stems of server-name words to the servers whose
// names have them, keeping only distinctive ones: a word in the names of
// more than a few servers (or of most, in a small catalogue) says nothing
// about which server a query means.
func serverWords(docs []Doc, ix *Index) map[string][]int32 {
	byStem := map[string][]int32{}
	seen := map[string]bool{}
	var nServers int
	for i := range docs {
		name := docs[i].Server
		if seen[name] {
			continue
		}
		seen[name] = true
		nServers++
		id := int32(len(seen) - 1)
		for _, w := range textWords(name) {
			st := ix.stem(w)
			if l := byStem[st]; len(l) == 0 || l[len(l)-1] != id {
				byStem[st] = append(byStem[st], id)
			}
		}
	}
	if nServers < 2 {
		return nil
	}
	limit := max(1, min(3, nServers/4))
	for st, ids := range byStem {
		if len(ids) > limit || len(st) < 3 || !ownWord(ix, st, ids) {
			delete(byStem, st)
		}
	}
	return byStem
}

// ownWord reports whether most tools that use the word st belong to the
// servers ids it names: a brand ("obsidian") rather than a word of the
// trade that one server happens to have in its name ("generator").
func ownWord(ix *Index, st string, ids []int32) bool {
	t, ok := ix.terms[st]
	if !ok {
		return false
	}
	in := 0
	all := ix.postStart[t+1] - ix.postStart[t]
	for k := ix.postStart[t]; k < ix.postStart[t+1]; k++ {
		if slices.Contains(ids, ix.server[ix.postDoc[k]]) {
			in++
		}
	}
	return float64(in) >= 0.6*float64(all)
}
