package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/registry/search"
)

func TestBenchSearch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catalog := filepath.Join(dir, "catalog.json")
	queries := filepath.Join(dir, "queries.jsonl")
	os.WriteFile(catalog, []byte(`{"version":1,"servers":{"github":{"tools":[
		{"name":"create_issue","description":"Create a new issue."},
		{"name":"list_commits","description":"List commits of a branch."}]}}}`), 0o600)
	os.WriteFile(queries, []byte(`{"query":"open a new issue","relevant":["github/create_issue"],"level":2}
{"query":"commits","relevant":["github/list_commits"]}
`), 0o600)

	var out bytes.Buffer
	if err := benchSearch([]string{"--catalog", catalog, "--queries", queries, "--k", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"catalog   2 tools, 1 servers", "queries   2", "R@1 1.000  R@5 1.000  R@10 1.000  MRR 1.000", "limit 1)",
		"  level 2  1 queries  R@5 1.000  MRR 1.000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}

	for _, args := range [][]string{
		{"--catalog", catalog},
		{"--catalog", filepath.Join(dir, "missing.json"), "--queries", queries},
		{"--catalog", queries, "--queries", queries},
	} {
		if err := benchSearch(args, &bytes.Buffer{}); err == nil {
			t.Errorf("benchSearch(%q) succeeded, want an error", args)
		}
	}
}

// TestBenchSearchExplain: --explain shows a missed query with why its
// first result and the relevant tool scored as they did.
func TestBenchSearchExplain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catalog := filepath.Join(dir, "catalog.json")
	queries := filepath.Join(dir, "queries.jsonl")
	os.WriteFile(catalog, []byte(`{"version":1,"servers":{"github":{"tools":[
		{"name":"create_issue","description":"Create a new issue."},
		{"name":"list_issues","description":"List issues of a repository."}]}}}`), 0o600)
	os.WriteFile(queries, []byte(`{"query":"list the issues","relevant":["github/create_issue"]}
`), 0o600)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"bench", "search", "--catalog", catalog, "--queries", queries, "--explain", "3"}, nil, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"miss: list the issues", "#1 github/list_issues: score ", "#2 github/create_issue (relevant): score ", "  list "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// The bench's report, byte for byte: figures, levels in order, the limit's
// own recall when it is not 1, 5 or 10, and each miss.
func TestWriteBenchReport(t *testing.T) {
	rep := &search.BenchReport{
		Tools: 3, Servers: 1, Queries: 4, Unknown: 1, K: 2,
		RecallAt1: 0.25, RecallAt5: 0.5, RecallAt10: 0.5, RecallAtK: 0.25, MRR: 1.0 / 3,
		Build: 1234567 * time.Nanosecond, P50: 12345 * time.Nanosecond, P99: 23456 * time.Nanosecond, Max: 34567 * time.Nanosecond,
		ByLevel: map[int]*search.LevelFigures{2: {Queries: 2, RecallAt5: 0.5, MRR: 0.5}, 1: {Queries: 1, RecallAt5: 1, MRR: 1.0 / 3}},
		Misses: []search.BenchMiss{
			{Query: "list the issues", First: "github/list_issues", FirstWhy: search.Explanation{Score: 1.686},
				Relevant: "github/create_issue", Rank: 3, RelevantWhy: search.Explanation{Score: 0.351}},
			{Query: "commits", First: "github/list_commits", FirstWhy: search.Explanation{Score: 1.246},
				Relevant: "github/create_issue"},
			{Query: "gone", First: "github/list_commits", FirstWhy: search.Explanation{Score: 0.5}},
		},
	}
	var b bytes.Buffer
	writeBenchReport(&b, rep)
	want := `catalog   3 tools, 1 servers; index built in 1.235ms
queries   4 (1 name no tool of the catalog, counted as misses)
R@1 0.250  R@5 0.500  R@10 0.500  R@2 0.250  MRR 0.333
  level 1  1 queries  R@5 1.000  MRR 0.333
  level 2  2 queries  R@5 0.500  MRR 0.500
latency   p50 12.3µs  p99 23.5µs  max 34.6µs  (per query, limit 2)

miss: list the issues
#1 github/list_issues: score 1.686
#3 github/create_issue (relevant): score 0.351

miss: commits
#1 github/list_commits: score 1.246
unranked github/create_issue (relevant): score 0.000

miss: gone
#1 github/list_commits: score 0.500
`
	if b.String() != want {
		t.Errorf("report\n%s\nwant\n%s", b.String(), want)
	}
}
