package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
