package search

import (
	"encoding/json"
	"math"
	"slices"
	"sync"
)

// Doc is one tool as the search index sees it.
type Doc struct {
	Server            string          // server name
	Name              string          // tool's original name on the server
	Description       string          // tool description
	Schema            json.RawMessage // the tool's inputSchema (JSON), may be nil
	ServerDescription string          // optional free text about the server
	// Alias is the name the gateway shows for the tool, when it is not
	// server_name (another prefix mode, a collision suffix); regular
	// expressions match it as they match server_name.
	Alias string
	// Keywords are extra words for the tool from the configuration
	// (searchKeywords): weighed like its description, matched by regular
	// expressions like it, never shown.
	Keywords []string
}

// Options narrow and cut a search.
type Options struct {
	// Regex makes the query a Go regular expression (case-insensitive unless
	// it says otherwise) matched against tool names and descriptions.
	Regex bool
	// Server, when set, keeps only the tools of that server.
	Server string
	// Limit is the most hits returned; 0 returns every match (but a
	// keyword match scoring under a twentieth of the best is left out as
	// noise).
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
// and descriptions). Names are split at snake_case, kebab-case, camelCase,
// dots and digits, and made-up compounds ("wordcloud") into known words;
// Chinese, Japanese and Korean text into overlapping pairs of characters.
// Words are stemmed (Porter2); stop words and the phrasing of a request are
// dropped, so a whole sentence works as well as a few keywords. A query word
// also matches its synonyms and related words (synonyms.go), longer and
// shorter words it is a prefix of, and, in a short query, the catalogue's
// words one typo away, each at a discount and never weighing more than the
// word itself; adjacent query words that are adjacent in a name score again
// as a pair. A catalogue word that several query words reach counts in full
// once. A path in a query counts as its extension, and a file name adds the
// words of its kind ("report.docx": word, document); words in quotes and
// numbers are data and count half, as do words that only qualify a request
// ("specific", "reliable"). A word of the synonym tables the catalogue
// misspells ("strology") still finds it. The schema words most tools of a
// large server share (subscription, tenant, retry options) are not indexed
// for that server, and action words count half in descriptions.
//
// Beyond the words (signals.go): the best clause of a long request, the
// servers it names, how much of a tool's name it covers, a tool's full name
// written out, whether a tool's action and kind of file are the ones asked
// for, between a resource's list tool and its siblings, whether the
// request names the resource in the plural or the singular, and whether a
// request that carries an identifier meets a tool that takes one.
//
// Every term's postings, with the term's weight in each tool already
// computed, are built up front, so a search only walks the postings of the
// query's terms, and it allocates nothing in proportion to the catalogue.
type Index struct {
	docs []Doc
	p    *rankParams

	terms     map[string]int32    // term → id; pairs are "a b", unstemmed name words "=word"
	misspelt  map[string]int32    // a known stem the catalogue lacks → its term one edit away (misspelt.go)
	vocab     []string            // unigram terms, sorted, for prefix matching
	vocabID   []int32             // ids of vocab, same order
	stems     map[string]string   // word → stem, for every word of the catalogue
	surface   map[string]struct{} // words of three letters or more
	prose     map[string]struct{} // words of descriptions
	postStart []int32             // postings of term t are [postStart[t], postStart[t+1])
	postDoc   []int32             // ascending within a term
	postScore []float32           // idf × saturated field-weighted term frequency

	qualified []string // server_name of each doc, for regular expressions
	lowerText []string // see lower
	lowerOnce sync.Once
	server    []int32          // server[doc] is the id of the doc's server
	servers   map[string]int32 // server name → id
	// serverWords maps the distinctive stems of server names (not "mcp",
	// "server", words most servers share) to the servers named so.
	serverWords map[string][]int32
	full        []fullName // tools' full names by hash (fullNames)
	nameTerms   []int32    // the terms of tool d's name words are nameTerms[nameStart[d]:nameStart[d+1]]
	actions     []uint8    // the actions of each tool's name (toolActions)
	kinds       []uint16   // the kinds of file each tool's name handles (toolKinds)
	lists       []bool     // by tool: its name says it lists ("list", "enumerate")
	needsID     []bool     // by tool: its schema requires an identifier ("id", "paper_id")
	deprecated  []bool     // by tool: its description says it is deprecated (see deprecated)
	pluralName  []int32    // by tool: the term of a noun its name writes in the plural (read_multiple_files: file), or -1
	pairTerm    []bool     // by term: it is a pair of CJK characters (splitCJK)
	termActs    []uint8    // by term: the actions of an action word (actionTerms), 0 for other words
	object      []int32    // by tool: the noun its name acts on, where its server has a list tool and another of it; -1 if none
	nameStart   []int32
	rank        []int32 // rank[doc] is the doc's position in name order, for ties
	byName      []int32 // docs in name order
	pool        sync.Pool
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
	fieldKeywords
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
	minShare  float64 // share of the best score a match needs to be returned
	typo      float64 // weight of a word one edit away from an unknown query word
	typoWords int     // most content words a query may have for typo matching
	segCover  float64 // share of a compound word that known words must cover
	clause    float64 // weight of the best clause in a query of several
	named     float64 // score boost of the tools of a server the query names
	cover     float64 // score boost of a tool whose name words the query all has
	repeat    float64 // weight of a term in the groups of other query words than the one it weighs most in
	kind      float64 // weight of the kind of a file the query names ("markdown" for notes.md)
	action    float64 // score cut of a tool whose name's actions are none of the query's
	otherKind float64 // score cut of a tool whose name's kinds of file are none of the query's
	fullName  float64 // score boost of a tool whose full name the query writes
	proseVerb float64 // weight of an action word in a description, relative to other words
	number    float64 // score boost of a list tool for a plural, of its siblings for a singular
	quoted    float64 // weight of a word inside quotes (data for the tool)
	filler    float64 // weight of a word that only qualifies a request ("specific", "reliable")
	digits    float64 // weight of a number ("3 days", an ID): data for the tool, like a quoted word
	ident     float64 // score boost of a tool that requires an identifier, for a query that has one
	dated     float64 // score cut of a tool its description calls deprecated, unless the query names it in full
	plural    float64 // score cut of a tool whose name has in the plural a noun the query has only in the singular
}

var defaultParams = rankParams{
	k1: 1.0,
	weight: [numFields]float64{
		fieldName:              3,
		fieldNameExact:         0.5,
		fieldNamePair:          3,
		fieldServer:            1.5,
		fieldDescription:       1.5,
		fieldParam:             0.6,
		fieldParamDescription:  0.3,
		fieldServerDescription: 0.4,
		fieldKeywords:          1.5,
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
		fieldKeywords:          0.75,
	},
	synonym:   0.8,
	related:   0.53,
	soft:      0.4,
	prefix:    0.6,
	pair:      0.3,
	minPrefix: 4,
	maxPrefix: 24,
	minShare:  0.05,
	typo:      0.7,
	typoWords: 4,
	segCover:  0.75,
	clause:    0.5,
	named:     0.3,
	cover:     0.15,
	repeat:    0.5,
	kind:      0.5,
	action:    0.15,
	otherKind: 0.15,
	fullName:  0.5,
	proseVerb: 0.5,
	number:    0.1,
	quoted:    0.5,
	filler:    0.5,
	digits:    0.5,
	ident:     0.1,
	dated:     0.5,
	plural:    0.05,
}

// searchScratch is the per-search working memory, pooled so that a search does
// not allocate in proportion to the catalogue.
type searchScratch struct {
	acc     []toolAcc // per tool
	touched []int32   // tools with a match, in first-match order
	group   []int32   // tools matched by the current query word
	groups  []queryGroup
	alts    []termAlt
	words   []string
	keys    []uint64 // rank keys of the matches, see rankKey
	named   []int32  // servers the query names
	tools   []int32  // tools the query names in full
	seen    []altRef // the query's alternatives, for onceEach
	acts    uint8    // the actions of the query parsed last (see toolActions)
	kinds   uint16   // the kinds of file the query parsed last names (see toolKinds)
	mark    []uint32 // per term: gen when the query has it (markQuery)
	quoted  []bool   // by query word: it is inside quotes (quotedSpans)
	many    []uint32 // per term: gen when the query has it in the plural
	one     []uint32 // per term: gen when the query has it in the singular
	gen     uint32
}

// toolAcc accumulates one tool's score during a search.
type toolAcc struct {
	score      float32
	best       float32 // the best match of the current query word
	sum        float32 // the sum of the current query word's matches
	matched    uint32  // query words matched
	clause     float32 // the score of the current clause
	bestClause float32 // the best clause's score
	clauseW    float32 // the weight of bestClause in the final score (0: one clause)
}

// final is the tool's score: the whole query's, blended with its best
// clause's when the query has several.
func (t *toolAcc) final() float32 {
	return (1-t.clauseW)*t.score + t.clauseW*t.bestClause
}

func newSearchScratch(tools, terms int) *searchScratch {
	return &searchScratch{acc: make([]toolAcc, tools), mark: make([]uint32, terms), many: make([]uint32, terms), one: make([]uint32, terms)}
}

// queryGroup is one query word and what it matches: the word's stem,
// synonyms, related words and prefix matches, each with a weight; or one
// pair of adjacent query words; or one word as written.
type queryGroup struct {
	alts []termAlt
}

type termAlt struct {
	term int32
	w    float32
}

// Search returns the tools that match query, best first; ties are broken by
// tool name, then server name. A query of keywords and a whole sentence are
// both fine. An empty query matches every tool (of opts.Server, if set), in
// name order; a query of stop words alone matches nothing. The error is
// non-nil only for a regular expression that does not compile.
func (ix *Index) Search(query string, opts Options) ([]Hit, error) {
	if opts.Regex {
		return ix.searchRegex(query, opts)
	}
	query = CapQuery(query)
	server := int32(-1) // no filter
	if opts.Server != "" {
		id, ok := ix.servers[opts.Server]
		if !ok {
			return nil, nil
		}
		server = id
	}
	s := ix.pool.Get().(*searchScratch)
	defer ix.pool.Put(s)

	groups, hadWords := ix.parseQuery(query, s, false)
	if len(groups) == 0 && hadWords {
		// Only stop words: they may still name a tool ("help").
		groups, _ = ix.parseQuery(query, s, true)
		if len(groups) == 0 {
			return nil, nil
		}
	}
	acts := s.acts // the whole query's, before its clauses are parsed
	kinds := s.kinds
	if len(groups) == 0 {
		return ix.all(opts), nil
	}

	ix.accumulate(groups, s, false)
	if ix.p.clause > 0 {
		ix.scoreClauses(query, s)
	}

	named := ix.namedServers(query, s)
	tools := ix.namedTools(query, s)
	hasID := ix.p.ident > 0 && hasIdentifier(query)
	several := quantified(query)
	var gen uint32
	if ix.p.cover > 0 || ix.p.number > 0 || ix.p.plural > 0 {
		gen = ix.markQuery(query, s)
	}
	keys := s.keys[:0]
	var best float32
	for _, d := range s.touched {
		sc := s.acc[d].final()
		if ix.otherAction(d, acts) {
			sc *= 1 - float32(ix.p.action)
		}
		if ix.otherKind(d, kinds) {
			sc *= 1 - float32(ix.p.otherKind)
		}
		if len(named) > 0 && slices.Contains(named, ix.server[d]) {
			sc *= 1 + float32(ix.p.named)
		}
		if ix.p.cover > 0 {
			sc *= 1 + float32(ix.p.cover)*ix.nameCoverage(d, s, gen)
		}
		if ix.p.number > 0 && ix.numberFits(d, s, gen, acts) {
			sc *= 1 + float32(ix.p.number)
		}
		if ix.p.plural > 0 && !several && ix.pluralOnly(d, s, gen) {
			sc *= 1 - float32(ix.p.plural)
		}
		if len(tools) > 0 && slices.Contains(tools, d) {
			sc *= 1 + float32(ix.p.fullName)
		} else if ix.deprecated[d] {
			sc *= 1 - float32(ix.p.dated)
		}
		if hasID && ix.needsID[d] {
			sc *= 1 + float32(ix.p.ident)
		}
		if server < 0 || ix.server[d] == server {
			keys = append(keys, ix.rankKey(d, sc))
			best = max(best, sc)
		}
		s.acc[d] = toolAcc{}
	}
	s.touched = s.touched[:0]
	// Matches far below the best are noise (a related word's prefix in a
	// long description): they are dropped, so that "every match" stays a
	// list worth reading and cheap to sort.
	floor := uint64(^math.Float32bits(best*float32(ix.p.minShare)))<<32 | math.MaxUint32
	n := 0
	for _, k := range keys {
		if k <= floor {
			keys[n] = k
			n++
		}
	}
	keys = keys[:n]
	out := ix.top(keys, opts.Limit)
	s.keys = keys[:0]
	return out, nil
}

// accumulate adds the scores of groups' matches to the tools: to their
// score, or, for a clause, to their clause score (every tool a clause
// matches was matched by the whole query already).
func (ix *Index) accumulate(groups []queryGroup, s *searchScratch, clause bool) {
	add := func(d int32, v float32) {
		t := &s.acc[d]
		if clause {
			t.clause += v
			return
		}
		if t.matched == 0 {
			s.touched = append(s.touched, d)
		}
		t.score += v
		t.matched++
	}
	for _, g := range groups {
		if len(g.alts) == 1 {
			a := g.alts[0]
			for k := ix.postStart[a.term]; k < ix.postStart[a.term+1]; k++ {
				add(ix.postDoc[k], a.w*ix.postScore[k])
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
			v := t.best + soft*(t.sum-t.best)
			t.best, t.sum = 0, 0
			add(d, v)
		}
		s.group = s.group[:0]
	}
}

// scoreClauses scores each clause of a query of several (splitClauses) and
// keeps each tool's best; final blends it with the whole query's score.
func (ix *Index) scoreClauses(query string, s *searchScratch) {
	clauses := splitClauses(query)
	if len(clauses) < 2 {
		return
	}
	w := float32(ix.p.clause)
	for _, c := range clauses {
		groups, _ := ix.parseQuery(c, s, false)
		if len(groups) == 0 {
			continue
		}
		ix.accumulate(groups, s, true)
		for _, d := range s.touched {
			t := &s.acc[d]
			t.bestClause = max(t.bestClause, t.clause)
			t.clause = 0
		}
	}
	for _, d := range s.touched {
		s.acc[d].clauseW = w
	}
}

// all returns every tool that passes the server filter, in name order.
func (ix *Index) all(opts Options) []Hit {
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

// rankKey packs a match into one integer that sorts ascending in rank
// order: the score descending, then the tool's name order. Scores are never
// negative, and the bits of a non-negative float32 order as the floats do.
func (ix *Index) rankKey(d int32, score float32) uint64 {
	return uint64(^math.Float32bits(score))<<32 | uint64(ix.rank[d])
}

// hit unpacks a rank key.
func (ix *Index) hit(key uint64) Hit {
	return Hit{Doc: int(ix.byName[uint32(key)]), Score: float64(math.Float32frombits(^uint32(key >> 32)))}
}

// top returns the hits of the best limit keys (all when limit is 0), in rank
// order. It reorders keys.
func (ix *Index) top(keys []uint64, limit int) []Hit {
	if limit <= 0 || limit > len(keys) {
		limit = len(keys)
	}
	if limit == 0 {
		return nil
	}
	if limit < len(keys) {
		// Keep the best limit keys in a heap, the worst (largest) at the
		// root.
		h := keys[:limit]
		down := func(i int) {
			for {
				m := 2*i + 1
				if m >= len(h) {
					return
				}
				if r := m + 1; r < len(h) && h[r] > h[m] {
					m = r
				}
				if h[m] <= h[i] {
					return
				}
				h[i], h[m] = h[m], h[i]
				i = m
			}
		}
		for i := limit/2 - 1; i >= 0; i-- {
			down(i)
		}
		for _, k := range keys[limit:] {
			if k < h[0] {
				h[0] = k
				down(0)
			}
		}
	}
	best := keys[:limit]
	if len(best) > 256 {
		sortKeys(best, make([]uint64, len(best)))
	} else {
		slices.Sort(best)
	}
	out := make([]Hit, limit)
	for i, k := range best {
		out[i] = ix.hit(k)
	}
	return out
}

// sortKeys sorts keys ascending with a least-significant-digit radix sort,
// using tmp (as long as keys) as scratch. Every match of a common word, over
// a large catalogue, is thousands of keys: this sorts them in a few linear
// passes, skipping the digits all keys share.
func sortKeys(keys, tmp []uint64) {
	if len(keys) < 2 {
		return
	}
	const bits = 11
	var count [1 << bits]int
	var or, and uint64 = 0, ^uint64(0)
	for _, k := range keys {
		or |= k
		and &= k
	}
	src, dst := keys, tmp
	for shift := 0; shift < 64; shift += bits {
		mask := uint64(1<<bits-1) << shift
		if (or^and)&mask == 0 {
			continue // every key has the same digit here
		}
		clear(count[:])
		for _, k := range src {
			count[(k>>shift)&(1<<bits-1)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, k := range src {
			d := (k >> shift) & (1<<bits - 1)
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
	}
}
