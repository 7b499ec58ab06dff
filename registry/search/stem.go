package search

import "strings"

// stem reduces a lower-case English word to its stem with the Porter2
// (Snowball English) algorithm, so that "searching", "searches" and
// "searched" all index as "search". Words with anything but a-z, and words
// of two letters or fewer, are returned unchanged.
func stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	if s, ok := stemExceptions[w]; ok {
		return s
	}
	b := []byte(w)
	// y at the start or after a vowel is a consonant: mark it Y.
	if b[0] == 'y' {
		b[0] = 'Y'
	}
	for i := 1; i < len(b); i++ {
		if b[i] == 'y' && stemVowel(b[i-1]) {
			b[i] = 'Y'
		}
	}
	s := &stemmer{b: b}
	s.regions()
	s.step1a()
	if _, ok := stemInvariantAfter1a[string(s.b)]; ok {
		return string(s.b)
	}
	s.step1b()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	for i := range s.b {
		if s.b[i] == 'Y' {
			s.b[i] = 'y'
		}
	}
	return string(s.b)
}

var stemExceptions = map[string]string{
	"skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie",
	"idly": "idl", "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli",
	"singly": "singl",
	"sky":    "sky", "news": "news", "howe": "howe", "atlas": "atlas", "cosmos": "cosmos",
	"bias": "bias", "andes": "andes",
}

var stemInvariantAfter1a = map[string]struct{}{
	"inning": {}, "outing": {}, "canning": {}, "herring": {}, "earring": {},
	"proceed": {}, "exceed": {}, "succeed": {},
}

type stemmer struct {
	b      []byte
	r1, r2 int // start offsets of the regions R1 and R2
}

func stemVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

// stemRegionAfter returns the offset after the first non-vowel that follows a
// vowel, at or after from.
func stemRegionAfter(b []byte, from int) int {
	for i := from + 1; i < len(b); i++ {
		if !stemVowel(b[i]) && stemVowel(b[i-1]) {
			return i + 1
		}
	}
	return len(b)
}

func (s *stemmer) regions() {
	w := string(s.b)
	switch {
	case strings.HasPrefix(w, "gener"), strings.HasPrefix(w, "arsen"):
		s.r1 = 5
	case strings.HasPrefix(w, "commun"):
		s.r1 = 6
	default:
		s.r1 = stemRegionAfter(s.b, 0)
	}
	s.r2 = stemRegionAfter(s.b, s.r1)
}

func (s *stemmer) has(suffix string) bool {
	return len(s.b) >= len(suffix) && string(s.b[len(s.b)-len(suffix):]) == suffix
}

// longest returns the longest of suffixes that the word ends with, or "".
func (s *stemmer) longest(suffixes ...string) string {
	best := ""
	for _, x := range suffixes {
		if len(x) > len(best) && s.has(x) {
			best = x
		}
	}
	return best
}

func (s *stemmer) inR1(suffix string) bool { return len(s.b)-len(suffix) >= s.r1 }
func (s *stemmer) inR2(suffix string) bool { return len(s.b)-len(suffix) >= s.r2 }

func (s *stemmer) replace(suffix, with string) {
	s.b = append(s.b[:len(s.b)-len(suffix)], with...)
}

// shortSyllableEnding reports whether the first n letters end in a short
// syllable.
func (s *stemmer) shortSyllableEnding(n int) bool {
	b := s.b[:n]
	if n == 2 {
		return stemVowel(b[0]) && !stemVowel(b[1])
	}
	if n < 3 {
		return false
	}
	c := b[n-1]
	return !stemVowel(b[n-3]) && stemVowel(b[n-2]) && !stemVowel(c) && c != 'w' && c != 'x' && c != 'Y'
}

func (s *stemmer) isShort() bool {
	return s.r1 >= len(s.b) && s.shortSyllableEnding(len(s.b))
}

func (s *stemmer) step1a() {
	if s.has("'") {
		s.b = s.b[:len(s.b)-1]
	}
	switch x := s.longest("sses", "ied", "ies", "us", "ss", "s"); x {
	case "sses":
		s.replace(x, "ss")
	case "ied", "ies":
		if len(s.b) > 4 {
			s.replace(x, "i")
		} else {
			s.replace(x, "ie")
		}
	case "s":
		// Delete when the part before the letter before the s has a vowel.
		for i := 0; i < len(s.b)-2; i++ {
			if stemVowel(s.b[i]) {
				s.replace(x, "")
				break
			}
		}
	}
}

func (s *stemmer) step1b() {
	switch x := s.longest("eed", "eedly", "ed", "edly", "ing", "ingly"); x {
	case "eed", "eedly":
		if s.inR1(x) {
			s.replace(x, "ee")
		}
	case "ed", "edly", "ing", "ingly":
		stemPart := s.b[:len(s.b)-len(x)]
		vowel := false
		for _, c := range stemPart {
			if stemVowel(c) {
				vowel = true
				break
			}
		}
		if !vowel {
			return
		}
		s.replace(x, "")
		switch {
		case s.has("at"), s.has("bl"), s.has("iz"):
			s.b = append(s.b, 'e')
		case s.longest("bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt") != "":
			s.b = s.b[:len(s.b)-1]
		case s.isShort():
			s.b = append(s.b, 'e')
		}
	}
}

func (s *stemmer) step1c() {
	n := len(s.b)
	if n > 2 && (s.b[n-1] == 'y' || s.b[n-1] == 'Y') && !stemVowel(s.b[n-2]) {
		s.b[n-1] = 'i'
	}
}

var step2Rules = map[string]string{
	"tional": "tion", "enci": "ence", "anci": "ance", "abli": "able", "entli": "ent",
	"izer": "ize", "ization": "ize", "ational": "ate", "ation": "ate", "ator": "ate",
	"alism": "al", "aliti": "al", "alli": "al", "fulness": "ful", "ousli": "ous",
	"ousness": "ous", "iveness": "ive", "iviti": "ive", "biliti": "ble", "bli": "ble",
	"ogi": "og", "fulli": "ful", "lessli": "less", "li": "",
}

var step2Suffixes = ruleSuffixes(step2Rules)

func ruleSuffixes(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func (s *stemmer) step2() {
	x := s.longest(step2Suffixes...)
	if x == "" || !s.inR1(x) {
		return
	}
	switch x {
	case "ogi":
		if len(s.b) > 3 && s.b[len(s.b)-4] == 'l' {
			s.replace(x, "og")
		}
	case "li":
		if len(s.b) > 2 && strings.IndexByte("cdeghkmnrt", s.b[len(s.b)-3]) >= 0 {
			s.replace(x, "")
		}
	default:
		s.replace(x, step2Rules[x])
	}
}

var step3Rules = map[string]string{
	"tional": "tion", "ational": "ate", "alize": "al", "icate": "ic", "iciti": "ic",
	"ical": "ic", "ful": "", "ness": "", "ative": "",
}

var step3Suffixes = ruleSuffixes(step3Rules)

func (s *stemmer) step3() {
	x := s.longest(step3Suffixes...)
	if x == "" || !s.inR1(x) {
		return
	}
	if x == "ative" && !s.inR2(x) {
		return
	}
	s.replace(x, step3Rules[x])
}

func (s *stemmer) step4() {
	x := s.longest("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement",
		"ment", "ent", "ism", "ate", "iti", "ous", "ive", "ize", "ion")
	if x == "" || !s.inR2(x) {
		return
	}
	if x == "ion" {
		n := len(s.b) - 3
		if n < 1 || (s.b[n-1] != 's' && s.b[n-1] != 't') {
			return
		}
	}
	s.replace(x, "")
}

func (s *stemmer) step5() {
	switch {
	case s.has("e"):
		if s.inR2("e") || (s.inR1("e") && !s.shortSyllableEnding(len(s.b)-1)) {
			s.b = s.b[:len(s.b)-1]
		}
	case s.has("l"):
		if s.inR2("l") && len(s.b) > 1 && s.b[len(s.b)-2] == 'l' {
			s.b = s.b[:len(s.b)-1]
		}
	}
}
