package search

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// splitWords splits text into lower-case words the way tool names are built:
// on anything that is not a letter or digit (snake_case, kebab-case, dots,
// spaces), at camelCase humps ("getHTTPResponse" → get, http, response) and
// between letters and digits ("base64" → base, 64). A camelCase run is also
// emitted whole ("GitHub" → git, hub, github), as is a short run that mixes
// letters and digits ("s3", "ec2", "mp3"), since either is usually a name in
// its own right. Words of a single letter are dropped. Chinese, Japanese
// and Korean text, which does not put spaces between words, gives its
// overlapping pairs of characters instead ("获取八字信息" → 获取, 取八, 八字,
// 字信, 信息), and a lone character as itself.
func splitWords(text string, emit func(string)) {
	splitWordsIn(text, nil, emit)
}

// splitWordsIn is splitWords with the lower-cased copies of words taken
// from in.
func splitWordsIn(text string, in interner, emit func(string)) {
	var buf [64]byte
	start, cjkStart := -1, -1
	for i := 0; i <= len(text); {
		alnum, cjk, size := false, false, 1
		if i < len(text) {
			if c := text[i]; c < utf8.RuneSelf {
				alnum = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
			} else {
				var r rune
				r, size = utf8.DecodeRuneInString(text[i:])
				cjk = isCJK(r)
				alnum = !cjk && (unicode.IsLetter(r) || unicode.IsDigit(r))
			}
		}
		if alnum {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			splitRun(text[start:i], buf[:0], in, emit)
			start = -1
		}
		if cjk {
			if cjkStart < 0 {
				cjkStart = i
			}
		} else if cjkStart >= 0 {
			splitCJK(text[cjkStart:i], emit)
			cjkStart = -1
		}
		i += size
	}
}

// isCJK reports whether r is written without spaces between words: Han
// characters, kana with the long-vowel mark, and Hangul (whose words a
// pair covers as well).
func isCJK(r rune) bool {
	return r >= 0x1100 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) || r == 'ー' || r == 'ｰ')
}

// splitCJK emits the overlapping pairs of characters of a run of CJK
// text, or its one character: without a dictionary, a pair is the unit
// that most often is a word, or the part of one, that two texts share.
func splitCJK(run string, emit func(string)) {
	_, first := utf8.DecodeRuneInString(run)
	if first == len(run) {
		emit(run)
		return
	}
	for i, a := 0, first; a < len(run); {
		_, b := utf8.DecodeRuneInString(run[a:])
		emit(run[i : a+b])
		i, a = a, a+b
	}
}

type runeClass uint8

const (
	runeLower runeClass = iota
	runeUpper
	runeDigit
)

func runeClassOf(r rune) runeClass {
	if r < utf8.RuneSelf {
		switch {
		case '0' <= r && r <= '9':
			return runeDigit
		case 'A' <= r && r <= 'Z':
			return runeUpper
		}
		return runeLower
	}
	switch {
	case unicode.IsDigit(r):
		return runeDigit
	case unicode.IsUpper(r):
		return runeUpper
	}
	return runeLower
}

// splitRun splits one run of letters and digits.
func splitRun(run string, buf []byte, in interner, emit func(string)) {
	letters, digits := false, false
	partStart := 0
	prev := runeLower
	for i, r := range run {
		c := runeClassOf(r)
		if c == runeDigit {
			digits = true
		} else {
			letters = true
		}
		if i > 0 && boundaryAt(run, i, prev, c) {
			emitLower(run[partStart:i], buf, in, emit)
			partStart = i
		}
		prev = c
	}
	emitLower(run[partStart:], buf, in, emit)
	switch {
	case partStart == 0:
	case !digits:
		// "GitHub", "YouTube", "WordCloud": the brand is one word too.
		emitLower(run, buf, in, emit)
	case letters && len(run) <= 5:
		emitLower(run, buf, in, emit)
	}
}

// boundaryAt reports whether a word starts at byte i of run, whose rune is
// of class c and follows a rune of class prev.
func boundaryAt(run string, i int, prev, c runeClass) bool {
	switch {
	case (prev == runeDigit) != (c == runeDigit):
		return true
	case prev == runeLower && c == runeUpper:
		return true
	case prev == runeUpper && c == runeUpper:
		// "HTTPResponse": the R of Response starts a word because a
		// lower-case letter follows it; but an acronym's plural ("NFTs",
		// "listAPIs") ends in a lone s.
		_, size := utf8.DecodeRuneInString(run[i:])
		if j := i + size; j < len(run) {
			next, _ := utf8.DecodeRuneInString(run[j:])
			return unicode.IsLower(next) && run[j:] != "s"
		}
	}
	return false
}

func emitLower(w string, buf []byte, in interner, emit func(string)) {
	if utf8.RuneCountInString(w) < 2 {
		if len(w) == 1 && w[0] >= '0' && w[0] <= '9' {
			emit(w)
		}
		return
	}
	ascii := true
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		buf = buf[:0]
		for _, r := range w {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		}
		emit(in.str(buf))
		return
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 'A' && c <= 'Z' {
			buf = append(buf[:0], w...)
			for j := i; j < len(buf); j++ {
				if c := buf[j]; c >= 'A' && c <= 'Z' {
					buf[j] = c + 'a' - 'A'
				}
			}
			emit(in.str(buf))
			return
		}
	}
	emit(w)
}

// interner hands out one copy of each distinct string; nil allocates a
// new string every time.
type interner map[string]string

func (in interner) str(b []byte) string {
	if in == nil {
		return string(b)
	}
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	in[s] = s
	return s
}

// isStopWord reports whether a lower-case word carries no meaning for
// finding a tool: English function words, the phrasing of a request ("can
// you please help me"), and words every tool shares ("tool", "plugin").
func isStopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}

var stopWords = wordSet(
	// English function words.
	"a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and",
	"any", "are", "as", "at", "be", "because", "been", "before", "being", "below",
	"between", "both", "but", "by", "did", "do", "does", "doing", "down", "during",
	"each", "either", "else", "etc", "ever", "every", "few", "for", "from", "further",
	"had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him",
	"himself", "his", "how", "however", "i", "if", "in", "into", "is", "it", "its",
	"itself", "just", "me", "more", "most", "much", "my", "myself", "no", "nor", "not",
	"of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out",
	"over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the",
	"their", "theirs", "them", "themselves", "then", "there", "these", "they", "this",
	"those", "through", "to", "too", "under", "until", "up", "us", "very", "was", "we",
	"were", "what", "when", "where", "which", "while", "who", "whom", "whose", "why",
	"will", "with", "within", "without", "would", "you", "your", "yours", "yourself",
	"yourselves", "via", "per", "may", "might", "must", "shall", "can", "could",
	"cannot", "let", "lets", "s", "t", "don", "doesn", "didn", "isn", "aren", "won",
	"ve", "ll", "re", "d", "m", "im", "ive", "yes", "ok", "okay", "hi", "hello",
	"hey", "thanks", "thank", "really", "actually", "maybe", "perhaps", "quite",
	"something", "anything", "everything", "someone", "anyone", "thing", "things",
	"way", "ways", "lot", "lots", "many", "several", "various",
	"able", "whether", "though", "although", "even", "still", "yet",
	"already", "using", "use", "used", "given",
	// The phrasing of a request.
	"please", "pls", "help", "need", "needs", "want", "wants", "wanted", "wanna",
	"like", "looking", "know", "tell", "give", "possible", "provide",
	"provides", "providing", "allow", "allows", "enable", "enables", "try",
	"trying", "going", "gonna", "sure", "nice", "awesome",
	"somebody",
	// Every entry of a tool catalogue is a tool.
	"tool", "tools", "plugin", "plugins", "mcp",
)

// isFiller reports whether a lower-case word only qualifies a request
// ("specifically", "a comprehensive and reliable one"): such words are
// common in requests and say little of the tool wanted, so a catalogue
// where few tools use them must not make them decide the ranking.
func isFiller(w string) bool {
	_, ok := fillerWords[w]
	return ok
}

// isNumber reports whether w is all ASCII digits.
func isNumber(w string) bool {
	for i := 0; i < len(w); i++ {
		if !isDigit(w[i]) {
			return false
		}
	}
	return w != ""
}

var fillerWords = wordSet(
	"specific", "specifically", "particular", "particularly", "certain", "including",
	"include", "includes", "detailed", "comprehensive", "thorough", "thoroughly",
	"available", "currently", "relevant", "regarding", "related", "overall",
	"different", "well", "good", "great", "high", "quality", "reliable", "accurate",
	"accurately", "effective", "effectively", "better", "improve", "ensure",
	"suitable", "appropriate", "necessary", "important", "useful", "helpful",
	"right", "exactly", "essentially", "basically", "potential", "additionally",
	"interested", "curious", "hoping", "wondering", "seeking", "kindly", "assist",
	"assistance", "require", "requires", "required", "requirement", "requirements",
	"preferably", "ideally", "option", "options", "based", "according", "highly",
	"extremely",
)

func wordSet(words ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}

// appendShapeWords appends the words that the shape of the query's tokens
// implies: "url" for a URL, "file" for a file name or path, "email" for an
// address. "Open https://example.com" wants a tool about URLs even though
// it never says so.
func appendShapeWords(words []string, query string) []string {
	var url, file, email bool
	for _, f := range strings.Fields(query) {
		f = strings.Trim(f, tokenPunct)
		switch {
		case strings.Contains(f, "://") || strings.HasPrefix(f, "www."):
			url = true
		case strings.Contains(f, "@") && strings.Contains(f[strings.Index(f, "@"):], "."):
			email = true
		case strings.HasPrefix(f, "/") || strings.HasPrefix(f, "./") || strings.HasPrefix(f, "~/"):
			file = true
		}
		if _, ok := fileExtensions[extension(f)]; ok {
			file = true
		}
	}
	if url {
		words = append(words, "url")
	}
	if file {
		words = append(words, "file")
	}
	if email {
		words = append(words, "email")
	}
	return words
}

// fileExtensions are extensions that make a token a file name. Ones that
// also end product names ("Node.js", "ASP.NET") are left out.
var fileExtensions = wordSet("md", "txt", "go", "py", "rs", "java", "rb", "php", "json",
	"yaml", "yml", "toml", "xml", "csv", "tsv", "pdf", "doc", "docx", "xls", "xlsx",
	"ppt", "pptx", "png", "jpg", "jpeg", "gif", "svg", "webp", "mp3", "mp4", "wav",
	"html", "css", "sh", "sql", "log", "zip", "tar", "gz", "ipynb", "c", "h", "cpp",
	"tsx", "jsx", "swift", "kt", "env", "ini", "conf", "lock")

// tokenPunct is the punctuation around a token of a query ("(report.md),").
const tokenPunct = `"'()[]{}<>,;:!?`

// extension returns the lower-cased extension of a token that looks like
// a file name ("notes.MD" → "md"), or "" (a URL is not a file name).
func extension(tok string) string {
	i := strings.LastIndexByte(tok, '.')
	if i <= 0 || strings.Contains(tok, "://") {
		return ""
	}
	return strings.ToLower(tok[i+1:])
}

// appendFileKinds appends the kinds of the files the query names
// (fileKinds), once each.
func appendFileKinds(words []string, query string) []string {
	start := len(words)
	for _, f := range strings.Fields(query) {
		for _, k := range fileKinds[extension(strings.TrimRight(strings.Trim(f, tokenPunct), "."))] {
			if !slices.Contains(words[start:], k) {
				words = append(words, k)
			}
		}
	}
	return words
}

// fileKinds are the words for the kind of file an extension names, as
// tools describe what they handle: report.docx wants a Word document
// tool, notes.md a markdown one.
var fileKinds = map[string][]string{
	"md": {"markdown"}, "txt": {"text"}, "py": {"python"}, "rs": {"rust"}, "rb": {"ruby"},
	"doc": {"word", "document"}, "docx": {"word", "document"},
	"xls": {"excel", "spreadsheet"}, "xlsx": {"excel", "spreadsheet"}, "csv": {"spreadsheet"}, "tsv": {"spreadsheet"},
	"ppt": {"powerpoint", "presentation"}, "pptx": {"powerpoint", "presentation"},
	"png": {"image"}, "jpg": {"image"}, "jpeg": {"image"}, "gif": {"image"}, "svg": {"image"}, "webp": {"image"},
	"mp3": {"audio"}, "wav": {"audio"}, "mp4": {"video"},
	"html": {"html"}, "ipynb": {"notebook", "jupyter"}, "sql": {"sql"}, "log": {"log"},
	"zip": {"archive"}, "tar": {"archive"}, "gz": {"archive"},
}

// splitTokens calls emit with each run of letters and digits of text as
// written (lower-cased), and with its parts ("GitHub" gives "github"; the
// parts "git" and "hub" go to parts), so that a caller can prefer the word
// the user wrote over the pieces of it.
func splitTokens(text string, emit func(token string, parts []string)) {
	var parts []string
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		parts = parts[:0]
		splitWords(tok, func(w string) { parts = append(parts, w) })
		emit(strings.ToLower(tok), parts)
	}
}
