package cachefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchEntries is a large but plausible cache: 50 servers of 40 tools, each
// tool with a description and a schema of six described properties
// (about 1 KB per tool, 2,000 tools).
func benchEntries(servers, tools int) map[string]*Entry {
	entries := make(map[string]*Entry, servers)
	desc := strings.Repeat("Does something useful with the given arguments. ", 4)
	for s := range servers {
		e := &Entry{
			ConfigHash: fmt.Sprintf("%064x", s),
			Resources:  []*mcp.Resource{{URI: fmt.Sprintf("file:///srv/%d/readme", s), Name: "readme", Description: "Read me"}},
			Prompts:    []*mcp.Prompt{},
			CachedAt:   time.UnixMilli(1767225600000),
		}
		for t := range tools {
			props := map[string]any{}
			for p := range 6 {
				props[fmt.Sprintf("param_%d", p)] = map[string]any{
					"type":        []string{"string", "integer", "boolean"}[p%3],
					"description": "The value of this parameter, which controls one aspect of the call.",
				}
			}
			e.Tools = append(e.Tools, &mcp.Tool{
				Name:        fmt.Sprintf("tool_%d", t),
				Description: desc,
				InputSchema: map[string]any{"type": "object", "properties": props, "required": []any{"param_0", "param_1"}},
				Annotations: &mcp.ToolAnnotations{ReadOnlyHint: t%2 == 0},
			})
		}
		entries[fmt.Sprintf("server-%02d", s)] = e
	}
	return entries
}

func benchFile(b *testing.B) (string, map[string]*Entry) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "mcp-cache.json")
	entries := benchEntries(50, 40)
	if err := Open(path, nil).Put(entries); err != nil {
		b.Fatal(err)
	}
	return path, entries
}

// BenchmarkRead is the start of a daemon: a new File reads and decodes the
// whole 50-server / 2,000-tool file.
func BenchmarkRead(b *testing.B) {
	path, _ := benchFile(b)
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		entries, err := Open(path, nil).Read()
		if err != nil || len(entries) != 50 || len(entries["server-07"].Tools) != 40 {
			b.Fatalf("Read = %d entries, %v", len(entries), err)
		}
	}
}

// BenchmarkLookupAll is the same start done server by server: 50 Lookups
// on a new File.
func BenchmarkLookupAll(b *testing.B) {
	path, entries := benchFile(b)
	now := time.UnixMilli(1767225600000)
	b.ReportAllocs()
	for b.Loop() {
		f := Open(path, &Options{Now: func() time.Time { return now }})
		for name, e := range entries {
			if _, ok := f.Lookup(name, e.ConfigHash); !ok {
				b.Fatalf("miss for %s", name)
			}
		}
	}
}

// BenchmarkLookupMiss is a Lookup whose hash does not match.
func BenchmarkLookupMiss(b *testing.B) {
	path, _ := benchFile(b)
	f := Open(path, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := f.Lookup("server-07", "other"); ok {
			b.Fatal("hit")
		}
	}
}

// BenchmarkPut replaces one server's 40-tool entry in the 50-server file:
// lock, read, merge, write, fsync, rename.
func BenchmarkPut(b *testing.B) {
	path, entries := benchFile(b)
	f := Open(path, nil)
	one := map[string]*Entry{"server-07": entries["server-07"]}
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Put(one); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutAfterOtherWriter is Put when another process wrote last, so
// the file must be parsed again.
func BenchmarkPutAfterOtherWriter(b *testing.B) {
	path, entries := benchFile(b)
	f := Open(path, nil)
	one := map[string]*Entry{"server-07": entries["server-07"]}
	b.ReportAllocs()
	for b.Loop() {
		f.mu.Lock()
		f.snap = nil
		f.mu.Unlock()
		if err := f.Put(one); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHash(b *testing.B) {
	id := Identity{
		Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
		Env: map[string]string{"A": "${HOME}", "B": "x", "C": "y"}, Cwd: "~/work",
	}
	b.ReportAllocs()
	for b.Loop() {
		if Hash(id) == "" {
			b.Fatal("no hash")
		}
	}
}
