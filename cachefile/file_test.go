package cachefile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// adapterFixture is testdata/adapter-cache.json, written by the adapter's
// own saveMetadataCache, and the definitions its entries were hashed from.
type adapterFixture struct {
	data    []byte
	env     Env
	hashes  map[string]string
	written time.Time // the entries' cachedAt
}

func loadAdapterFixture(t *testing.T) adapterFixture {
	t.Helper()
	data, err := os.ReadFile("testdata/adapter-cache.json")
	if err != nil {
		t.Fatal(err)
	}
	defsData, err := os.ReadFile("testdata/adapter-cache.defs.json")
	if err != nil {
		t.Fatal(err)
	}
	var defs struct {
		Home        string                     `json:"home"`
		Env         map[string]string          `json:"env"`
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(defsData, &defs); err != nil {
		t.Fatal(err)
	}
	fx := adapterFixture{
		data:    data,
		env:     Env{Home: defs.Home, Lookup: func(n string) (string, bool) { v, ok := defs.Env[n]; return v, ok }},
		hashes:  map[string]string{},
		written: time.UnixMilli(1767225600000),
	}
	for name, def := range defs.Definitions {
		var id Identity
		if err := json.Unmarshal(def, &id); err != nil {
			t.Fatal(err)
		}
		h, err := HashEnv(id, fx.env)
		if err != nil {
			t.Fatal(err)
		}
		fx.hashes[name] = h
	}
	return fx
}

// clock is an injectable Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("file does not parse: %v\n%s", err, data)
	}
	return v
}

func rawServers(t *testing.T, path string) map[string]json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var top struct {
		Version  int                        `json:"version"`
		Servers  map[string]json.RawMessage `json:"servers"`
		Unparsed json.RawMessage            `json:"-"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatalf("file does not parse: %v\n%s", err, data)
	}
	if top.Version != 1 {
		t.Fatalf("version = %d, want 1", top.Version)
	}
	return top.Servers
}

func TestReadAdapterFile(t *testing.T) {
	fx := loadAdapterFixture(t)
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	writeFile(t, path, fx.data)
	clk := &clock{fx.written.Add(30 * time.Second)}
	f := Open(path, &Options{Now: clk.now})

	entries, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("Read: %d entries, want 2", len(entries))
	}
	fsEntry := entries["filesystem"]
	if fsEntry.ConfigHash != fx.hashes["filesystem"] {
		t.Fatalf("filesystem configHash %s, want %s", fsEntry.ConfigHash, fx.hashes["filesystem"])
	}
	if !fsEntry.CachedAt.Equal(fx.written) {
		t.Errorf("CachedAt = %v, want %v", fsEntry.CachedAt, fx.written)
	}
	var names []string
	for _, tool := range fsEntry.Tools {
		names = append(names, tool.Name)
	}
	if got := strings.Join(names, ","); got != "read_file,app_only,legacy_ui,bad_ui" {
		t.Fatalf("tools = %s", got)
	}
	rf := fsEntry.Tools[0]
	// Schemas stay JSON (a map tree takes several times the memory).
	raw, ok := rf.InputSchema.(json.RawMessage)
	var schema map[string]any
	if !ok || json.Unmarshal(raw, &schema) != nil || schema["type"] != "object" || schema["required"].([]any)[0] != "path" {
		t.Fatalf("read_file inputSchema = %#v", rf.InputSchema)
	}
	if _, ok := rf.OutputSchema.(json.RawMessage); !ok {
		t.Errorf("read_file outputSchema = %#v, want JSON", rf.OutputSchema)
	}
	if rf.Description != "Read a file <from disk> & return it" || rf.OutputSchema == nil {
		t.Errorf("read_file = %+v", rf)
	}
	wantUI := map[string]any{"resourceUri": "ui://fs/viewer", "visibility": []any{"model", "app"}, "pi-mcp-adapter.streamMode": "eager"}
	if !reflect.DeepEqual(rf.Meta["ui"], wantUI) {
		t.Errorf("read_file _meta.ui = %#v, want %#v", rf.Meta["ui"], wantUI)
	}
	if len(fsEntry.Resources) != 2 || fsEntry.Resources[0].URI != "file:///tmp/a.txt" || fsEntry.Resources[0].Description != "A file" {
		t.Errorf("resources = %+v", fsEntry.Resources)
	}
	if len(fsEntry.Prompts) != 2 || len(fsEntry.Prompts[0].Arguments) != 2 || !fsEntry.Prompts[0].Arguments[0].Required {
		t.Errorf("prompts = %+v", fsEntry.Prompts)
	}
	if fsEntry.Instructions != "Use read_file for files." || fsEntry.TTL != nil || len(fsEntry.Extra) != 0 {
		t.Errorf("filesystem entry = %+v", fsEntry)
	}
	remote := entries["remote"]
	if remote.TTL == nil || *remote.TTL != time.Minute || remote.CacheScope != "private" || remote.Resources == nil || len(remote.Resources) != 0 {
		t.Errorf("remote entry = %+v", remote)
	}

	// Validity, as the adapter's isServerCacheValid decides it.
	if _, ok := f.Lookup("filesystem", fx.hashes["filesystem"]); !ok {
		t.Error("Lookup(filesystem) missed")
	}
	if _, ok := f.Lookup("remote", fx.hashes["remote"]); !ok {
		t.Error("Lookup(remote) missed within its 60s ttlMs")
	}
	if _, ok := f.Lookup("filesystem", fx.hashes["remote"]); ok {
		t.Error("Lookup with another server's hash hit")
	}
	clk.t = fx.written.Add(time.Minute)
	if _, ok := f.Lookup("remote", fx.hashes["remote"]); ok {
		t.Error("Lookup(remote) hit at its ttlMs")
	}
	if _, ok := f.Lookup("filesystem", fx.hashes["filesystem"]); !ok {
		t.Error("Lookup(filesystem) missed after a minute")
	}
}

// TestPutKeepsOtherEntries checks that entries we do not write stay as the
// adapter wrote them, byte for byte, and the entry we write is in the
// adapter's shape.
func TestPutKeepsOtherEntries(t *testing.T) {
	fx := loadAdapterFixture(t)
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	writeFile(t, path, fx.data)
	before := rawServers(t, path)

	f := Open(path, nil)
	ours := &Entry{
		ConfigHash: Hash(Identity{Command: "mcpgw-test"}),
		Tools:      []*mcp.Tool{{Name: "ping", InputSchema: map[string]any{"type": "object"}}},
		Resources:  []*mcp.Resource{},
		CachedAt:   time.UnixMilli(1767225600123),
	}
	if err := f.Put(map[string]*Entry{"ours": ours}); err != nil {
		t.Fatal(err)
	}
	after := rawServers(t, path)
	if len(after) != 3 {
		t.Fatalf("%d entries after Put, want 3", len(after))
	}
	for name, raw := range before {
		if !bytes.Equal(after[name], raw) {
			t.Errorf("entry %q changed:\nbefore %s\nafter  %s", name, raw, after[name])
		}
	}
	want := `{"configHash":"` + ours.ConfigHash + `","tools":[{"name":"ping","inputSchema":{"type":"object"}}],"resources":[],"cachedAt":1767225600123}`
	if got := string(after["ours"]); got != want {
		t.Errorf("our entry\n got %s\nwant %s", got, want)
	}
}

func TestUnknownFieldsPreserved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	theirs := `{"configHash":"h2","tools":[{"name":"t","x-tool-ext":{"a":[1,2]}}],"resources":[],"x-writer":"other","cachedAt":1767225600000,"x-nested":{"z":1,"a":[true,null]}}`
	ours := `{"configHash":"h1","tools":[{"name":"old","inputSchema":{"type":"object"}}],"resources":[],"x-future":{"k":"v"},"ttlMs":-5,"cachedAt":1767225600000}`
	writeFile(t, path, []byte(`{"version":1,"servers":{"theirs":`+theirs+`,"ours":`+ours+`},"x-top":[1]}`))

	f := Open(path, nil)
	entries, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	e := entries["ours"]
	if e == nil || string(e.Extra["x-future"]) != `{"k":"v"}` || string(e.Extra["ttlMs"]) != "-5" || e.TTL != nil {
		t.Fatalf("ours = %+v", e)
	}
	if string(entries["theirs"].Extra["x-writer"]) != `"other"` {
		t.Fatalf("theirs extra = %v", entries["theirs"].Extra)
	}
	e.Tools = []*mcp.Tool{{Name: "new", InputSchema: map[string]any{"type": "object"}}}
	e.CachedAt = time.Time{}
	if err := f.Put(map[string]*Entry{"ours": e}); err != nil {
		t.Fatal(err)
	}
	got := rawServers(t, path)
	if string(got["theirs"]) != theirs {
		t.Errorf("theirs changed:\n got %s\nwant %s", got["theirs"], theirs)
	}
	var o map[string]any
	if err := json.Unmarshal(got["ours"], &o); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o["x-future"], map[string]any{"k": "v"}) || o["ttlMs"] != -5.0 {
		t.Errorf("ours lost its unknown fields: %s", got["ours"])
	}
	if tools := o["tools"].([]any); len(tools) != 1 || tools[0].(map[string]any)["name"] != "new" {
		t.Errorf("ours tools = %v", o["tools"])
	}
	if top := readJSON(t, path); !reflect.DeepEqual(top["x-top"], []any{1.0}) {
		t.Errorf("top-level field lost: %v", top)
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	ro := true
	ttl := 90 * time.Second
	at := time.UnixMilli(1767225600456)
	in := &Entry{
		ConfigHash: "abc",
		Tools: []*mcp.Tool{
			{
				Name:        "search",
				Title:       "Search",
				Description: "Find <things> & more",
				InputSchema: map[string]any{
					"type": "object",
					"properties": map[string]any{
						"q":     map[string]any{"type": "string", "minLength": 1.0},
						"limit": map[string]any{"type": "integer", "default": 10.0},
						"filters": map[string]any{
							"type":  "array",
							"items": map[string]any{"type": "object", "properties": map[string]any{"k": map[string]any{"enum": []any{"a", "b"}}}},
						},
					},
					"required":             []any{"q"},
					"additionalProperties": false,
				},
				OutputSchema: map[string]any{"type": "object"},
				Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: ro, Title: "Searcher"},
				Meta:         mcp.Meta{"ui": map[string]any{"resourceUri": "ui://s/app", "visibility": []any{"app"}}},
			},
			{Name: "raw", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"number"}}}`)},
			{Name: ""}, // dropped
			nil,        // dropped
		},
		Resources: []*mcp.Resource{
			{URI: "file:///a", Name: "a", Description: "A", MIMEType: "text/plain", Size: 12},
			{URI: "", Name: "no-uri"}, // dropped
		},
		Prompts:      []*mcp.Prompt{{Name: "p", Arguments: []*mcp.PromptArgument{{Name: "x", Required: true}, {Description: "no name"}}}},
		Instructions: "be nice",
		TTL:          &ttl,
		CacheScope:   "public",
		CachedAt:     at,
	}
	if err := Open(path, nil).Put(map[string]*Entry{"s": in}); err != nil {
		t.Fatal(err)
	}
	raw := rawServers(t, path)["s"]
	for _, want := range []string{`"uiResourceUri":"ui://s/app"`, `"uiVisibility":["app"]`, `"cachedAt":1767225600456`, `"ttlMs":90000`, `Find <things> & more`} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("entry lacks %s:\n%s", want, raw)
		}
	}

	entries, err := Open(path, nil).Read()
	if err != nil {
		t.Fatal(err)
	}
	out := entries["s"]
	if out == nil {
		t.Fatal("entry missing")
	}
	if len(out.Tools) != 2 || len(out.Resources) != 1 || len(out.Prompts) != 1 || len(out.Prompts[0].Arguments) != 1 {
		t.Fatalf("counts: %d tools, %d resources, %+v prompts", len(out.Tools), len(out.Resources), out.Prompts)
	}
	// jsonOf normalises through a generic decode: a json.RawMessage schema
	// comes back as a map, with keys in another order.
	jsonOf := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var g any
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(g)
		return string(b)
	}
	for i := range out.Tools {
		if g, w := jsonOf(out.Tools[i]), jsonOf(in.Tools[i]); g != w {
			t.Errorf("tool %d:\n got %s\nwant %s", i, g, w)
		}
	}
	if g, w := jsonOf(out.Resources[0]), jsonOf(in.Resources[0]); g != w {
		t.Errorf("resource:\n got %s\nwant %s", g, w)
	}
	if out.Instructions != in.Instructions || *out.TTL != ttl || out.CacheScope != "public" || !out.CachedAt.Equal(at) || out.ConfigHash != "abc" {
		t.Errorf("entry = %+v", out)
	}

	// Writing what was read gives the same entry, and once schemas are
	// maps, the same bytes.
	if err := Open(path, nil).Put(map[string]*Entry{"s": out}); err != nil {
		t.Fatal(err)
	}
	second := rawServers(t, path)["s"]
	if g, w := jsonOf(second), jsonOf(raw); g != w {
		t.Errorf("rewrite changed the entry:\nfirst  %s\nsecond %s", raw, second)
	}
	entries, _ = Open(path, nil).Read()
	if err := Open(path, nil).Put(entries); err != nil {
		t.Fatal(err)
	}
	if third := rawServers(t, path)["s"]; !bytes.Equal(third, second) {
		t.Errorf("rewrite changed the bytes:\nsecond %s\nthird  %s", second, third)
	}
}

// TestAdapterToolsRoundTrip checks that tools the adapter wrote (ui* fields,
// no _meta) keep their ui* fields when we write the entry back.
func TestAdapterToolsRoundTrip(t *testing.T) {
	fx := loadAdapterFixture(t)
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	writeFile(t, path, fx.data)
	before := rawServers(t, path)["filesystem"]
	f := Open(path, nil)
	entries, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Put(map[string]*Entry{"filesystem": entries["filesystem"]}); err != nil {
		t.Fatal(err)
	}
	after := rawServers(t, path)["filesystem"]
	type cachedTool struct {
		Name          string    `json:"name"`
		UIResourceURI *string   `json:"uiResourceUri"`
		UIVisibility  *[]string `json:"uiVisibility"`
		UIStreamMode  *string   `json:"uiStreamMode"`
	}
	var b, a struct {
		Tools []cachedTool `json:"tools"`
	}
	if err := json.Unmarshal(before, &b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(after, &a); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.Tools, b.Tools) {
		t.Errorf("ui fields changed:\nbefore %s\nafter  %s", before, after)
	}
}

func TestCorruptFileIsMissThenRewritten(t *testing.T) {
	fx := loadAdapterFixture(t)
	for name, content := range map[string]string{
		"empty":            "",
		"whitespace":       "  \n",
		"truncated":        string(fx.data[:len(fx.data)/2]),
		"truncated end":    string(fx.data[:len(fx.data)-1]),
		"not json":         "\x00\xff garbage",
		"null":             "null",
		"array":            "[1,2]",
		"version 2":        `{"version":2,"servers":{"x":{"configHash":"h","tools":[],"resources":[],"cachedAt":1}}}`,
		"version string":   `{"version":"1","servers":{}}`,
		"no version":       `{"servers":{}}`,
		"no servers":       `{"version":1}`,
		"servers is array": `{"version":1,"servers":[]}`,
		"servers is null":  `{"version":1,"servers":null}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mcp-cache.json")
			writeFile(t, path, []byte(content))
			f := Open(path, nil)
			entries, err := f.Read()
			if err != nil || entries == nil || len(entries) != 0 {
				t.Fatalf("Read = %v, %v; want empty map, nil", entries, err)
			}
			if _, ok := f.Lookup("x", "h"); ok {
				t.Fatal("Lookup hit in a corrupt file")
			}
			if s := f.Stats(); s.Misses != 2 || s.Corrupt != 1 || s.Reads != 2 {
				t.Fatalf("stats = %+v, want 2 reads, 2 misses, 1 corrupt", s)
			}
			e := &Entry{ConfigHash: "h", Tools: []*mcp.Tool{{Name: "t", InputSchema: map[string]any{"type": "object"}}}, Resources: []*mcp.Resource{}}
			if err := f.Put(map[string]*Entry{"x": e}); err != nil {
				t.Fatal(err)
			}
			servers := rawServers(t, path)
			if len(servers) != 1 || servers["x"] == nil {
				t.Fatalf("rewritten file has %v", servers)
			}
			if got, ok := Open(path, nil).Lookup("x", "h"); !ok || got.Tools[0].Name != "t" {
				t.Fatalf("Lookup after rewrite = %v, %v", got, ok)
			}
		})
	}
}

func TestCorruptEntryIsMiss(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	good := `{"configHash":"h","tools":[],"resources":[],"cachedAt":1767225600000}`
	writeFile(t, path, []byte(`{"version":1,"servers":{"a":"nope","b":{"configHash":5},"c":{"configHash":"h","tools":"x"},"d":`+good+`}}`))
	f := Open(path, &Options{Now: func() time.Time { return time.UnixMilli(1767225600000) }})
	entries, err := f.Read()
	if err != nil || len(entries) != 1 || entries["d"] == nil {
		t.Fatalf("Read = %v, %v; want only d", entries, err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, ok := f.Lookup(name, "h"); ok {
			t.Errorf("Lookup(%s) hit", name)
		}
	}
	if _, ok := f.Lookup("d", "h"); !ok {
		t.Error("Lookup(d) missed")
	}
	// Put keeps the entries it cannot read.
	if err := f.Put(map[string]*Entry{"e": {ConfigHash: "h"}}); err != nil {
		t.Fatal(err)
	}
	if s := rawServers(t, path); string(s["a"]) != `"nope"` || string(s["c"]) != `{"configHash":"h","tools":"x"}` || len(s) != 5 {
		t.Errorf("servers after Put = %v", s)
	}
}

func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "agent")
	path := filepath.Join(dir, "mcp-cache.json")
	f := Open(path, nil)
	if err := f.Put(map[string]*Entry{"s": {ConfigHash: "h"}}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{
		dir:               0o700 | os.ModeDir,
		filepath.Dir(dir): 0o700 | os.ModeDir,
		path:              0o600,
		path + ".lock":    0o600,
	} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	// An existing file readable by others is replaced by a private one.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Put(map[string]*Entry{"t": {ConfigHash: "h"}}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode() != 0o600 {
		t.Errorf("mode after rewrite %v, want 0600", fi.Mode())
	}
	// No temporary file is left behind.
	names, _ := os.ReadDir(dir)
	if len(names) != 2 {
		t.Errorf("directory holds %v, want the file and its lock", names)
	}
}

func TestNoSecretsWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	t.Setenv("CACHEFILE_TEST_SECRET", "env-var-secret-789")
	id := Identity{
		URL:            "https://mcp.example.com/mcp?key=url-secret-000",
		Headers:        map[string]string{"Authorization": "Bearer header-secret-123", "X-Key": "${CACHEFILE_TEST_SECRET}"},
		Env:            map[string]string{"API_KEY": "env-secret-456"},
		Auth:           "bearer",
		BearerToken:    "bearer-secret-abc",
		BearerTokenEnv: "CACHEFILE_TEST_SECRET",
	}
	h := Hash(id)
	if h == "" {
		t.Fatal("no hash")
	}
	f := Open(path, nil)
	if err := f.Put(map[string]*Entry{"remote": {ConfigHash: h, Tools: []*mcp.Tool{{Name: "t"}}}}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(h)) {
		t.Fatalf("hash not written: %s", data)
	}
	for _, secret := range []string{"secret", "Bearer", "mcp.example.com", "Authorization"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("file contains %q: %s", secret, data)
		}
	}
}

func TestExpiry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	t0 := time.UnixMilli(1767225600000)
	zero := time.Duration(0)
	minute := time.Minute
	if err := Open(path, nil).Put(map[string]*Entry{
		"plain":  {ConfigHash: "h", CachedAt: t0},
		"ttl0":   {ConfigHash: "h", CachedAt: t0, TTL: &zero},
		"ttl1m":  {ConfigHash: "h", CachedAt: t0, TTL: &minute},
		"future": {ConfigHash: "h", CachedAt: t0.Add(time.Hour)},
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		maxAge time.Duration
		age    time.Duration
		want   bool
	}{
		{"plain", 0, 0, true},
		{"plain", 0, 7*24*time.Hour - time.Millisecond, true},
		{"plain", 0, 7 * 24 * time.Hour, true}, // the adapter expires when age > max
		{"plain", 0, 7*24*time.Hour + time.Millisecond, false},
		{"plain", time.Hour, time.Hour, true},
		{"plain", time.Hour, time.Hour + time.Millisecond, false},
		{"plain", -1, 1000 * 24 * time.Hour, true},
		{"ttl0", 0, 0, false},
		{"ttl0", -1, 0, false},
		{"ttl1m", 0, time.Minute - time.Millisecond, true},
		{"ttl1m", 0, time.Minute, false}, // with a TTL the adapter wants age < min(ttl, max)
		{"ttl1m", 30 * time.Second, 30 * time.Second, false},
		{"ttl1m", 30 * time.Second, 29 * time.Second, true},
		{"ttl1m", -1, 59 * time.Second, true},
		{"future", 0, 0, true},
	} {
		f := Open(path, &Options{MaxAge: tc.maxAge, Now: func() time.Time { return t0.Add(tc.age) }})
		_, got := f.Lookup(tc.name, "h")
		if got != tc.want {
			t.Errorf("%s maxAge=%v age=%v: Lookup = %v, want %v", tc.name, tc.maxAge, tc.age, got, tc.want)
		}
		entries, _ := f.Read()
		if v := f.Valid(entries[tc.name], "h"); v != tc.want {
			t.Errorf("%s maxAge=%v age=%v: Valid = %v, want %v", tc.name, tc.maxAge, tc.age, v, tc.want)
		}
	}
	if _, ok := Open(path, &Options{Now: func() time.Time { return t0 }}).Lookup("plain", "other"); ok {
		t.Error("Lookup with another hash hit")
	}
	if _, ok := Open(path, &Options{Now: func() time.Time { return t0 }}).Lookup("plain", ""); ok {
		t.Error("Lookup with an empty hash hit")
	}
}

func TestPutStampsCachedAt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	now := time.UnixMilli(1767225600789)
	f := Open(path, &Options{Now: func() time.Time { return now }})
	if err := f.Put(map[string]*Entry{"s": {ConfigHash: "h"}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(rawServers(t, path)["s"], []byte(`"cachedAt":1767225600789`)) {
		t.Errorf("entry = %s", rawServers(t, path)["s"])
	}
}

func TestPutRejects(t *testing.T) {
	f := Open(filepath.Join(t.TempDir(), "mcp-cache.json"), nil)
	for name, e := range map[string]*Entry{"": {ConfigHash: "h"}, "nil": nil, "nohash": {}} {
		if err := f.Put(map[string]*Entry{name: e}); err == nil {
			t.Errorf("Put(%q) succeeded", name)
		}
	}
	if s := f.Stats(); s.WriteErrors != 3 || s.Writes != 0 {
		t.Errorf("stats = %+v", s)
	}
	if _, err := os.Stat(f.Path()); !os.IsNotExist(err) {
		t.Errorf("file created by failed Puts: %v", err)
	}
}

func TestDelete(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	f := Open(path, nil)
	if err := f.Delete("nothing"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("Delete on a missing file created it")
	}
	if err := f.Put(map[string]*Entry{"a": {ConfigHash: "h"}, "b": {ConfigHash: "h"}, "c": {ConfigHash: "h"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Delete("a", "c", "zzz"); err != nil {
		t.Fatal(err)
	}
	if s := rawServers(t, path); len(s) != 1 || s["b"] == nil {
		t.Fatalf("after Delete: %v", s)
	}
	writes := f.Stats().Writes
	if err := f.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if f.Stats().Writes != writes {
		t.Error("Delete of an absent entry wrote the file")
	}
}

// TestSeesOtherWriters checks that the parse reused between calls is
// dropped when another process (here another File) replaces the file.
func TestSeesOtherWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	t0 := time.UnixMilli(1767225600000)
	opts := &Options{Now: func() time.Time { return t0 }}
	a, b := Open(path, opts), Open(path, opts)
	if _, ok := a.Lookup("s", "h1"); ok {
		t.Fatal("hit in a missing file")
	}
	for i, h := range []string{"h1", "h2", "h3"} {
		if err := b.Put(map[string]*Entry{"s": {ConfigHash: h, CachedAt: t0}}); err != nil {
			t.Fatal(err)
		}
		if _, ok := a.Lookup("s", h); !ok {
			t.Fatalf("write %d: a does not see b's entry %s", i, h)
		}
	}
	// A writer that keeps size and mtime but not the inode (rename).
	data, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	alt := bytes.Replace(data, []byte(`"h3"`), []byte(`"h4"`), 1)
	tmp := path + ".other"
	writeFile(t, tmp, alt)
	if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Lookup("s", "h4"); !ok {
		t.Fatal("a does not see a same-size, same-mtime replacement")
	}
	if got := a.Stats(); got.Hits != 4 || got.Misses != 1 || got.Reads != 5 {
		t.Errorf("stats = %+v", got)
	}
}

func TestReadIOError(t *testing.T) {
	dir := t.TempDir()
	f := Open(dir, nil) // a directory: opens, but cannot be read
	entries, err := f.Read()
	if err == nil || len(entries) != 0 {
		t.Fatalf("Read of a directory = %v, %v; want an error", entries, err)
	}
	if _, ok := f.Lookup("s", "h"); ok {
		t.Fatal("Lookup hit")
	}
	if err := f.Put(map[string]*Entry{"s": {ConfigHash: "h"}}); err == nil {
		t.Fatal("Put over a directory succeeded")
	}
	if s := f.Stats(); s.WriteErrors != 1 {
		t.Errorf("stats = %+v", s)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("PI_CODING_AGENT_DIR", "")
	if got := DefaultPath(); got != "/home/u/.pi/agent/mcp-cache.json" {
		t.Errorf("DefaultPath = %s", got)
	}
	t.Setenv("PI_CODING_AGENT_DIR", "~/agents/pi")
	if got := DefaultPath(); got != "/home/u/agents/pi/mcp-cache.json" {
		t.Errorf("DefaultPath with ~/ = %s", got)
	}
	t.Setenv("PI_CODING_AGENT_DIR", "/srv/pi")
	if got := DefaultPath(); got != "/srv/pi/mcp-cache.json" {
		t.Errorf("DefaultPath with absolute dir = %s", got)
	}
}

// TestAdapterAcceptsOurEntries writes entries with Put and has the real
// adapter load them (gen-hash-vectors.mjs check). It needs node and the npm
// package installed in a scratch directory named by PI_MCP_ADAPTER_DIR (see
// testdata/gen-hash-vectors.mjs), so it is skipped otherwise.
func TestAdapterAcceptsOurEntries(t *testing.T) {
	dir := os.Getenv("PI_MCP_ADAPTER_DIR")
	if dir == "" {
		t.Skip("PI_MCP_ADAPTER_DIR not set")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node")
	}
	script, err := filepath.Abs("testdata/gen-hash-vectors.mjs")
	if err != nil {
		t.Fatal(err)
	}
	v := loadHashVectors(t)
	env := v.env()
	defs := map[string]json.RawMessage{
		"local":  json.RawMessage(`{"command":"npx","args":["-y","pkg"],"env":{"K":"${TOKEN}"},"cwd":"~/w"}`),
		"remote": json.RawMessage(`{"url":"https://${HOST}/mcp","headers":{"Authorization":"Bearer ${TOKEN}"},"exposeResources":false,"auth":false}`),
		"stale":  json.RawMessage(`{"command":"old"}`),
	}
	now := time.UnixMilli(1767225600000)
	entries := map[string]*Entry{}
	for name, def := range defs {
		var id Identity
		if err := json.Unmarshal(def, &id); err != nil {
			t.Fatal(err)
		}
		h, err := HashEnv(id, env)
		if err != nil {
			t.Fatal(err)
		}
		entries[name] = &Entry{
			ConfigHash: h,
			Tools: []*mcp.Tool{
				{Name: "search", Description: "Search", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
				{Name: "app_only", InputSchema: map[string]any{"type": "object"}, Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}},
			},
			Resources: []*mcp.Resource{{URI: "file:///r", Name: "r", Description: "R"}},
			Prompts:   []*mcp.Prompt{{Name: "p"}},
			CachedAt:  now,
		}
	}
	entries["stale"].CachedAt = now.Add(-8 * 24 * time.Hour)
	entries["remote"].Resources = nil

	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	if err := Open(path, nil).Put(entries); err != nil {
		t.Fatal(err)
	}
	side, _ := json.Marshal(map[string]any{"definitions": defs, "env": v.Env, "home": v.Home, "now": now.UnixMilli()})
	writeFile(t, path+".defs.json", side)
	cmd := exec.Command(node, script, "check", path)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var report struct {
		Loaded  bool `json:"loaded"`
		Servers map[string]struct {
			Hash  string `json:"hash"`
			Valid bool   `json:"valid"`
			Tools []struct {
				Name        string `json:"name"`
				ResourceURI string `json:"resourceUri"`
			} `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !report.Loaded {
		t.Fatal("the adapter did not load the file")
	}
	for name, want := range map[string]bool{"local": true, "remote": true, "stale": false} {
		s := report.Servers[name]
		if s.Hash != entries[name].ConfigHash {
			t.Errorf("%s: adapter hash %s, ours %s", name, s.Hash, entries[name].ConfigHash)
		}
		if s.Valid != want {
			t.Errorf("%s: adapter says valid=%v, want %v", name, s.Valid, want)
		}
	}
	var names []string
	for _, tool := range report.Servers["local"].Tools {
		names = append(names, tool.Name)
	}
	// app_only is hidden from the model by its uiVisibility; the resource
	// becomes a read_ tool.
	if got := strings.Join(names, ","); got != "local_search,local_read_r" {
		t.Errorf("adapter's tools for local: %s", got)
	}
}

// TestConcurrentPutsInProcess shares one File between goroutines, and a
// second File on the same path, as two components of one daemon might.
func TestConcurrentPutsInProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-cache.json")
	files := []*File{Open(path, nil), Open(path, nil)}
	const goroutines, puts = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := files[g%2]
			for j := range puts {
				name := fmt.Sprintf("g%d-%02d", g, j)
				if err := f.Put(map[string]*Entry{name: {ConfigHash: name}}); err != nil {
					errs <- err
					return
				}
				if _, ok := f.Lookup(name, name); !ok {
					errs <- fmt.Errorf("%s not found right after Put", name)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	entries, err := Open(path, nil).Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != goroutines*puts {
		t.Fatalf("%d entries, want %d", len(entries), goroutines*puts)
	}
	if w := files[0].Stats().Writes + files[1].Stats().Writes; w != goroutines*puts {
		t.Errorf("%d writes counted, want %d", w, goroutines*puts)
	}
}
