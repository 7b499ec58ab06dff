package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchSearch(t *testing.T) {
	dir := t.TempDir()
	catalog := filepath.Join(dir, "catalog.json")
	queries := filepath.Join(dir, "queries.jsonl")
	os.WriteFile(catalog, []byte(`{"version":1,"servers":{"github":{"tools":[
		{"name":"create_issue","description":"Create a new issue."},
		{"name":"list_commits","description":"List commits of a branch."}]}}}`), 0o600)
	os.WriteFile(queries, []byte(`{"query":"open a new issue","relevant":["github/create_issue"]}
{"query":"commits","relevant":["github/list_commits"]}
`), 0o600)

	var out bytes.Buffer
	if err := benchSearch([]string{"--catalog", catalog, "--queries", queries, "--k", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"catalog   2 tools, 1 servers", "queries   2", "R@1 1.000  R@5 1.000  R@10 1.000  MRR 1.000", "limit 1)"} {
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
