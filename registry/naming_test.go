package registry

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestToolNameMatchesAdapter checks ToolName against pi-mcp-adapter 2.36.0's
// formatToolName for names it already gets right (legal tool names).
func TestToolNameMatchesAdapter(t *testing.T) {
	tests := []struct{ mode, server, tool, want string }{
		{"server", "github", "search_code", "github_search_code"},
		{"server", "github", "github_search", "github_search"}, // not prefixed twice
		{"server", "github", "github_", "github_github_"},
		{"server", "github", "repos.list", "github_repos_list"},
		{"server", "chrome-devtools", "take-screenshot", "chrome-devtools_take-screenshot"},
		{"server", "my.server", "x", "my_2e_server_x"},
		{"server", "café", "x", "caf_e9__x"},
		{"server", "a b/c", "x", "a_20_b_2f_c_x"},
		{"server", "😀", "x", "_1f600__x"},
		{"short", "github-mcp", "search", "github_search"},
		{"short", "github_mcp", "search", "github__search"},
		{"short", "GitHubMCP", "search", "GitHub_search"},
		{"short", "mcp", "search", "mcp_search"},
		{"short", "-MCP", "search", "mcp_search"},
		{"short", "mcp-server", "search", "mcp-server_search"},
		{"short", "github-mcp", "github_search", "github_search"},
		{"none", "github", "search.code", "search_code"},
		{"mcp", "github", "search", "mcp__github_search"},
		{"mcp", "my.server", "search", "mcp__my_2e_server_search"},
		{"mcp", "github", "mcp__github_search", "mcp__github_search"},
	}
	for _, tt := range tests {
		if got := ToolName(tt.mode, tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q, %q) = %q, want %q", tt.mode, tt.server, tt.tool, got, tt.want)
		}
	}
}

// TestToolName covers what the adapter leaves to the LLM API to reject:
// characters outside [A-Za-z0-9_-] in tool names.
func TestToolName(t *testing.T) {
	tests := []struct{ mode, server, tool, want string }{
		{"", "github", "search", "github_search"}, // "" is the default mode, server
		{"bogus", "github", "search", "github_search"},
		{PrefixNone, "a", "v1.files.read", "v1_files_read"},
		{PrefixServer, "fs", "read file", "fs_read_20_file"},
		{PrefixServer, "fs", "read/file", "fs_read_2f_file"},
		{PrefixServer, "fs", "lire_fiché", "fs_lire_fich_e9_"},
		{PrefixNone, "x", "搜索", "_641c__7d22_"},
		{PrefixShort, "docs-mcp", "look:up", "docs_look_3a_up"},
		{PrefixServer, "s", "", "s_"},
	}
	for _, tt := range tests {
		if got := ToolName(tt.mode, tt.server, tt.tool); got != tt.want {
			t.Errorf("ToolName(%q, %q, %q) = %q, want %q", tt.mode, tt.server, tt.tool, got, tt.want)
		}
	}
}

// TestResourceToolName checks against pi-mcp-adapter 2.36.0's
// "read_" + resourceNameToToolName.
func TestResourceToolName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Team Docs (v2)", "read_team_docs_v2"},
		{"2024 report", "read_resource_2024_report"},
		{"README.md", "read_readme_md"},
		{"__init__", "read_init"},
		{"", "read_resource"},
		{"!!!", "read_resource"},
		{"café_menu", "read_caf_menu"},
		{"😀 emoji", "read_emoji"},
		{"UPPER-case", "read_upper_case"},
		{"a__b", "read_a_b"},
		{"123", "read_resource_123"},
	}
	for _, tt := range tests {
		if got := ResourceToolName(tt.in); got != tt.want {
			t.Errorf("ResourceToolName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// Prefixed like any tool.
	if got := ToolName(PrefixServer, "docs", ResourceToolName("Guide")); got != "docs_read_guide" {
		t.Errorf("prefixed resource tool = %q", got)
	}
}

var validToolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestAssignNames(t *testing.T) {
	long := strings.Repeat("x", 70)
	tests := []struct {
		name string
		reqs []NameRequest
		want []string
	}{{
		name: "unique names are kept",
		reqs: []NameRequest{
			{Server: "github", Tool: "search", Prefix: PrefixServer},
			{Server: "fs", Tool: "read.file", Prefix: PrefixServer},
			{Server: "docs-mcp", Tool: "query", Prefix: PrefixShort},
			{Server: "web", Tool: "fetch", Prefix: PrefixNone},
		},
		want: []string{"github_search", "fs_read_file", "docs_query", "fetch"},
	}, {
		name: "collision between two servers in none mode renames both",
		reqs: []NameRequest{
			{Server: "brave", Tool: "search", Prefix: PrefixNone},
			{Server: "exa", Tool: "search", Prefix: PrefixNone},
			{Server: "exa", Tool: "crawl", Prefix: PrefixNone},
		},
		want: []string{"search_" + nameSuffix("brave/search", 0), "search_" + nameSuffix("exa/search", 0), "crawl"},
	}, {
		name: "collision through sanitising",
		reqs: []NameRequest{
			{Server: "a", Tool: "get.x", Prefix: PrefixServer},
			{Server: "a", Tool: "get_x", Prefix: PrefixServer},
		},
		want: []string{"a_get_x_" + nameSuffix("a/get.x", 0), "a_get_x_" + nameSuffix("a/get_x", 0)},
	}, {
		name: "short mode: foo and foo-mcp share a prefix",
		reqs: []NameRequest{
			{Server: "foo", Tool: "run", Prefix: PrefixShort},
			{Server: "foo-mcp", Tool: "run", Prefix: PrefixShort},
			{Server: "foo-mcp", Tool: "stop", Prefix: PrefixShort},
		},
		want: []string{"foo_run_" + nameSuffix("foo/run", 0), "foo_run_" + nameSuffix("foo-mcp/run", 0), "foo_stop"},
	}, {
		name: "over-long name is cut and suffixed",
		reqs: []NameRequest{
			{Server: "srv", Tool: long, Prefix: PrefixServer},
			{Server: "srv", Tool: strings.Repeat("y", 60), Prefix: PrefixServer}, // 64 exactly
		},
		want: []string{"srv_" + strings.Repeat("x", 53) + "_" + nameSuffix("srv/"+long, 0), "srv_" + strings.Repeat("y", 60)},
	}, {
		name: "identical requests get distinct names",
		reqs: []NameRequest{
			{Server: "s", Tool: "t", Prefix: PrefixServer},
			{Server: "s", Tool: "t", Prefix: PrefixServer},
		},
		want: []string{"s_t_" + nameSuffix("s/t", 0), "s_t_" + nameSuffix("s/t", 1)},
	}, {
		name: "a suffixed name never takes a name already given",
		reqs: []NameRequest{
			{Server: "a", Tool: "x", Prefix: PrefixNone},
			{Server: "b", Tool: "x", Prefix: PrefixNone},
			{Server: "c", Tool: "x_" + nameSuffix("a/x", 0), Prefix: PrefixNone},
		},
		want: []string{"x_" + nameSuffix("a/x", 1), "x_" + nameSuffix("b/x", 0), "x_" + nameSuffix("a/x", 0)},
	}, {
		name: "empty tool name in none mode",
		reqs: []NameRequest{{Server: "s", Tool: "", Prefix: PrefixNone}},
		want: []string{"tool_" + nameSuffix("s/", 0)},
	}, {
		name: "no requests",
		reqs: nil,
		want: []string{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AssignNames(tt.reqs)
			if !slices.Equal(got, tt.want) {
				t.Errorf("AssignNames:\n got: %q\nwant: %q", got, tt.want)
			}
			seen := map[string]bool{}
			for _, n := range got {
				if !validToolName.MatchString(n) {
					t.Errorf("name %q is not 1-64 chars of [A-Za-z0-9_-]", n)
				}
				if seen[n] {
					t.Errorf("name %q given twice", n)
				}
				seen[n] = true
			}
		})
	}
}

func TestNameSuffix(t *testing.T) {
	// Lower-case base32 of sha256("brave/search"), and of
	// sha256("brave/search#1") for the second attempt.
	if got := nameSuffix("brave/search", 0); got != "yu6zow" {
		t.Errorf("nameSuffix(brave/search, 0) = %q, want yu6zow", got)
	}
	if got := nameSuffix("brave/search", 1); got != "mr7zv5" {
		t.Errorf("nameSuffix(brave/search, 1) = %q, want mr7zv5", got)
	}
}

// TestAssignNamesDeterministic shuffles a request set full of collisions
// and checks that every request keeps its name.
func TestAssignNamesDeterministic(t *testing.T) {
	var reqs []NameRequest
	for _, s := range []string{"alpha", "beta", "beta-mcp", "gamma.io", "δ"} {
		for _, tool := range []string{"search", "get.item", "get_item", "list", strings.Repeat("long_", 15), "", "x_" + nameSuffix("alpha/x", 0)} {
			for _, p := range []string{PrefixNone, PrefixShort, PrefixServer} {
				reqs = append(reqs, NameRequest{Server: s, Tool: tool, Prefix: p})
			}
		}
		reqs = append(reqs, NameRequest{Server: s, Tool: "x", Prefix: PrefixNone})
	}
	reqs = append(reqs, reqs[0], reqs[1]) // identical requests too
	key := func(r NameRequest) string { return fmt.Sprintf("%q/%q/%q", r.Server, r.Tool, r.Prefix) }

	want := map[string][]string{} // request → names (identical requests share a key)
	for i, n := range AssignNames(reqs) {
		want[key(reqs[i])] = append(want[key(reqs[i])], n)
	}
	for k := range want {
		slices.Sort(want[k])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		shuffled := slices.Clone(reqs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got := map[string][]string{}
		seen := map[string]bool{}
		for i, n := range AssignNames(shuffled) {
			got[key(shuffled[i])] = append(got[key(shuffled[i])], n)
			if seen[n] || !validToolName.MatchString(n) {
				t.Fatalf("round %d: name %q duplicate or invalid", round, n)
			}
			seen[n] = true
		}
		for k, names := range got {
			slices.Sort(names)
			if !slices.Equal(names, want[k]) {
				t.Fatalf("round %d: %s got %q, want %q", round, k, names, want[k])
			}
		}
	}
}
