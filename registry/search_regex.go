package registry

import (
	"fmt"
	"regexp"
)

// searchRegex matches query, a Go regular expression, against tool names and
// descriptions. A name is tried alone and as server_name, the gateway's
// default name for it, so "^github_create" finds github's create_issue. It
// is case-insensitive unless the expression turns that off with (?-i). A
// name match ranks before a description-only match; a tool matching in both
// ranks before one matching in its name alone.
func (ix *Index) searchRegex(query string, opts SearchOptions) ([]Hit, error) {
	re, err := regexp.Compile("(?i)" + query)
	if err != nil {
		return nil, fmt.Errorf("compiling search pattern %q: %w", query, err)
	}
	var keys []uint64
	for d := range ix.docs {
		doc := &ix.docs[d]
		if opts.Server != "" && doc.Server != opts.Server {
			continue
		}
		var score float32
		if re.MatchString(doc.Name) || re.MatchString(ix.qualified[d]) {
			score += 2
		}
		if re.MatchString(doc.Description) {
			score++
		}
		if score > 0 {
			keys = append(keys, ix.rankKey(int32(d), score))
		}
	}
	return ix.top(keys, opts.Limit), nil
}
