package registry

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/registry/search"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func tools(names ...string) []*mcp.Tool {
	out := make([]*mcp.Tool, len(names))
	for i, n := range names {
		out[i] = &mcp.Tool{Name: n, Description: "does " + n, InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	return out
}

func testConfig(servers ...*Server) *Config {
	cfg := &Config{Servers: map[string]*Server{}, Settings: Settings{ToolPrefix: PrefixServer}}
	for _, s := range servers {
		if s.Hash == "" {
			s.Hash = "h-" + s.Name
		}
		cfg.Servers[s.Name] = s
	}
	return cfg
}

func toolNames(ts []*Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

func TestCatalogView(t *testing.T) {
	no := false
	cfg := testConfig(
		&Server{Name: "github", Enabled: true},
		&Server{Name: "fs", Enabled: true, ExcludeTools: []string{"fs_write*"}},
		&Server{Name: "web", Enabled: true, IncludeTools: []string{"fetch", "web/search"}},
		&Server{Name: "off", Enabled: false},
		&Server{Name: "docs", Enabled: true, ExposeResources: &no},
	)
	c := NewCatalog(cfg)
	if n := len(c.View().Tools); n != 0 {
		t.Fatalf("fresh catalogue has %d tools, want 0", n)
	}
	c.SetListing("h-github", &Listing{Tools: tools("create_issue", "list.issues"), Source: SourceLive,
		Resources: []*mcp.Resource{{Name: "readme", URI: "repo://readme"}}})
	c.SetListing("h-fs", &Listing{Tools: tools("read_file", "write_file", "write_many"), Source: SourceCache})
	c.SetListing("h-web", &Listing{Tools: tools("fetch", "search", "crawl"), Source: SourceCache})
	c.SetListing("h-off", &Listing{Tools: tools("secret"), Source: SourceCache})
	v := c.SetListing("h-docs", &Listing{Tools: tools("ask"), Source: SourceCache,
		Resources: []*mcp.Resource{{Name: "guide", URI: "docs://guide"}}})

	want := []string{"docs_ask", "fs_read_file", "github_create_issue", "github_list_issues", "github_read_readme", "web_fetch", "web_search"}
	got := toolNames(v.Tools)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}

	for _, name := range []string{"github_create_issue", "github/create_issue", "github.create_issue", "create_issue", "github/list.issues"} {
		tool, ok := v.Lookup(name)
		if !ok || tool.Server != "github" {
			t.Errorf("Lookup(%q) = %v, %v; want a github tool", name, tool, ok)
		}
	}
	if tool, ok := v.Lookup("github_read_readme"); !ok || tool.Resource == nil || tool.Resource.URI != "repo://readme" {
		t.Errorf("resource tool lookup = %+v, %v", tool, ok)
	}
	if _, ok := v.Lookup("secret"); ok {
		t.Error("a disabled server's tool was found")
	}
	if got := v.Suggest("github_create_isue", 3); len(got) == 0 || got[0] != "github_create_issue" {
		t.Errorf("Suggest(github_create_isue) = %v", got)
	}
	if got := v.Suggest("zzzzzzzz", 3); len(got) != 0 {
		t.Errorf("Suggest(nonsense) = %v, want none", got)
	}

	// A cache listing never overrides a live one.
	v = c.SetListing("h-github", &Listing{Tools: tools("stale"), Source: SourceCache})
	if _, ok := v.Lookup("github_stale"); ok {
		t.Error("cache listing replaced the live one")
	}

	// A reload that drops a server drops its listing; unchanged ones keep theirs.
	cfg2 := testConfig(&Server{Name: "github", Enabled: true, Hash: "h-github"})
	c.SetConfig(cfg2)
	c.Prune(map[string]bool{"h-github": true})
	v = c.View()
	if got := toolNames(v.Tools); !slices.Equal(got, []string{"github_create_issue", "github_list_issues", "github_read_readme"}) {
		t.Errorf("after reload tools = %v", got)
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		p, s string
		want bool
	}{
		{"*", "anything/at_all", true},
		{"write_*", "write_file", true},
		{"write_*", "read_file", false},
		{"?ead_file", "read_file", true},
		{"gh/*", "gh/create", true},
		{"*_issue", "create_issue", true},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"", "", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := globMatch(tt.p, tt.s); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tt.p, tt.s, got, tt.want)
		}
	}
}

func TestCatalogSearch(t *testing.T) {
	c := NewCatalog(testConfig(&Server{Name: "github", Enabled: true}, &Server{Name: "browser", Enabled: true}))
	c.SetListing("h-github", &Listing{Tools: []*mcp.Tool{
		{Name: "create_issue", Description: "Create a new issue in a repository"},
		{Name: "list_pull_requests", Description: "List pull requests"},
	}, Source: SourceLive})
	v := c.SetListing("h-browser", &Listing{Tools: []*mcp.Tool{
		{Name: "take_screenshot", Description: "Capture a screenshot of the page"},
	}, Source: SourceLive})
	hits, err := v.Search("screenshot", search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Name != "browser_take_screenshot" {
		t.Errorf("search screenshot = %v", toolNames(hits))
	}
	hits, _ = v.Search("issue", search.Options{Server: "browser"})
	if len(hits) != 0 {
		t.Errorf("search narrowed to browser found %v", toolNames(hits))
	}
}

// TestSearchKeywords: a server's searchKeywords, parsed from the file,
// let search find tools by words their names and descriptions lack; a
// glob's words reach every tool it matches; they are never shown.
func TestSearchKeywords(t *testing.T) {
	cfg, err := Parse([]byte(`{"mcpServers": {
		"github": {"command": "gh-mcp", "searchKeywords": {"search_code": ["grep", "ripgrep"], "*": ["octocat"], "github_get_*": ["fetch one"]}},
		"other": {"command": "other-mcp"}
	}}`), "mcp.json", &LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers["github"].SearchKeywords["search_code"]; !slices.Equal(got, []string{"grep", "ripgrep"}) {
		t.Fatalf("parsed searchKeywords = %v", cfg.Servers["github"].SearchKeywords)
	}
	c := NewCatalog(cfg)
	c.SetListing(cfg.Servers["github"].Hash, &Listing{Tools: tools("search_code", "get_issue", "create_issue"), Source: SourceCache})
	v := c.SetListing(cfg.Servers["other"].Hash, &Listing{Tools: tools("search_docs"), Source: SourceCache})
	for _, tc := range []struct {
		query string
		regex bool
		want  []string
	}{
		{"grep", false, []string{"github_search_code"}},
		{"octocat", false, []string{"github_create_issue", "github_get_issue", "github_search_code"}},
		{"fetch one", false, []string{"github_get_issue"}},
		{"^ripgrep$", true, []string{"github_search_code"}},
	} {
		hits, err := v.Search(tc.query, search.Options{Regex: tc.regex})
		if err != nil {
			t.Fatal(err)
		}
		got := toolNames(hits)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("search %q = %v, want %v", tc.query, got, tc.want)
		}
	}
	for _, tl := range v.Tools {
		if d := tl.Description(); d != "does "+tl.Original {
			t.Errorf("%s's description became %q", tl.Name, d)
		}
	}
	if _, err := Parse([]byte(`{"mcpServers": {"g": {"command": "x", "searchKeywords": ["grep"]}}}`), "mcp.json", &LoadOptions{}); err == nil || !strings.Contains(err.Error(), "searchKeywords") {
		t.Errorf("a list for searchKeywords: %v", err)
	}
}

// TestExposedJSON: a tool's listed encoding is its exposed definition,
// under its gateway name, made once; a definition that cannot be encoded
// (a schema of broken raw JSON) is listed by its name alone, with an
// object schema, rather than failing every list it is on.
func TestExposedJSON(t *testing.T) {
	good := &Tool{Name: "srv_read", Server: "srv", Original: "read",
		Def: &mcp.Tool{Name: "read", Description: "Reads <files>", InputSchema: map[string]any{"type": "object"}}}
	if got, want := string(good.ExposedJSON()), `{"description":"Reads <files>","inputSchema":{"type":"object"},"name":"srv_read"}`; got != want {
		t.Errorf("ExposedJSON = %s, want %s", got, want)
	}
	if a, b := good.ExposedJSON(), good.ExposedJSON(); &a[0] != &b[0] {
		t.Error("ExposedJSON encoded the tool twice")
	}
	broken := &Tool{Name: "srv_bad", Server: "srv", Original: "bad",
		Def: &mcp.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"object","properties":`)}}
	if got, want := string(broken.ExposedJSON()), `{"inputSchema":{"type":"object"},"name":"srv_bad"}`; got != want {
		t.Errorf("ExposedJSON of a broken schema = %s, want %s", got, want)
	}
}
