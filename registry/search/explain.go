package search

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// An Explanation says why a tool scored what it did for a query.
type Explanation struct {
	Score   float64     // as Search scores it
	Matches []TermMatch // one per query word (or pair, or word as written) that matched, best first
	Clause  string      // the clause that fits the tool best, when the query has several
	Named   bool        // the query names the tool's server
	Cover   float64     // share of the tool's name words the query has
	// FullName: the query writes the tool's whole name.
	FullName bool
	// Number: the tool lists what the query names in the plural, or is a
	// sibling of the list tool of what it names in the singular.
	Number bool
	// OtherAction: the tool's name does another thing than the query asks
	// (create_x for "list my x"), which costs it rankParams.action.
	OtherAction bool
	// OtherKind: the tool's name handles another kind of file than the
	// query names (save_as_pdf for "save it to notes.md"), which costs it
	// rankParams.otherKind.
	OtherKind bool
	// Identifier: the tool requires an identifier and the query carries
	// one ("paper 2203.12277"), which gains it rankParams.ident.
	Identifier bool
	// PluralName: the tool's name has in the plural a noun the query has
	// only in the singular, which costs it rankParams.plural.
	PluralName bool
	// Deprecated: the tool's description says it is deprecated and the
	// query does not name it in full, which costs it rankParams.dated.
	Deprecated bool
}

// A TermMatch is one query word's part in a tool's score.
type TermMatch struct {
	Term   string  // the catalogue term it matched: the word's stem, a synonym, a prefix, "a b" for a pair, "=word" as written
	Weight float64 // 1 for the word itself, less for a synonym, related word, prefix or typo
	Score  float64 // what it added
}

// Explain scores doc (an index into the docs given to NewIndex) for query
// as Search does, term by term.
func (ix *Index) Explain(query string, doc int) Explanation {
	var ex Explanation
	if doc < 0 || doc >= len(ix.docs) {
		return ex
	}
	query = CapQuery(query)
	names := make([]string, len(ix.terms))
	for t, id := range ix.terms {
		names[id] = t
	}
	s := newSearchScratch(0, len(ix.terms))
	d := int32(doc)

	groups, _ := ix.parseQuery(query, s, false)
	acts, kinds := s.acts, s.kinds
	var whole float64
	for _, g := range groups {
		m, v := ix.explainGroup(g, d, names)
		if v > 0 {
			ex.Matches = append(ex.Matches, m)
			whole += v
		}
	}
	sort.SliceStable(ex.Matches, func(i, j int) bool { return ex.Matches[i].Score > ex.Matches[j].Score })

	score := whole
	if clauses := splitClauses(query); len(clauses) > 1 && ix.p.clause > 0 {
		var best float64
		for _, c := range clauses {
			gs, _ := ix.parseQuery(c, s, false)
			var v float64
			for _, g := range gs {
				_, gv := ix.explainGroup(g, d, names)
				v += gv
			}
			if v > best {
				best, ex.Clause = v, c
			}
		}
		score = (1-ix.p.clause)*whole + ix.p.clause*best
	}
	ex.Named = slices.Contains(ix.namedServers(query, s), ix.server[d])
	if ex.Named {
		score *= 1 + ix.p.named
	}
	gen := ix.markQuery(query, s)
	if ix.p.cover > 0 {
		ex.Cover = float64(ix.nameCoverage(d, s, gen))
		score *= 1 + ix.p.cover*ex.Cover
	}
	if ex.Number = ix.p.number > 0 && ix.numberFits(d, s, gen, acts); ex.Number {
		score *= 1 + ix.p.number
	}
	if ex.PluralName = ix.p.plural > 0 && !quantified(query) && ix.pluralOnly(d, s, gen); ex.PluralName {
		score *= 1 - ix.p.plural
	}
	if ex.FullName = slices.Contains(ix.namedTools(query, s), d); ex.FullName {
		score *= 1 + ix.p.fullName
	} else if ex.Deprecated = ix.deprecated[d]; ex.Deprecated {
		score *= 1 - ix.p.dated
	}
	if ex.Identifier = ix.p.ident > 0 && ix.needsID[d] && hasIdentifier(query); ex.Identifier {
		score *= 1 + ix.p.ident
	}
	if ix.otherAction(d, acts) {
		ex.OtherAction = true
		score *= 1 - ix.p.action
	}
	if ix.otherKind(d, kinds) {
		ex.OtherKind = true
		score *= 1 - ix.p.otherKind
	}
	ex.Score = score
	return ex
}

// explainGroup is one query group's contribution to d's score, and the
// alternative that carried it.
func (ix *Index) explainGroup(g queryGroup, d int32, names []string) (TermMatch, float64) {
	var best, sum float64
	var m TermMatch
	for _, a := range g.alts {
		lo, hi := int(ix.postStart[a.term]), int(ix.postStart[a.term+1])
		k, found := slices.BinarySearch(ix.postDoc[lo:hi], d)
		if !found {
			continue
		}
		v := float64(a.w) * float64(ix.postScore[lo+k])
		sum += v
		if v > best {
			best = v
			m = TermMatch{Term: names[a.term], Weight: float64(a.w)}
		}
	}
	if len(g.alts) > 1 {
		best += ix.p.soft * (sum - best)
	}
	m.Score = best
	return m, best
}

// String writes the explanation on one line per part.
func (ex Explanation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "score %.3f", ex.Score)
	if ex.Named {
		b.WriteString(", server named in the query")
	}
	if ex.Cover > 0 {
		fmt.Fprintf(&b, ", %.0f%% of its name's words in the query", 100*ex.Cover)
	}
	if ex.FullName {
		b.WriteString(", its full name in the query")
	}
	if ex.Number {
		b.WriteString(", it lists what the query names in the plural (or gets one of what it names in the singular)")
	}
	if ex.Identifier {
		b.WriteString(", it takes an identifier and the query has one")
	}
	if ex.OtherAction {
		b.WriteString(", its name does another thing than the query asks")
	}
	if ex.OtherKind {
		b.WriteString(", its name handles another kind of file than the query names")
	}
	if ex.PluralName {
		b.WriteString(", its name has in the plural what the query names in the singular")
	}
	if ex.Deprecated {
		b.WriteString(", deprecated")
	}
	if ex.Clause != "" {
		fmt.Fprintf(&b, "\n  best clause: %q", ex.Clause)
	}
	for _, m := range ex.Matches {
		fmt.Fprintf(&b, "\n  %-24s %6.3f", m.Term, m.Score)
		if m.Weight < 1 {
			fmt.Fprintf(&b, "  (weight %.2f)", m.Weight)
		}
	}
	return b.String()
}
