package search

import (
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// NewIndex builds the index of docs. The index keeps docs (not a copy):
// the caller must not change them afterwards.
func NewIndex(docs []Doc) *Index {
	return newIndex(docs, &defaultParams)
}

// docWords are one tool's words, by field, before they become terms.
type docWords [numFields][]string

// docsWords splits every tool's fields into words, on every CPU: most of an
// index's build time is reading schemas and splitting words.
func docsWords(docs []Doc, needsID []bool) []docWords {
	raw := make([]docWords, len(docs))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(docs)/256))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := wordArena{in: make(interner)}
			for i := w; i < len(docs); i += workers {
				d := &docs[i]
				f := &raw[i]
				f[fieldName] = a.words(d.Name)
				if len(f[fieldName]) == 0 {
					// A name of stop words alone ("help", "who_am_i")
					// keeps them, so that a query of those words finds it.
					f[fieldName] = a.keep(allWords(d.Name))
				}
				f[fieldServer] = a.words(d.Server)
				f[fieldDescription] = a.words(d.Description)
				f[fieldServerDescription] = a.words(d.ServerDescription)
				if len(d.Keywords) > 0 {
					f[fieldKeywords] = a.words(strings.Join(d.Keywords, " "))
				}
				a.names, a.descs, needsID[i] = schemaWords(d.Schema, a.in, a.names[:0], a.descs[:0])
				f[fieldParam] = a.keep(a.names)
				f[fieldParamDescription] = a.keep(a.descs)
			}
		}()
	}
	wg.Wait()
	return raw
}

// wordArena holds the words of many tools in a few large slices rather
// than one small slice per field.
type wordArena struct {
	all          []string
	names, descs []string // scratch for schemaWords
	in           interner // the lower-case words, names and descriptions
}

// arenaChunk is the size of a wordArena's slices: a chunk is started when
// the current one has less than an eighth of it left, so that a field's
// words rarely make it grow.
const arenaChunk = 8192

func (a *wordArena) reserve() {
	if cap(a.all)-len(a.all) < arenaChunk/8 {
		a.all = make([]string, 0, arenaChunk)
	}
}

// words appends text's words (less stop words) and returns them.
func (a *wordArena) words(text string) []string {
	a.reserve()
	start := len(a.all)
	a.all = appendTextWords(a.all, text, a.in)
	return a.all[start:len(a.all):len(a.all)]
}

// keep appends ws and returns the copy.
func (a *wordArena) keep(ws []string) []string {
	if len(ws) == 0 {
		return nil
	}
	a.reserve()
	start := len(a.all)
	a.all = append(a.all, ws...)
	return a.all[start:len(a.all):len(a.all)]
}

func newIndex(docs []Doc, p *rankParams) *Index {
	ix := &Index{docs: docs, p: p, terms: make(map[string]int32), stems: make(map[string]string),
		surface: make(map[string]struct{}), prose: make(map[string]struct{})}
	ix.needsID = make([]bool, len(docs))
	ix.deprecated = make([]bool, len(docs))
	for i, d := range docs {
		ix.deprecated[i] = deprecated(d.Description)
	}
	raw := docsWords(docs, ix.needsID)
	ix.toolKinds(raw)
	all := ix.vocabulary(raw)
	ix.dropBoilerplate(docs, all)
	avgLen := ix.docTerms(raw, all)
	ix.actionTerms()
	ix.buildPostings(all, avgLen)
	ix.misspellings()
	for term, id := range ix.terms {
		if !strings.ContainsAny(term, " =") {
			ix.vocab = append(ix.vocab, term)
			ix.vocabID = append(ix.vocabID, id)
		}
	}
	sort.Sort(byVocab{ix})
	ix.docNames()
	ix.fullNames()
	ix.toolActions()
	ix.pluralNames(raw)
	ix.serverWords = serverWords(docs, ix)
	ix.pool.New = func() any { return newSearchScratch(len(docs), len(ix.terms)) }
	return ix
}

// fieldTerms are a document's term IDs, per field.
type fieldTerms [numFields][]int32

// vocabulary stems the words of every field and notes the surface
// vocabulary (which splits compound names) and the words of prose. It
// returns each document's terms by field, in the order of its words: the
// stems of its words (name words not yet split, no pairs).
func (ix *Index) vocabulary(raw []docWords) []fieldTerms {
	type word struct {
		term  int32
		prose bool
	}
	words := make(map[string]word) // one lookup per occurrence
	all := make([]fieldTerms, len(raw))
	total := 0
	for i := range raw {
		for _, ws := range raw[i] {
			total += len(ws)
		}
	}
	arena := make([]int32, total) // every field's terms, in one allocation
	for i := range raw {
		f := &raw[i]
		for fl, ws := range f {
			if len(ws) == 0 {
				continue
			}
			prose := fl == int(fieldDescription) || fl == int(fieldParamDescription) || fl == int(fieldServerDescription)
			ids := arena[:len(ws):len(ws)]
			arena = arena[len(ws):]
			for j, w := range ws {
				e, ok := words[w]
				if !ok {
					st := stem(w)
					ix.stems[w] = st
					e.term = ix.termID(st)
					if len(w) >= 3 {
						ix.surface[w] = struct{}{}
					}
				}
				if prose && !e.prose {
					e.prose = true
					ix.prose[w] = struct{}{}
					ok = false
				}
				if !ok {
					words[w] = e
				}
				ids[j] = e.term
			}
			all[i][fl] = ids
		}
	}
	return all
}

// docTerms completes each document's terms with the compound parts of its
// name words, its exact name words and pairs of name words, and returns
// the average length of each field; it records the name terms (nameTerms,
// nameStart).
func (ix *Index) docTerms(raw []docWords, all []fieldTerms) [numFields]float64 {
	ix.nameStart = make([]int32, len(raw)+1)
	var lenSum [numFields]float64
	segments := map[string][]int32{} // name words recur across a server's tools
	for i := range raw {
		f := &raw[i]
		name := slices.Clip(all[i][fieldName])
		for _, w := range f[fieldName] {
			// Only made-up compounds: a word the descriptions use as a
			// word ("discount") is not split ("disc", "count").
			if _, ok := ix.prose[w]; !ok {
				parts, seen := segments[w]
				if !seen {
					for _, part := range ix.segment(w) {
						parts = append(parts, ix.termID(ix.stem(part)))
					}
					segments[w] = parts
				}
				name = append(name, parts...)
			}
		}
		all[i][fieldName] = name
		ix.nameFields(i, f[fieldName], &all[i])
		for fl := range all[i] {
			lenSum[fl] += ix.fieldLen(all[i][fl])
		}
	}
	var avgLen [numFields]float64
	for fl := range avgLen {
		avgLen[fl] = lenSum[fl] / float64(max(len(raw), 1))
	}
	return avgLen
}

// nameFields adds document i's name terms, exact name words and pairs of
// adjacent name words, in either order: "create_issue" is found by "issue
// create" as well as by "create an issue".
func (ix *Index) nameFields(i int, words []string, t *fieldTerms) {
	stems := make([]string, len(words))
	for j, w := range words {
		stems[j] = ix.stem(w)
	}
	for _, st := range stems {
		ix.nameTerms = append(ix.nameTerms, ix.termID(st))
	}
	ix.nameStart[i+1] = int32(len(ix.nameTerms))
	for j, w := range words {
		if stems[j] != w {
			t[fieldNameExact] = append(t[fieldNameExact], ix.termID("="+w))
		}
	}
	for j := 0; j+1 < len(stems); j++ {
		t[fieldNamePair] = append(t[fieldNamePair], ix.termID(namePairKey(stems[j], stems[j+1])))
	}
}

// buildPostings builds, per term, the documents that have it and their
// saturated BM25F weight, in flat arrays (postStart, postDoc, postScore).
func (ix *Index) buildPostings(all []fieldTerms, avgLen [numFields]float64) {
	p := ix.p
	// Every (term, document) pair with its weight, in document order, then
	// sorted by term with a counting sort: one allocation for all of
	// them, and each term's postings stay in document order.
	type posting struct {
		term, doc int32
		tf        float32
	}
	total := 0
	for i := range all {
		for _, ids := range all[i] {
			total += len(ids)
		}
	}
	pairs := make([]posting, 0, total)
	df := make([]int32, len(ix.terms)+1)
	tf := make([]float64, len(ix.terms)) // this document's, by term
	var touched []int32                  // the terms it has
	for i := range all {
		for fl := searchField(0); fl < numFields; fl++ {
			ids := all[i][fl]
			if len(ids) == 0 {
				continue
			}
			norm := 1 - p.b[fl]
			if avgLen[fl] > 0 {
				norm += p.b[fl] * ix.fieldLen(ids) / avgLen[fl]
			}
			// An action word in prose ("only show data", "get
			// started") says less about what a tool does than in its
			// name.
			prose := fl == fieldDescription || fl == fieldParamDescription || fl == fieldServerDescription
			for _, t := range ids {
				if tf[t] == 0 {
					touched = append(touched, t)
				}
				w := p.weight[fl] / norm
				if prose && ix.termActs[t] != 0 {
					w *= p.proseVerb
				}
				tf[t] += w
			}
		}
		for _, t := range touched {
			pairs = append(pairs, posting{t, int32(i), float32(tf[t])})
			df[t+1]++
			tf[t] = 0
		}
		touched = touched[:0]
	}
	for t := range len(ix.terms) {
		df[t+1] += df[t]
	}
	ix.postStart = df // postStart[t] is now where term t's postings start
	ix.postDoc = make([]int32, len(pairs))
	ix.postScore = make([]float32, len(pairs))
	next := slices.Clone(df[:len(df)-1])
	n := float64(len(all))
	for _, q := range pairs {
		k := next[q.term]
		next[q.term]++
		idf := bm25IDF(n, float64(df[q.term+1]-df[q.term]))
		v := float64(q.tf)
		ix.postDoc[k] = q.doc
		ix.postScore[k] = float32(idf * v / (p.k1 + v))
	}
}

// docNames records each document's qualified name, server, and rank in
// name order.
func (ix *Index) docNames() {
	docs := ix.docs
	ix.qualified = make([]string, len(docs))
	ix.server = make([]int32, len(docs))
	ix.servers = make(map[string]int32)
	for i, d := range docs {
		ix.qualified[i] = d.Server + "_" + d.Name
		if d.Alias != "" {
			ix.qualified[i] = d.Alias
		}
		id, ok := ix.servers[d.Server]
		if !ok {
			id = int32(len(ix.servers))
			ix.servers[d.Server] = id
		}
		ix.server[i] = id
	}
	ix.byName = make([]int32, len(docs))
	for i := range ix.byName {
		ix.byName[i] = int32(i)
	}
	sort.SliceStable(ix.byName, func(a, b int) bool {
		da, db := &docs[ix.byName[a]], &docs[ix.byName[b]]
		if da.Name != db.Name {
			return da.Name < db.Name
		}
		return da.Server < db.Server
	})
	ix.rank = make([]int32, len(docs))
	for r, d := range ix.byName {
		ix.rank[d] = int32(r)
	}
}

type byVocab struct{ ix *Index }

func (v byVocab) Len() int           { return len(v.ix.vocab) }
func (v byVocab) Less(a, b int) bool { return v.ix.vocab[a] < v.ix.vocab[b] }
func (v byVocab) Swap(a, b int) {
	v.ix.vocab[a], v.ix.vocab[b] = v.ix.vocab[b], v.ix.vocab[a]
	v.ix.vocabID[a], v.ix.vocabID[b] = v.ix.vocabID[b], v.ix.vocabID[a]
}

// stem is the package's stem, looked up for the catalogue's own words (a
// catalogue repeats its words a lot, and so do queries).
func (ix *Index) stem(w string) string {
	if s, ok := ix.stems[w]; ok {
		return s
	}
	return stem(w)
}

func (ix *Index) termID(t string) int32 {
	id, ok := ix.terms[t]
	if !ok {
		id = int32(len(ix.terms))
		ix.terms[t] = id
		r, _ := utf8.DecodeRuneInString(t)
		ix.pairTerm = append(ix.pairTerm, isCJK(r))
	}
	return id
}

// fieldLen is the length of a field of terms for BM25: a pair of CJK
// characters counts half, as a word of such text is about two of them
// and each character starts a pair.
func (ix *Index) fieldLen(ids []int32) float64 {
	n := float64(len(ids))
	for _, t := range ids {
		if ix.pairTerm[t] {
			n -= 0.5
		}
	}
	return n
}

func namePairKey(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + " " + b
}

// allWords returns the words of text, lower-cased, in order.
func allWords(text string) []string {
	var out []string
	splitWords(text, func(w string) { out = append(out, w) })
	return out
}

// textWords returns the words of text less stop words, lower-cased, in order.
func textWords(text string) []string {
	return appendTextWords(nil, text, nil)
}

// appendTextWords appends the words of text less stop words, lower-cased,
// in order, to out.
func appendTextWords(out []string, text string, in interner) []string {
	splitWordsIn(text, in, func(w string) {
		if !isStopWord(w) {
			out = append(out, w)
		}
	})
	return out
}

func (ix *Index) known(w string) bool {
	_, ok := ix.surface[w]
	return ok
}

// segment splits a compound word such as "stellarexplorer" or "webhooks"
// into words the catalogue knows elsewhere ("stellar", "explorer"). It
// returns nil unless at least two known words of three letters or more
// cover rankParams.segCover of the word.
func (ix *Index) segment(w string) []string {
	n := len(w)
	if n < 6 || n > 40 {
		return nil
	}
	for i := 0; i < n; i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return nil
		}
	}
	type cell struct {
		covered, parts, from int
		known                bool
	}
	var cells [41]cell
	for i := 1; i <= n; i++ {
		best := cell{covered: cells[i-1].covered, parts: cells[i-1].parts, from: i - 1}
		for j := 0; j+3 <= i; j++ {
			if i-j == n || !ix.known(w[j:i]) {
				continue
			}
			c := cell{covered: cells[j].covered + i - j, parts: cells[j].parts + 1, from: j, known: true}
			if c.covered > best.covered || (c.covered == best.covered && c.parts < best.parts) {
				best = c
			}
		}
		cells[i] = best
	}
	last := cells[n]
	if last.parts < 2 || float64(last.covered) < ix.p.segCover*float64(n) {
		return nil
	}
	var parts []string
	for i := n; i > 0; i = cells[i].from {
		if cells[i].known {
			parts = append(parts, w[cells[i].from:i])
		}
	}
	for a, b := 0, len(parts)-1; a < b; a, b = a+1, b-1 {
		parts[a], parts[b] = parts[b], parts[a]
	}
	return parts
}

// nearWords calls fn, in a fixed order, with each word of the catalogue one
// edit (an insertion, deletion or substitution of a letter, or a swap of two
// neighbours) away from w, a lower-case ASCII word. It tries every such edit
// of w rather than every word of the catalogue, so its cost does not grow
// with the catalogue. Words under five letters have too many neighbours to
// guess from.
func (ix *Index) nearWords(w string, fn func(string)) {
	n := len(w)
	if n < 5 || n > 40 {
		return
	}
	for i := 0; i < n; i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return
		}
	}
	var found []string
	var buf [41]byte
	oneEdit(w, buf[:0], true, func(b []byte) {
		if _, ok := ix.surface[string(b)]; ok && string(b) != w {
			found = append(found, string(b))
		}
	})
	slices.Sort(found)
	for i, f := range found {
		if i == 0 || f != found[i-1] {
			fn(f)
		}
	}
}

// oneEdit calls try with each word one edit away from w: a letter
// deleted or inserted, two neighbours swapped and, if substitute, a letter
// changed. The bytes it passes are reused between calls.
func oneEdit(w string, buf []byte, substitute bool, try func([]byte)) {
	n := len(w)
	for i := 0; i < n; i++ { // deletions
		try(append(append(buf[:0], w[:i]...), w[i+1:]...))
	}
	for i := 0; i+1 < n; i++ { // swaps
		b := append(buf[:0], w...)
		b[i], b[i+1] = b[i+1], b[i]
		try(b)
	}
	for i := 0; i <= n; i++ { // insertions and substitutions
		for c := byte('a'); c <= 'z'; c++ {
			try(append(append(append(buf[:0], w[:i]...), c), w[i:]...))
			if substitute && i < n && c != w[i] {
				b := append(buf[:0], w...)
				b[i] = c
				try(b)
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// lower returns each document's name, qualified name and description,
// lower-cased ("" unless ASCII), for the regex search's literal prefilter;
// built at the first regex search, as most indexes never see one.
func (ix *Index) lower() []string {
	ix.lowerOnce.Do(func() {
		ix.lowerText = make([]string, len(ix.docs))
		for i, d := range ix.docs {
			if text := d.Name + "\n" + ix.qualified[i] + "\n" + d.Description + "\n" + strings.Join(d.Keywords, "\n"); isASCII(text) {
				ix.lowerText[i] = strings.ToLower(text)
			}
		}
	})
	return ix.lowerText
}
