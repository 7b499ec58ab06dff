package search

// The ranking's signals beyond BM25F: the clauses of a long request, the
// servers a request names, how much of a tool's name it covers, and the
// bounds of a query.

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
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

// markQuery marks, in s.mark, the terms of the query's words and of their
// synonyms, for nameCoverage; it returns the mark.
func (ix *Index) markQuery(query string, s *searchScratch) uint32 {
	s.gen++
	if s.gen == 0 { // wrapped: old marks could collide
		clear(s.mark)
		s.gen = 1
	}
	mark := func(w string) bool {
		st := ix.stem(w)
		id, ok := ix.terms[st]
		if ok {
			s.mark[id] = s.gen
			if plural(w) {
				s.many[id] = s.gen
			} else {
				s.one[id] = s.gen
			}
		}
		for _, syn := range vocab().synonymsOf[st] {
			if id, ok := ix.terms[syn]; ok {
				s.mark[id] = s.gen
			}
		}
		return ok
	}
	// A word as written ("GitHub"), or, when the catalogue does not
	// have it, its parts.
	splitTokens(query, func(tok string, parts []string) {
		if len(parts) == 1 || !mark(tok) {
			for _, w := range parts {
				mark(w)
			}
		}
	})
	return s.gen
}

// nameCoverage is the share of the words of d's name that the query has
// (marked gen by markQuery).
func (ix *Index) nameCoverage(d int32, s *searchScratch, gen uint32) float32 {
	words := ix.nameTerms[ix.nameStart[d]:ix.nameStart[d+1]]
	if len(words) == 0 {
		return 0
	}
	n := 0
	for _, id := range words {
		if s.mark[id] == gen {
			n++
		}
	}
	return float32(n) / float32(len(words))
}

// namedServers returns the servers whose names the query uses a
// distinctive word of ("on Obsidian, ...", "linear create issue").
func (ix *Index) namedServers(query string, s *searchScratch) []int32 {
	named := s.named[:0]
	if len(ix.serverWords) == 0 {
		return named
	}
	// Words as written: "GitHub" does not name a server called "git".
	splitTokens(query, func(tok string, _ []string) {
		if isStopWord(tok) {
			return
		}
		for _, id := range ix.serverWords[ix.stem(tok)] {
			if !slices.Contains(named, id) {
				named = append(named, id)
			}
		}
	})
	s.named = named[:0]
	return named
}

// Bounds of a query: a request of a few paragraphs is searched whole; a
// pasted blob (a base64 image, a log) is cut, so that no query costs more
// than a few of the usual kind.
const (
	MaxQueryBytes = 4096
	maxQueryWords = 128 // content words
	maxWordBytes  = 64  // longer "words" are data, not words
)

// CapQuery is what of query a search reads: its first MaxQueryBytes, cut
// at a rune boundary.
func CapQuery(query string) string {
	if len(query) <= MaxQueryBytes {
		return query
	}
	cut := MaxQueryBytes
	for cut > 0 && !utf8.RuneStart(query[cut]) {
		cut--
	}
	return query[:cut]
}

// Actions: "list my storage accounts" wants list_storage_accounts, not
// create_storage_account, though both have every other word. A tool's
// name says its action; a query's verbs say the actions it wants. A tool
// whose name has an action and none of the query's scores less
// (rankParams.action).
const (
	actRead uint8 = 1 << iota
	actCreate
	actUpdate
	actDelete
)

var actionWords = map[uint8][]string{
	actRead: {"get", "read", "list", "show", "fetch", "retrieve", "view", "find", "search", "query",
		"describe", "lookup", "display", "browse", "download", "export", "count", "check", "inspect", "watch"},
	actCreate: {"create", "add", "new", "make", "insert", "save", "write", "store", "post", "upload",
		"put", "append", "register", "import", "generate", "send", "publish", "submit"},
	actUpdate: {"update", "edit", "modify", "change", "set", "rename", "move", "patch", "replace", "enable", "disable"},
	actDelete: {"delete", "remove", "erase", "destroy", "drop", "clear", "purge", "unregister", "cancel", "revoke"},
}

// actionOf maps the stem of an action word to its actions.
var actionOf = func() map[string]uint8 {
	m := map[string]uint8{}
	for a, words := range actionWords {
		for _, w := range words {
			m[stem(w)] |= a
		}
	}
	return m
}()

// otherAction reports whether tool d's name does something else than the
// actions acts a query asks for (neither being unknown).
func (ix *Index) otherAction(d int32, acts uint8) bool {
	a := ix.actions[d]
	return acts != 0 && a != 0 && a&acts == 0
}

// actionTerms records the actions of each term that is an action word.
func (ix *Index) actionTerms() {
	ix.termActs = make([]uint8, len(ix.terms))
	for st, a := range actionOf {
		if id, ok := ix.terms[st]; ok {
			ix.termActs[id] = a
		}
	}
}

// toolActions records the actions of each tool's name words.
func (ix *Index) toolActions() {
	ix.actions = make([]uint8, len(ix.docs))
	ix.lists = make([]bool, len(ix.docs))
	lister := map[int32]bool{}
	for _, w := range [...]string{"list", "enumerate"} {
		if id, ok := ix.terms[stem(w)]; ok {
			lister[id] = true
		}
	}
	for d := range ix.docs {
		for _, id := range ix.nameTerms[ix.nameStart[d]:ix.nameStart[d+1]] {
			ix.actions[d] |= ix.termActs[id]
			ix.lists[d] = ix.lists[d] || lister[id]
		}
	}
	ix.listedNouns()
}

// Tools named in full: a query that writes out a tool's whole name
// ("osrs_wiki_get_page_info", "searchFlightsByDepArr", or the name the
// gateway shows, "github_create_issue") asks for that tool. Only names of
// two words or more count: a one-word name ("search") is a word like any
// other.

// fullNames records the hashes of each tool's name and qualified name, of
// several words with no space, case folded, sorted: a query's token is
// looked up by its hash, then compared.
func (ix *Index) fullNames() {
	ix.full = ix.full[:0]
	for i, d := range ix.docs {
		name := d.Name
		if compound(name) {
			ix.full = append(ix.full, fullName{foldHash(name), int32(i), false})
		}
		if q := ix.qualified[i]; compound(q) {
			ix.full = append(ix.full, fullName{foldHash(q), int32(i), true})
		}
	}
	slices.SortFunc(ix.full, func(a, b fullName) int { return cmp.Compare(a.hash, b.hash) })
}

// A fullName is one entry of the full-name table.
type fullName struct {
	hash      uint64
	doc       int32
	qualified bool // the hash is of the qualified name
}

// compound reports whether a name is of several words, split as
// splitWords splits (snake_case, kebab-case, dots, camelCase, letters and
// digits), with no space.
func compound(name string) bool {
	several := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == ' ' || c == '\t':
			return false
		case c == '_' || c == '-' || c == '.':
			several = several || i > 0 && i < len(name)-1
		case i > 0:
			p := name[i-1]
			lowerUpper := 'a' <= p && p <= 'z' && 'A' <= c && c <= 'Z'
			digits := isDigit(p) != isDigit(c) && isAlnum(p) && isAlnum(c)
			several = several || lowerUpper || digits
		}
	}
	return several
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'z' }

// foldHash is the FNV-1a hash of s with ASCII letters lower-cased.
func foldHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h
}

// namedTools returns the tools whose full name the query writes.
func (ix *Index) namedTools(query string, s *searchScratch) []int32 {
	named := s.tools[:0]
	if len(ix.full) == 0 {
		return named
	}
	inName := func(r rune) bool {
		return r == '_' || r == '-' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	start := -1
	end := func(i int) {
		tok := strings.Trim(query[start:i], "-.")
		start = -1
		if len(tok) < 3 {
			return
		}
		h := foldHash(tok)
		k, _ := slices.BinarySearchFunc(ix.full, h, func(f fullName, h uint64) int { return cmp.Compare(f.hash, h) })
		for ; k < len(ix.full) && ix.full[k].hash == h; k++ {
			f := ix.full[k]
			name := ix.docs[f.doc].Name
			if f.qualified {
				name = ix.qualified[f.doc]
			}
			if strings.EqualFold(name, tok) && !slices.Contains(named, f.doc) {
				named = append(named, f.doc)
			}
		}
	}
	for i, r := range query {
		switch {
		case inName(r) && start < 0:
			start = i
		case !inName(r) && start >= 0:
			end(i)
		}
	}
	if start >= 0 {
		end(len(query))
	}
	s.tools = named[:0]
	return named
}

// Number: "show me the keys in the vault" wants the tool that lists keys,
// "show me the key k1" the one that gets one. Between the tools a server
// has for one resource, a list tool and others, the query's plural or
// singular noun breaks the tie.

// listedNouns records, for each tool, the noun its name acts on (the word
// next to its action word: key in keyvault_key_list and in list_keys),
// where its server has both a list tool and another tool of that noun.
func (ix *Index) listedNouns() {
	key := func(d int32, t int32) uint64 { return uint64(ix.server[d])<<32 | uint64(uint32(t)) }
	ix.object = make([]int32, len(ix.docs))
	kinds := map[uint64]uint8{} // 1: a list tool acts on it, 2: another tool
	for d := range int32(len(ix.docs)) {
		ix.object[d] = -1
		words := ix.nameTerms[ix.nameStart[d]:ix.nameStart[d+1]]
		switch j := slices.IndexFunc(words, func(t int32) bool { return ix.termActs[t] != 0 }); {
		case j > 0 && ix.termActs[words[j-1]] == 0:
			ix.object[d] = words[j-1]
		case j == 0 && len(words) > 1 && ix.termActs[words[1]] == 0:
			ix.object[d] = words[1]
		default:
			continue
		}
		bit := uint8(2)
		if ix.lists[d] {
			bit = 1
		}
		kinds[key(d, ix.object[d])] |= bit
	}
	for d := range int32(len(ix.docs)) {
		if t := ix.object[d]; t >= 0 && kinds[key(d, t)] != 3 {
			ix.object[d] = -1
		}
	}
}

// Number in names: "read a file" wants read_text_file before
// read_multiple_files, though both read files. A tool whose name writes in
// the plural a noun the query has only in the singular scores less
// (rankParams.plural); the number signal above only weighs list tools.

// pluralNames records, for each tool, a noun its name writes in the plural.
func (ix *Index) pluralNames(raw []docWords) {
	ix.pluralName = make([]int32, len(raw))
	for d := range raw {
		ix.pluralName[d] = -1
		for _, w := range raw[d][fieldName] {
			if !plural(w) {
				continue
			}
			if id, ok := ix.terms[ix.stem(w)]; ok {
				ix.pluralName[d] = id
				break
			}
		}
	}
}

// pluralOnly reports whether tool d's name has in the plural a noun the
// query (marked gen by markQuery) has, and only in the singular.
func (ix *Index) pluralOnly(d int32, s *searchScratch, gen uint32) bool {
	t := ix.pluralName[d]
	return t >= 0 && s.one[t] == gen && s.many[t] != gen
}

// quantified reports whether query asks for several of something in a
// word ("all the ticker symbols", "each entity"), whatever number its
// nouns have.
func quantified(query string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) }) {
		switch w {
		case "all", "every", "each", "multiple", "many", "several", "bulk", "batch":
			return true
		}
	}
	return false
}

// plural reports whether a word, lower-cased, looks like a plural noun.
func plural(w string) bool {
	if len(w) < 4 || w[len(w)-1] != 's' {
		return false
	}
	switch w[len(w)-2] {
	case 's', 'u', 'i':
		return false // "address", "status", "analysis"
	}
	return true
}

// numberFits reports whether tool d is the list tool of a noun
// (listedNouns) the query has in the plural, or another tool of one it
// has only in the singular ("the key k1 in the key vault" has it in both:
// the plural says most). Only when the query asks to read, or says no
// action.
func (ix *Index) numberFits(d int32, s *searchScratch, gen uint32, acts uint8) bool {
	t := ix.object[d]
	if t < 0 || acts&^actRead != 0 {
		return false
	}
	switch {
	case s.many[t] == gen:
		return ix.lists[d]
	case s.one[t] == gen:
		return !ix.lists[d]
	}
	return false
}

// Kinds of file: "save it to notes.md" wants a tool that writes files or
// markdown, not save_as_pdf, though both save. A tool whose name handles
// kinds of file and none of those the query names (by extension or word)
// scores less (rankParams.otherKind).
var kindOf = func() map[string]uint16 {
	m := map[string]uint16{}
	for i, words := range [][]string{
		{"pdf", "pdfs"},
		{"markdown", "md"},
		{"docx", "doc"},
		{"excel", "xlsx", "xls", "spreadsheet", "spreadsheets", "csv", "sheet", "sheets"},
		{"powerpoint", "pptx", "ppt", "presentation", "presentations", "slide", "slides"},
		{"image", "images", "png", "jpg", "jpeg", "picture", "pictures", "photo", "photos"},
		{"audio", "mp3", "wav"},
		{"video", "videos", "mp4"},
		{"html"},
		{"json"},
	} {
		for _, w := range words {
			m[w] |= 1 << i
		}
	}
	return m
}()

// toolKinds records the kinds of file each tool's name handles.
func (ix *Index) toolKinds(raw []docWords) {
	ix.kinds = make([]uint16, len(raw))
	for i := range raw {
		for _, w := range raw[i][fieldName] {
			ix.kinds[i] |= kindOf[w]
		}
	}
}

// otherKind reports whether tool d's name handles kinds of file and none of
// kinds, those the query names.
func (ix *Index) otherKind(d int32, kinds uint16) bool {
	k := ix.kinds[d]
	return kinds != 0 && k != 0 && k&kinds == 0
}

// Identifiers: "the paper 2203.12277", "story 44490510", "issue #812" name
// one thing, which a tool that takes its ID gets; a search or list tool of
// the same server is for a query that does not know it yet. A tool whose
// schema requires an identifier scores more (rankParams.ident) for a
// query that carries one: a run of five digits or more, or a number
// after "#". Shorter numbers are counts, years and sizes.

// hasIdentifier reports whether query carries an identifier.
func hasIdentifier(query string) bool {
	run := 0
	for i := 0; i < len(query); i++ {
		if !isDigit(query[i]) {
			run = 0
			continue
		}
		if run++; run >= 5 || run == 1 && i > 0 && query[i-1] == '#' {
			return true
		}
	}
	return false
}

// deprecated reports whether a tool's description says the tool is
// deprecated: the word in capitals ("DEPRECATED: use read_text_file
// instead"), or in its first sentence, or in a phrase that can only be
// about the tool ("is deprecated", "deprecated in favor of"). A
// description that only mentions deprecated things ("lists deprecated
// APIs") later on does not count. Servers keep such a tool for old
// callers beside its replacement, which matches the same words.
func deprecated(desc string) bool {
	if strings.Contains(desc, "DEPRECATED") {
		return true
	}
	lower := strings.ToLower(desc)
	first, _, _ := strings.Cut(lower, ". ")
	if strings.HasPrefix(strings.TrimLeft(first, "([ "), "deprecated") {
		return true
	}
	for _, p := range []string{"(deprecated)", "[deprecated]", "deprecated:", "is deprecated", "deprecated in favor", "deprecated in favour", "deprecated; use", "deprecated, use"} {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}
