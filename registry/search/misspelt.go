package search

import (
	"slices"
)

// Catalogues have typos too: a tool described as offering "strology"
// services should still answer a question about astrology. A word the
// ranking knows (one of its synonyms or related words) that the catalogue
// lacks is matched to the catalogue's word one edit away from it, if there
// is exactly one. Only long words: among short ones, one edit is often
// another word.

// minMisspelt is the length of the shortest known stem looked for
// misspelt (a letter changed: one more); maxMisspelt the most tools a
// misspelling is in.
const (
	minMisspelt = 7
	maxMisspelt = 3
)

// buildLexicon returns the stems of maps long enough to look for
// misspelt, sorted (vocabulary.lexicon).
func buildLexicon(maps ...map[string][]string) []string {
	var out []string
	for _, m := range maps {
		for st := range m {
			if len(st) >= minMisspelt && isASCII(st) {
				out = append(out, st)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// misspellings maps each known stem the catalogue lacks to its term one
// edit away (a letter missing, added or changed, or two swapped).
func (ix *Index) misspellings() {
	var buf [64]byte
	v := vocab()
	for _, st := range v.lexicon {
		if _, ok := ix.terms[st]; ok {
			continue
		}
		found, n := int32(-1), 0
		try := func(b []byte) {
			if n > 1 {
				return
			}
			id, ok := ix.terms[string(b)]
			if !ok || id == found || ix.postStart[id+1]-ix.postStart[id] > maxMisspelt {
				return
			}
			if _, known := v.synonymsOf[string(b)]; known {
				return // another word the ranking knows
			}
			if _, known := v.relatedTo[string(b)]; known {
				return
			}
			found = id
			n++
		}
		oneEdit(st, buf[:0], len(st) > minMisspelt, try)
		if n == 1 {
			if ix.misspelt == nil {
				ix.misspelt = make(map[string]int32)
			}
			ix.misspelt[st] = found
		}
	}
}

// termOf returns the term of stem st, or of its misspelling in the
// catalogue.
func (ix *Index) termOf(st string) (int32, bool) {
	if id, ok := ix.terms[st]; ok {
		return id, true
	}
	id, ok := ix.misspelt[st]
	return id, ok
}
