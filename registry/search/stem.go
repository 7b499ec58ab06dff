package search

import "github.com/kljensen/snowball/english"

// stem reduces a lower-case English word to its stem with the Porter2
// (Snowball English) algorithm, so that "searching", "searches" and
// "searched" all index as "search". Words with anything but a-z, and words
// of two letters or fewer, are returned unchanged. Indexes stem each word
// of a catalogue once (Index.stems).
func stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	return english.Stem(w, true)
}
