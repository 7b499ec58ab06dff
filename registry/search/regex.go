package search

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// searchRegex matches query, a Go regular expression, against tool names and
// descriptions. A name is tried alone and as server_name, the gateway's
// default name for it, so "^github_create" finds github's create_issue. It
// is case-insensitive unless the expression turns that off with (?-i). A
// name match ranks before a description-only match; a tool matching in both
// ranks before one matching in its name alone.
func (ix *Index) searchRegex(query string, opts Options) ([]Hit, error) {
	if len(query) > MaxQueryBytes {
		// A pattern cannot be cut as words are: it is refused.
		return nil, fmt.Errorf("the pattern is %d bytes; at most %d", len(query), MaxQueryBytes)
	}
	re, err := regexp.Compile("(?i)" + query)
	if err != nil {
		return nil, fmt.Errorf("compiling search pattern %q: %w", query, err)
	}
	// A literal every match contains rules most tools out with a substring
	// search, much faster than running the expression.
	var must string
	if parsed, err := syntax.Parse("(?i)"+query, syntax.Perl); err == nil {
		must = strings.ToLower(requiredLiteral(parsed))
	}
	var keys []uint64
	lower := ix.lower()
	for d := range ix.docs {
		doc := &ix.docs[d]
		if opts.Server != "" && doc.Server != opts.Server {
			continue
		}
		if len(must) > 1 && lower[d] != "" && !strings.Contains(lower[d], must) {
			continue
		}
		var score float32
		if re.MatchString(doc.Name) || re.MatchString(ix.qualified[d]) {
			score += 2
		}
		if re.MatchString(doc.Description) || matchesAny(re, doc.Keywords) {
			score++
		}
		if score > 0 {
			keys = append(keys, ix.rankKey(int32(d), score))
		}
	}
	return ix.top(keys, opts.Limit), nil
}

// requiredLiteral returns a string that every match of re contains, the
// longest it finds, or "".
func requiredLiteral(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best, run := "", ""
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral {
				run += string(sub.Rune)
			} else {
				run = ""
				if s := requiredLiteral(sub); len(s) > len(best) {
					best = s
				}
			}
			if len(run) > len(best) {
				best = run
			}
		}
		return best
	}
	return ""
}

func matchesAny(re *regexp.Regexp, words []string) bool {
	for _, w := range words {
		if re.MatchString(w) {
			return true
		}
	}
	return false
}
