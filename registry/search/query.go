package search

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// parseQuery turns a query into groups of weighted terms, skipping stop words
// unless keepStop. hadWords reports whether the query had words at all.
func (ix *Index) parseQuery(query string, s *searchScratch, keepStop bool) (groups []queryGroup, hadWords bool) {
	b := &queryBuilder{groups: s.groups[:0], alts: s.alts[:0], scale: 1}
	// The query's content words, and words its shape implies (a URL, a
	// file name).
	words := s.words[:0]
	text := pathsAsKinds(query)
	quoted := s.quoted[:0] // by word: it is inside quotes
	inQuotes := false
	add := func(w string) {
		hadWords = true
		if len(words) < maxQueryWords && len(w) <= maxWordBytes && (keepStop || !isStopWord(w)) {
			words = append(words, w)
			quoted = append(quoted, inQuotes)
		}
	}
	quotedSpans(text, func(span string, q bool) {
		inQuotes = q
		splitWords(span, add)
	})
	s.quoted = quoted[:0]
	words = appendShapeWords(words, query)
	implied := len(words) // the kinds of the files named weigh less
	words = appendFileKinds(words, query)
	s.words = words[:0]
	short := len(words) <= ix.p.typoWords

	var seen []string
	var content []string // stems of the content words, in order, for pairs
	s.acts = 0
	s.kinds = 0
	for i, w := range words {
		st := ix.stem(w)
		s.kinds |= kindOf[w]
		if i < implied {
			s.acts |= actionOf[st]
		}
		content = append(content, st)
		if slices.Contains(seen, st) {
			continue
		}
		seen = append(seen, st)
		switch {
		case i >= implied:
			b.scale = ix.p.kind
		case i < len(quoted) && quoted[i]:
			b.scale = ix.p.quoted
		case isFiller(w):
			b.scale = ix.p.filler
		case isNumber(w):
			b.scale = ix.p.digits
		default:
			b.scale = 1
		}
		ix.expandWord(b, w, st, short)
	}
	b.scale = 1
	for i := 0; i+1 < len(content); i++ {
		if content[i] == content[i+1] {
			continue
		}
		if id, ok := ix.terms[namePairKey(content[i], content[i+1])]; ok {
			b.add(id, ix.p.pair)
			b.closeGroup()
		}
	}
	groups = ix.onceEach(b.groups, s)
	s.groups, s.alts = b.groups[:0], b.alts[:0]
	return groups, hadWords
}

// onceEach keeps each term at its full weight in one group only, the one
// where it weighs most (the first of equals), and at a share
// (rankParams.repeat) in the others: in a long request several words
// reach the same catalogue word through synonyms and related words
// ("document", "file" and "report" all reach "pdf"), and a tool should not
// score that word in full once for each of them.
func (ix *Index) onceEach(groups []queryGroup, s *searchScratch) []queryGroup {
	if len(groups) < 2 {
		return groups
	}
	// Every alternative with its group, by term, the best first.
	seen := s.seen[:0]
	for gi, g := range groups {
		for ai, a := range g.alts {
			seen = append(seen, altRef{a.term, int32(gi), int32(ai), a.w})
		}
	}
	slices.SortFunc(seen, func(x, y altRef) int {
		if x.term != y.term {
			return cmp.Compare(x.term, y.term)
		}
		if x.w != y.w {
			return cmp.Compare(y.w, x.w)
		}
		return cmp.Compare(x.group, y.group)
	})
	share := float32(ix.p.repeat)
	for i, r := range seen {
		if i > 0 && seen[i-1].term == r.term {
			groups[r.group].alts[r.alt].w *= share
		}
	}
	s.seen = seen[:0]
	if share > 0 {
		return groups
	}
	n := 0
	for _, g := range groups {
		g.alts = slices.DeleteFunc(g.alts, func(a termAlt) bool { return a.w == 0 })
		if len(g.alts) > 0 {
			groups[n] = g
			n++
		}
	}
	return groups[:n]
}

// altRef is one alternative of a query's groups, for onceEach.
type altRef struct {
	term, group, alt int32
	w                float32
}

// queryBuilder collects a query's groups of alternative terms.
type queryBuilder struct {
	groups []queryGroup
	alts   []termAlt
	start  int     // where the group being built starts in alts
	scale  float64 // weight of the word being expanded
}

// add adds an alternative to the group being built, keeping the larger
// weight when a term comes twice (a synonym that is also a prefix).
func (b *queryBuilder) add(id int32, w float64) {
	w *= b.scale
	for i := b.start; i < len(b.alts); i++ {
		if b.alts[i].term == id {
			b.alts[i].w = max(b.alts[i].w, float32(w))
			return
		}
	}
	b.alts = append(b.alts, termAlt{id, float32(w)})
}

func (b *queryBuilder) closeGroup() {
	if len(b.alts) > b.start {
		b.groups = append(b.groups, queryGroup{alts: b.alts[b.start:len(b.alts):len(b.alts)]})
	}
	b.start = len(b.alts)
}

// empty reports whether the group being built has no alternative yet.
func (b *queryBuilder) empty() bool { return len(b.alts) == b.start }

// expandWord adds the groups of query word w (stem st): its stem, synonyms,
// related terms and prefixes; else its known parts, or in a short query
// the words one edit away; then the word as written.
func (ix *Index) expandWord(b *queryBuilder, w, st string, short bool) {
	p := ix.p
	if id, ok := ix.termOf(st); ok {
		b.add(id, 1)
	}
	if one, ok := ix.singular(st); ok {
		st = one
		b.add(ix.terms[st], 1)
	}
	// A word's other forms count as the word would, not as rarer words:
	// none weighs more than the word itself, or, for a word the catalogue
	// does not have, than its most common synonym ("show" reaches
	// "enumerate", which a few descriptions use, as much as "list").
	most := math.Inf(1)
	if id, ok := ix.termOf(st); ok {
		most = ix.idf(id)
	} else {
		for _, syn := range vocab().synonymsOf[st] {
			if id, ok := ix.termOf(syn); ok {
				most = min(most, ix.idf(id))
			}
		}
	}
	alt := func(id int32, w float64) {
		if v := ix.idf(id); v > most {
			w *= most / v
		}
		b.add(id, w)
	}
	for _, syn := range vocab().synonymsOf[st] {
		if id, ok := ix.termOf(syn); ok {
			alt(id, p.synonym)
		}
	}
	for _, rel := range vocab().relatedTo[st] {
		if id, ok := ix.termOf(rel); ok {
			alt(id, p.related)
		}
	}
	if len(st) >= p.minPrefix {
		// Longer words that start with this one ("repo" → repository).
		i := sort.SearchStrings(ix.vocab, st)
		for k := 0; i < len(ix.vocab) && k < p.maxPrefix && strings.HasPrefix(ix.vocab[i], st); i++ {
			if t := ix.vocab[i]; t != st {
				alt(ix.vocabID[i], p.prefix*float64(len(st))/float64(len(t)))
				k++
			}
		}
		// Shorter words this one starts with ("repositories" → repo).
		for l := len(st) - 1; l >= p.minPrefix; l-- {
			if id, ok := ix.terms[st[:l]]; ok {
				alt(id, p.prefix*float64(l)/float64(len(st)))
			}
		}
	}
	if b.empty() {
		// An unknown compound ("wordcloud"): each known part.
		for _, part := range ix.segment(w) {
			if id, ok := ix.terms[ix.stem(part)]; ok {
				b.add(id, 1)
				b.closeGroup()
			}
		}
	}
	if b.empty() && short {
		// A typo ("screnshot"), in a short query, where each word
		// counts: the catalogue's words one edit away.
		ix.nearWords(w, func(near string) {
			if id, ok := ix.terms[ix.stem(near)]; ok {
				b.add(id, p.typo)
			}
		})
	}
	b.closeGroup()
	// The word as written, when a name has it so ("issues" favours
	// list_issues over get_issue).
	if st != w {
		if id, ok := ix.terms["="+w]; ok {
			b.add(id, 1)
			b.closeGroup()
		}
	}
}

// idf is term t's inverse document frequency, as its postings weigh it.
func (ix *Index) idf(t int32) float64 {
	return bm25IDF(float64(len(ix.docs)), float64(ix.postStart[t+1]-ix.postStart[t]))
}

// bm25IDF is the inverse document frequency of a term in d of n tools.
func bm25IDF(n, d float64) float64 {
	return math.Log(1 + (n-d+0.5)/(d+0.5))
}

// singular returns the catalogue's term for st without its plural s. The
// stemmer keeps the s of a word with no vowel before it, which is how an
// acronym's plural looks ("VMs", "PRs", "DBs"); names have the singular.
func (ix *Index) singular(st string) (string, bool) {
	one, ok := strings.CutSuffix(st, "s")
	if !ok || len(one) < 2 || strings.ContainsAny(one, "aeiouy") {
		return "", false
	}
	_, ok = ix.terms[one]
	return one, ok
}

// pathsAsKinds replaces each path in query ("/root/music/song.wav") by its
// extension ("wav"): the directories and the file's name are the data a
// tool is given, not what the tool does ("/root/music" asks for a file
// listing, not a music tool); the extension still says what kind of file
// it is. appendShapeWords adds "file" for a path. (Kept at a fraction of
// a word's weight, the path's words still cost more than they found.)
func pathsAsKinds(query string) string {
	if !strings.Contains(query, "/") {
		return query
	}
	fields := strings.Fields(query)
	changed := false
	for i, f := range fields {
		t := strings.Trim(f, tokenPunct)
		if !isPath(t) {
			continue
		}
		changed = true
		ext := ""
		base := t[strings.LastIndexByte(t, '/')+1:]
		if j := strings.LastIndexByte(base, '.'); j > 0 {
			ext = strings.TrimRight(base[j+1:], ".")
		}
		fields[i] = ext
	}
	if !changed {
		return query
	}
	return strings.Join(fields, " ")
}

// quotedSpans calls emit with the parts of text in order, each saying
// whether it is inside quotes: "...", “...”, and '...' opened at the start
// of a word and closed at its end (not an apostrophe). Quoted text is
// mostly data for the tool (a title, a search term, a name), not what the
// tool does. An unclosed quote quotes nothing.
func quotedSpans(text string, emit func(span string, quoted bool)) {
	start := 0
	var closing rune // of the open quote; 0 when none is open
	for i, r := range text {
		size := utf8.RuneLen(r)
		switch {
		case closing == 0:
			switch {
			case r == '"':
				closing = '"'
			case r == '“':
				closing = '”'
			case r == '\'' && (i == 0 || text[i-1] == ' ' || text[i-1] == '('):
				closing = '\''
			default:
				continue
			}
			emit(text[start:i], false)
			start = i + size
		case r == closing && (r != '\'' || i+size == len(text) || strings.IndexByte(" ,.;:!?)", text[i+size]) >= 0):
			emit(text[start:i], true)
			start, closing = i+size, 0
		}
	}
	emit(text[start:], false)
}

// isPath reports whether a token is a file system path: it starts at the
// root, the home directory or the current directory.
func isPath(t string) bool {
	return len(t) > 1 && (t[0] == '/' || strings.HasPrefix(t, "./") || strings.HasPrefix(t, "~/")) && !strings.Contains(t, "://")
}
