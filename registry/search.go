package registry

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
	"sync"
)

// Doc is one tool as the search index sees it.
type Doc struct {
	Server            string          // server name
	Name              string          // tool's original name on the server
	Description       string          // tool description
	Schema            json.RawMessage // the tool's inputSchema (JSON), may be nil
	ServerDescription string          // optional free text about the server
}

// SearchOptions narrow and cut a search.
type SearchOptions struct {
	// Regex makes the query a Go regular expression (case-insensitive unless
	// it says otherwise) matched against tool names and descriptions.
	Regex bool
	// Server, when set, keeps only the tools of that server.
	Server string
	// Limit is the most hits returned; 0 returns every match.
	Limit int
}

// Hit is one search result.
type Hit struct {
	Doc   int     // index into the docs given to NewIndex
	Score float64 // higher is better; comparable only within one result
}

// Index ranks the tools of a catalogue for a query. It is built once by
// NewIndex and is immutable afterwards: Search is safe for concurrent use.
//
// Keyword search is BM25F over the fields of a tool (name words weigh most,
// then the server name, the description, the input schema's property names
// and descriptions), with Porter2 stemming, stop words, a small synonym
// table, prefix matching and pairs of adjacent name words. Every term's
// postings, with the term's weight in each tool already computed, are built
// up front, so a search only walks the postings of the query's terms.
type Index struct {
	docs []Doc
	p    *rankParams

	terms     map[string]int32    // term → id; pairs are "a b", unstemmed name words "=word"
	vocab     []string            // unigram terms, sorted, for prefix matching
	vocabID   []int32             // ids of vocab, same order
	stems     map[string]string   // word → stem, for every word of the catalogue
	surface   map[string]struct{} // words of three letters or more
	prose     map[string]struct{} // words of descriptions
	postStart []int32             // postings of term t are [postStart[t], postStart[t+1])
	postDoc   []int32             // ascending within a term
	postScore []float32           // idf × saturated searchField-weighted term frequency

	rank   []int32 // rank[doc] is the doc's position in name order, for ties
	byName []int32 // docs in name order
	pool   sync.Pool
}

type searchField uint8

const (
	fieldName      searchField = iota
	fieldNameExact             // name words as written, unstemmed, keyed "=word"
	fieldNamePair
	fieldServer
	fieldDescription
	fieldParam
	fieldParamDescription
	fieldServerDescription
	numFields
)

// rankParams are the ranking's tunables. Field weights and length
// normalisation follow BM25F: a term's frequency in a tool is the sum over
// fields of weight × count / (1 − b + b × length/average length), then
// saturated with k1.
type rankParams struct {
	k1     float64
	weight [numFields]float64
	b      [numFields]float64

	synonym   float64 // weight of a synonym relative to the word itself
	related   float64 // weight of a related word
	soft      float64 // share of a word's weaker matches added to its best
	prefix    float64 // weight of a prefix match (scaled by length ratio)
	pair      float64 // weight of a pair of adjacent query words found in a name
	minPrefix int     // shortest stem that prefix-matches
	maxPrefix int     // most vocabulary terms one query word expands to
	coverage  float64 // bonus for matching a larger share of the query's words
	segCover  float64 // share of a compound word that known words must cover
}

var defaultParams = rankParams{
	k1: 1.2,
	weight: [numFields]float64{
		fieldName:              3,
		fieldNameExact:         0.5,
		fieldNamePair:          3,
		fieldServer:            1.5,
		fieldDescription:       1,
		fieldParam:             0.6,
		fieldParamDescription:  0.3,
		fieldServerDescription: 0.4,
	},
	b: [numFields]float64{
		fieldName:              0.5,
		fieldNameExact:         0.5,
		fieldNamePair:          0.5,
		fieldServer:            0.3,
		fieldDescription:       0.75,
		fieldParam:             0.5,
		fieldParamDescription:  0.75,
		fieldServerDescription: 0.75,
	},
	synonym:   0.8,
	related:   0.5,
	soft:      0.2,
	prefix:    0.6,
	pair:      1,
	minPrefix: 4,
	maxPrefix: 24,
	coverage:  0,
	segCover:  0.75,
}

// NewIndex builds the index of docs. The index keeps docs (not a copy):
// the caller must not change them afterwards.
func NewIndex(docs []Doc) *Index {
	return newIndex(docs, &defaultParams)
}

// docWords are one tool's words, by searchField, before they become terms.
type docWords [numFields][]string

func newIndex(docs []Doc, p *rankParams) *Index {
	ix := &Index{docs: docs, p: p, terms: make(map[string]int32), stems: make(map[string]string),
		surface: make(map[string]struct{}), prose: make(map[string]struct{})}

	// Words of every searchField; the surface vocabulary splits compound names.
	raw := make([]docWords, len(docs))
	for i := range docs {
		d := &docs[i]
		f := &raw[i]
		f[fieldName] = textWords(d.Name)
		f[fieldServer] = textWords(d.Server)
		f[fieldDescription] = textWords(d.Description)
		f[fieldServerDescription] = textWords(d.ServerDescription)
		f[fieldParam], f[fieldParamDescription] = schemaWords(d.Schema)
		for fl, ws := range f {
			for _, w := range ws {
				if _, ok := ix.stems[w]; !ok {
					ix.stems[w] = stem(w)
				}
				if len(w) >= 3 {
					ix.surface[w] = struct{}{}
				}
				if fl == int(fieldDescription) || fl == int(fieldParamDescription) || fl == int(fieldServerDescription) {
					ix.prose[w] = struct{}{}
				}
			}
		}
	}

	// Terms: stems, compound parts of name words, and pairs of name words.
	type fieldTerms [numFields][]int32
	var all []fieldTerms = make([]fieldTerms, len(docs))
	var lenSum [numFields]float64
	for i := range raw {
		f := &raw[i]
		name := f[fieldName]
		for _, w := range f[fieldName] {
			// Only made-up compounds: a word the descriptions use as a
			// word ("discount") is not split ("disc", "count").
			if _, ok := ix.prose[w]; !ok {
				name = append(name, ix.segment(w)...)
			}
		}
		for fl := searchField(0); fl < numFields; fl++ {
			src := f[fl]
			if fl == fieldName {
				src = name
			}
			if fl == fieldNamePair || fl == fieldNameExact {
				continue
			}
			var ids []int32
			for _, w := range src {
				ids = append(ids, ix.termID(ix.stem(w)))
			}
			all[i][fl] = ids
		}
		// Pairs of adjacent name words, in either order: "create_issue" is
		// found by "issue create" as well as by "create an issue".
		stems := make([]string, len(f[fieldName]))
		for j, w := range f[fieldName] {
			stems[j] = ix.stem(w)
		}
		for j, w := range f[fieldName] {
			if stems[j] != w {
				all[i][fieldNameExact] = append(all[i][fieldNameExact], ix.termID("="+w))
			}
		}
		for j := 0; j+1 < len(stems); j++ {
			all[i][fieldNamePair] = append(all[i][fieldNamePair], ix.termID(namePairKey(stems[j], stems[j+1])))
		}
		for fl := range all[i] {
			lenSum[fl] += float64(len(all[i][fl]))
		}
	}
	var avgLen [numFields]float64
	for fl := range avgLen {
		avgLen[fl] = lenSum[fl] / float64(max(len(docs), 1))
	}

	// Postings: per term, the docs and their saturated BM25F weight.
	type posting struct {
		doc int32
		tf  float32
	}
	postings := make([][]posting, len(ix.terms))
	tf := make(map[int32]float64)
	for i := range all {
		clear(tf)
		for fl := searchField(0); fl < numFields; fl++ {
			ids := all[i][fl]
			if len(ids) == 0 {
				continue
			}
			norm := 1 - p.b[fl]
			if avgLen[fl] > 0 {
				norm += p.b[fl] * float64(len(ids)) / avgLen[fl]
			}
			for _, t := range ids {
				tf[t] += p.weight[fl] / norm
			}
		}
		for t, v := range tf {
			postings[t] = append(postings[t], posting{int32(i), float32(v)})
		}
	}
	n := float64(len(docs))
	ix.postStart = make([]int32, len(postings)+1)
	for t, ps := range postings {
		ix.postStart[t+1] = ix.postStart[t] + int32(len(ps))
	}
	ix.postDoc = make([]int32, ix.postStart[len(postings)])
	ix.postScore = make([]float32, len(ix.postDoc))
	for t, ps := range postings {
		sort.Slice(ps, func(a, b int) bool { return ps[a].doc < ps[b].doc })
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for j, q := range ps {
			k := ix.postStart[t] + int32(j)
			v := float64(q.tf)
			ix.postDoc[k] = q.doc
			ix.postScore[k] = float32(idf * v / (p.k1 + v))
		}
	}

	for term, id := range ix.terms {
		if !strings.ContainsAny(term, " =") {
			ix.vocab = append(ix.vocab, term)
			ix.vocabID = append(ix.vocabID, id)
		}
	}
	sort.Sort(byVocab{ix})

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
	ix.pool.New = func() any { return newSearchScratch(len(docs)) }
	return ix
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
	}
	return id
}

func namePairKey(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + " " + b
}

// words returns the non-stop words of text, lower-cased, in order.
func textWords(text string) []string {
	var out []string
	splitWords(text, func(w string) {
		if !isStopWord(w) {
			out = append(out, w)
		}
	})
	return out
}

// schemaWords returns the words of the property names of a JSON Schema,
// and the words of their descriptions and titles, at any depth.
func schemaWords(schema json.RawMessage) (names, descriptions []string) {
	if len(schema) == 0 {
		return nil, nil
	}
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return nil, nil
	}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		m, ok := v.(map[string]any)
		if !ok || depth > 8 {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok {
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				names = append(names, textWords(k)...)
				if pm, ok := props[k].(map[string]any); ok {
					for _, key := range []string{"title", "description"} {
						if s, ok := pm[key].(string); ok {
							descriptions = append(descriptions, textWords(s)...)
						}
					}
				}
				walk(props[k], depth+1)
			}
		}
		walk(m["items"], depth+1)
		for _, key := range []string{"anyOf", "oneOf", "allOf"} {
			if list, ok := m[key].([]any); ok {
				for _, x := range list {
					walk(x, depth+1)
				}
			}
		}
	}
	walk(v, 0)
	return names, descriptions
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

// searchScratch is the per-search working memory, pooled so that a search does
// not allocate in proportion to the catalogue.
type searchScratch struct {
	acc     []toolAcc // per tool
	touched []int32   // tools with a match, in first-match order
	group   []int32   // tools matched by the current query word
	groups  []queryGroup
	alts    []termAlt
	hits    []Hit
}

// toolAcc accumulates one tool's score during a search.
type toolAcc struct {
	score   float32
	best    float32 // the best match of the current query word
	sum     float32 // the sum of the current query word's matches
	matched uint32  // query words matched
}

func newSearchScratch(n int) *searchScratch {
	return &searchScratch{acc: make([]toolAcc, n)}
}

// queryGroup is one query word and what it matches: the word's stem,
// synonyms and prefix matches, each with a weight. A tool scores the best of
// a group's alternatives, so synonyms never add up.
type queryGroup struct {
	alts []termAlt
}

type termAlt struct {
	term int32
	w    float32
}

// Search returns the tools that match query, best first; ties are broken by
// tool name, then server name. An empty query matches every tool. The error
// is non-nil only for a regular expression that does not compile.
func (ix *Index) Search(query string, opts SearchOptions) ([]Hit, error) {
	if opts.Regex {
		return ix.searchRegex(query, opts)
	}
	s := ix.pool.Get().(*searchScratch)
	defer ix.pool.Put(s)

	any := false
	groups := ix.parseQuery(query, s, &any)
	if len(groups) == 0 {
		if any {
			return nil, nil
		}
		return ix.all(opts), nil
	}

	for _, g := range groups {
		if len(g.alts) == 1 {
			a := g.alts[0]
			for k := ix.postStart[a.term]; k < ix.postStart[a.term+1]; k++ {
				d := ix.postDoc[k]
				t := &s.acc[d]
				if t.matched == 0 {
					s.touched = append(s.touched, d)
				}
				t.score += a.w * ix.postScore[k]
				t.matched++
			}
			continue
		}
		// A tool scores the best of a word's alternatives plus a small share
		// of the others, so synonyms back a match up but never outweigh it.
		for _, a := range g.alts {
			for k := ix.postStart[a.term]; k < ix.postStart[a.term+1]; k++ {
				d := ix.postDoc[k]
				v := a.w * ix.postScore[k]
				t := &s.acc[d]
				if t.sum == 0 {
					s.group = append(s.group, d)
				}
				t.sum += v
				t.best = max(t.best, v)
			}
		}
		soft := float32(ix.p.soft)
		for _, d := range s.group {
			t := &s.acc[d]
			if t.matched == 0 {
				s.touched = append(s.touched, d)
			}
			t.score += t.best + soft*(t.sum-t.best)
			t.matched++
			t.best, t.sum = 0, 0
		}
		s.group = s.group[:0]
	}

	hits := s.hits[:0]
	cov := float32(ix.p.coverage) / float32(len(groups))
	for _, d := range s.touched {
		if opts.Server == "" || ix.docs[d].Server == opts.Server {
			sc := s.acc[d].score * (1 + cov*float32(s.acc[d].matched))
			hits = append(hits, Hit{Doc: int(d), Score: float64(sc)})
		}
		s.acc[d] = toolAcc{}
	}
	s.touched = s.touched[:0]
	out := ix.top(hits, opts.Limit)
	s.hits = hits[:0]
	return out, nil
}

// all returns every tool that passes the server filter, in name order.
func (ix *Index) all(opts SearchOptions) []Hit {
	var out []Hit
	for _, d := range ix.byName {
		if opts.Server != "" && ix.docs[d].Server != opts.Server {
			continue
		}
		out = append(out, Hit{Doc: int(d)})
		if opts.Limit > 0 && len(out) == opts.Limit {
			break
		}
	}
	return out
}

// better reports whether a ranks before b.
func (ix *Index) better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return ix.rank[a.Doc] < ix.rank[b.Doc]
}

// top returns the best limit hits (all when limit is 0) in rank order, in a
// new slice.
func (ix *Index) top(hits []Hit, limit int) []Hit {
	if limit <= 0 || limit > len(hits) {
		limit = len(hits)
	}
	if limit == 0 {
		return nil
	}
	// A heap of the best limit hits seen, worst at the root.
	h := hits[:0:len(hits)]
	worse := func(i, j int) bool { return ix.better(h[j], h[i]) }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			m := l
			if r := l + 1; r < len(h) && worse(r, l) {
				m = r
			}
			if !worse(m, i) {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	n := len(hits)
	h = hits[:limit]
	for i := limit/2 - 1; i >= 0; i-- {
		down(i)
	}
	for i := limit; i < n; i++ {
		if ix.better(hits[i], h[0]) {
			h[0] = hits[i]
			down(0)
		}
	}
	out := make([]Hit, limit)
	copy(out, h)
	sort.Slice(out, func(a, b int) bool { return ix.better(out[a], out[b]) })
	return out
}

// parseQuery turns a query into groups of weighted terms. any reports
// whether the query had words at all (it may have had only stop words).
func (ix *Index) parseQuery(query string, s *searchScratch, any *bool) []queryGroup {
	p := ix.p
	groups := s.groups[:0]
	alts := s.alts[:0]
	start := 0
	// add adds an alternative to the group being built, keeping the larger
	// weight when a term comes twice (a synonym that is also a prefix).
	add := func(id int32, w float64) {
		for i := start; i < len(alts); i++ {
			if alts[i].term == id {
				alts[i].w = max(alts[i].w, float32(w))
				return
			}
		}
		alts = append(alts, termAlt{id, float32(w)})
	}
	closeGroup := func() {
		if len(alts) > start {
			groups = append(groups, queryGroup{alts: alts[start:len(alts):len(alts)]})
		}
		start = len(alts)
	}
	var seen []string
	var content []string // stems of the content words, in order, for pairs
	splitWords(query, func(w string) {
		*any = true
		if isStopWord(w) {
			return
		}
		st := ix.stem(w)
		content = append(content, st)
		for _, x := range seen {
			if x == st {
				return
			}
		}
		seen = append(seen, st)
		if id, ok := ix.terms[st]; ok {
			add(id, 1)
		}
		for _, syn := range synonymsOf[st] {
			if id, ok := ix.terms[syn]; ok {
				add(id, p.synonym)
			}
		}
		for _, rel := range relatedTo[st] {
			if id, ok := ix.terms[rel]; ok {
				add(id, p.related)
			}
		}
		if len(st) >= p.minPrefix {
			// Longer words that start with this one ("repo" → repository).
			i := sort.SearchStrings(ix.vocab, st)
			for k := 0; i < len(ix.vocab) && k < p.maxPrefix && strings.HasPrefix(ix.vocab[i], st); i++ {
				if t := ix.vocab[i]; t != st {
					add(ix.vocabID[i], p.prefix*float64(len(st))/float64(len(t)))
					k++
				}
			}
			// Shorter words this one starts with ("repositories" → repo).
			for l := len(st) - 1; l >= p.minPrefix; l-- {
				if id, ok := ix.terms[st[:l]]; ok {
					add(id, p.prefix*float64(l)/float64(len(st)))
				}
			}
		}
		if len(alts) == start {
			// An unknown compound ("wordcloud"): each known part.
			for _, part := range ix.segment(w) {
				if id, ok := ix.terms[ix.stem(part)]; ok {
					add(id, 1)
					closeGroup()
				}
			}
		}
		closeGroup()
		// The word as written, when a name has it so ("issues" favours
		// list_issues over get_issue).
		if st != w {
			if id, ok := ix.terms["="+w]; ok {
				add(id, 1)
				closeGroup()
			}
		}
	})
	for i := 0; i+1 < len(content); i++ {
		if content[i] == content[i+1] {
			continue
		}
		if id, ok := ix.terms[namePairKey(content[i], content[i+1])]; ok {
			add(id, p.pair)
			closeGroup()
		}
	}
	s.groups, s.alts = groups[:0], alts[:0]
	return groups
}
