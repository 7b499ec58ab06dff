package search

import "slices"

// Boilerplate parameters: a large server may give every tool the same
// options (subscription, tenant, auth method, retry settings). Their words
// say nothing about which of its tools a query wants, and, being in
// hundreds of schemas, they would also make the same words look common
// where they are distinctive ("list my resource groups" for group_list).
const (
	boilerplateTools = 12  // servers with fewer tools have none
	boilerplateShare = 0.6 // share of a server's tools whose schemas have the word
)

// dropBoilerplate removes, from the schema fields of each large server's
// tools, the words most of that server's schemas share.
func (ix *Index) dropBoilerplate(docs []Doc, all []fieldTerms) {
	byServer := map[string][]int{}
	for i := range docs {
		byServer[docs[i].Server] = append(byServer[docs[i].Server], i)
	}
	var count, seen []int32 // by term: tools of the server that have it; the last tool counted
	var touched []int32
	schema := [...]searchField{fieldParam, fieldParamDescription}
	for _, tools := range byServer {
		if len(tools) < boilerplateTools {
			continue
		}
		if count == nil {
			count, seen = make([]int32, len(ix.terms)), make([]int32, len(ix.terms))
		}
		for _, i := range tools {
			for _, fl := range schema {
				for _, t := range all[i][fl] {
					if seen[t] != int32(i)+1 {
						seen[t] = int32(i) + 1
						if count[t] == 0 {
							touched = append(touched, t)
						}
						count[t]++
					}
				}
			}
		}
		limit := int32(boilerplateShare * float64(len(tools)))
		for _, i := range tools {
			for _, fl := range schema {
				all[i][fl] = slices.DeleteFunc(all[i][fl], func(t int32) bool { return count[t] >= limit })
			}
		}
		for _, t := range touched {
			count[t] = 0
		}
		touched = touched[:0]
	}
}
