package search

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// BenchReport is what RunBench measured.
type BenchReport struct {
	Tools, Servers int
	Queries        int
	Unknown        int // queries none of whose relevant tools is in the catalog
	K              int // the result limit of the timed searches, and of RecallAtK

	RecallAt1, RecallAt5, RecallAt10, RecallAtK float64
	MRR                                         float64 // over the whole ranking

	Build         time.Duration // NewIndex
	P50, P99, Max time.Duration // per query, Search with Limit K

	// ByLevel has R@5 and MRR per "level" of the queries that have one.
	ByLevel map[int]*LevelFigures

	// Misses are queries whose first result is not relevant, explained
	// (as many as BenchOptions.Explain asks, in the queries' order).
	Misses []BenchMiss
}

// BenchMiss is a query whose first result is not relevant, with why that
// result and the relevant tool ranked best scored as they did.
type BenchMiss struct {
	Query    string
	First    string // server/tool
	FirstWhy Explanation
	// Relevant is the relevant tool ranked best, at Rank (from 1); when
	// the search ranks none, the first the query names, with Rank 0.
	// Empty when that tool is not in the catalog.
	Relevant    string
	Rank        int
	RelevantWhy Explanation
}

// LevelFigures are the figures of the queries of one level.
type LevelFigures struct {
	Queries   int
	RecallAt5 float64
	MRR       float64
}

// BenchOptions tune RunBench; nil means defaults.
type BenchOptions struct {
	K int // result limit of the timed searches; 0 = 10
	// Explain, if positive, is how many of the queries whose first
	// result is not relevant the report explains (BenchReport.Misses).
	Explain int
}

// RunBench measures the search ranking on a catalog in the metadata
// cache's shape ({"version":1,"servers":{NAME:{"tools":[...]}}}) and JSON
// Lines queries ({"query": "...", "relevant": ["server/tool", ...]}). A query
// is a hit at k when any relevant tool is among the first k results. It
// builds the index with NewIndex and searches with Index.Search, as the
// gateway does.
func RunBench(catalog, queries io.Reader, opts *BenchOptions) (*BenchReport, error) {
	k := 10
	if opts != nil && opts.K > 0 {
		k = opts.K
	}
	docs, servers, err := readBenchCatalog(catalog)
	if err != nil {
		return nil, err
	}
	qs, err := readBenchQueries(queries)
	if err != nil {
		return nil, err
	}
	rep, err := runSearchBench(docs, servers, qs, k, &defaultParams)
	if err == nil && opts != nil && opts.Explain > 0 {
		rep.Misses = explainMisses(docs, qs, opts.Explain)
	}
	return rep, err
}

// explainMisses explains up to n queries whose first result is not
// relevant: that result and the first relevant one.
func explainMisses(docs []Doc, qs []benchQuery, n int) []BenchMiss {
	var misses []BenchMiss
	ix := NewIndex(docs)
	ids := make(map[string]int, len(docs))
	for i, d := range docs {
		ids[d.Server+"/"+d.Name] = i
	}
	name := func(d int) string { return docs[d].Server + "/" + docs[d].Name }
	for _, q := range qs {
		if n == 0 {
			break
		}
		hits, err := ix.Search(q.Query, Options{})
		if err != nil || len(hits) == 0 {
			continue
		}
		rank := -1
		for r, h := range hits {
			if slices.Contains(q.Relevant, name(h.Doc)) {
				rank = r
				break
			}
		}
		if rank == 0 {
			continue
		}
		n--
		m := BenchMiss{Query: q.Query, First: name(hits[0].Doc), FirstWhy: ix.Explain(q.Query, hits[0].Doc)}
		if rank > 0 {
			m.Relevant, m.Rank, m.RelevantWhy = name(hits[rank].Doc), rank+1, ix.Explain(q.Query, hits[rank].Doc)
		} else if d, ok := ids[q.Relevant[0]]; ok {
			m.Relevant, m.RelevantWhy = q.Relevant[0], ix.Explain(q.Query, d)
		}
		misses = append(misses, m)
	}
	return misses
}

type benchQuery struct {
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
	Level    *int     `json:"level"` // a class of query, when the file labels them
}

func readBenchCatalog(r io.Reader) (docs []Doc, servers int, err error) {
	var c struct {
		Version int `json:"version"`
		Servers map[string]struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"servers"`
	}
	if err := json.NewDecoder(r).Decode(&c); err != nil {
		return nil, 0, fmt.Errorf("reading catalog: %w", err)
	}
	if c.Version != 1 {
		return nil, 0, fmt.Errorf("reading catalog: version %d, want 1", c.Version)
	}
	names := make([]string, 0, len(c.Servers))
	for name := range c.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, t := range c.Servers[name].Tools {
			docs = append(docs, Doc{Server: name, Name: t.Name, Description: t.Description, Schema: t.InputSchema})
		}
	}
	if len(docs) == 0 {
		return nil, 0, errors.New("reading catalog: no tools")
	}
	return docs, len(names), nil
}

func readBenchQueries(r io.Reader) ([]benchQuery, error) {
	var qs []benchQuery
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var q benchQuery
		if err := json.Unmarshal([]byte(text), &q); err != nil {
			return nil, fmt.Errorf("reading queries: line %d: %w", line, err)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading queries: %w", err)
	}
	if len(qs) == 0 {
		return nil, errors.New("reading queries: no queries")
	}
	return qs, nil
}

// runSearchBench scores qs against an index of docs built with p.
func runSearchBench(docs []Doc, servers int, qs []benchQuery, k int, p *rankParams) (*BenchReport, error) {
	start := time.Now()
	ix := newIndex(docs, p)
	rep := &BenchReport{Tools: len(docs), Servers: servers, Queries: len(qs), K: k, Build: time.Since(start)}
	if err := rep.rank(ix, qs); err != nil {
		return nil, err
	}
	// Latency: the search the gateway makes, with a result limit.
	lat := make([]time.Duration, len(qs))
	for i, q := range qs {
		t := time.Now()
		if _, err := ix.Search(q.Query, Options{Limit: k}); err != nil {
			return nil, fmt.Errorf("searching %q: %w", q.Query, err)
		}
		lat[i] = time.Since(t)
	}
	slices.Sort(lat)
	rep.P50 = lat[len(lat)/2]
	rep.P99 = lat[min(len(lat)-1, len(lat)*99/100)]
	rep.Max = lat[len(lat)-1]
	return rep, nil
}

// rank runs every query and fills in the recall and MRR figures, overall
// and per level.
func (rep *BenchReport) rank(ix *Index, qs []benchQuery) error {
	ids := make(map[string]int, len(ix.docs))
	for i, d := range ix.docs {
		ids[d.Server+"/"+d.Name] = i
	}
	relevant := make(map[int]bool)
	var hits1, hits5, hits10, hitsK int
	var rr float64
	for _, q := range qs {
		lv := rep.level(q.Level)
		clear(relevant)
		for _, name := range q.Relevant {
			if i, ok := ids[name]; ok {
				relevant[i] = true
			}
		}
		if len(relevant) == 0 {
			rep.Unknown++
			continue
		}
		hits, err := ix.Search(q.Query, Options{})
		if err != nil {
			return fmt.Errorf("searching %q: %w", q.Query, err)
		}
		rank := slices.IndexFunc(hits, func(h Hit) bool { return relevant[h.Doc] })
		if rank < 0 {
			continue
		}
		rr += 1 / float64(rank+1)
		if lv != nil {
			lv.MRR += 1 / float64(rank+1)
			lv.RecallAt5 += b2f(rank < 5)
		}
		hits1 += b2i(rank < 1)
		hits5 += b2i(rank < 5)
		hits10 += b2i(rank < 10)
		hitsK += b2i(rank < rep.K)
	}
	n := float64(len(qs))
	rep.RecallAt1, rep.RecallAt5 = float64(hits1)/n, float64(hits5)/n
	rep.RecallAt10, rep.RecallAtK = float64(hits10)/n, float64(hitsK)/n
	rep.MRR = rr / n
	for _, lv := range rep.ByLevel {
		lv.RecallAt5 /= float64(lv.Queries)
		lv.MRR /= float64(lv.Queries)
	}
	return nil
}

// level returns the figures of a query's level (counting the query), nil
// for a query without one.
func (rep *BenchReport) level(l *int) *LevelFigures {
	if l == nil {
		return nil
	}
	if rep.ByLevel == nil {
		rep.ByLevel = map[int]*LevelFigures{}
	}
	lv := rep.ByLevel[*l]
	if lv == nil {
		lv = &LevelFigures{}
		rep.ByLevel[*l] = lv
	}
	lv.Queries++
	return lv
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func b2f(b bool) float64 { return float64(b2i(b)) }
