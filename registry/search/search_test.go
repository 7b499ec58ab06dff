package search

import (
	"errors"
	"math"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
)

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"create_issue", []string{"create", "issue"}},
		{"browser-take-screenshot", []string{"browser", "take", "screenshot"}},
		{"getHTTPResponse", []string{"get", "http", "response", "gethttpresponse"}},
		{"HTTPServer", []string{"http", "server", "httpserver"}},
		{"listAPIKeys", []string{"list", "api", "keys", "listapikeys"}},
		{"NFTs", []string{"nfts"}},
		{"listAPIs", []string{"list", "apis", "listapis"}},
		{"PRs and VMs", []string{"prs", "and", "vms"}},
		{"files.read", []string{"files", "read"}},
		{"WordCloud", []string{"word", "cloud", "wordcloud"}},
		{"Search GitHub", []string{"search", "git", "hub", "github"}},
		{"s3_list_buckets", []string{"3", "s3", "list", "buckets"}}, // "s" alone is dropped
		{"base64Encode", []string{"base", "64", "encode"}},
		{"get_ec2_instances", []string{"get", "ec", "2", "ec2", "instances"}},
		{"Tool for searching academic papers.", []string{"tool", "for", "searching", "academic", "papers"}},
		{"Größe_ändern", []string{"größe", "ändern"}},
		{"a b c", nil},
	}
	for _, tt := range tests {
		var got []string
		splitWords(tt.in, func(w string) { got = append(got, w) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("splitWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStem(t *testing.T) {
	// Porter2 reference outputs.
	tests := map[string]string{
		"consign": "consign", "consigned": "consign", "consigning": "consign",
		"consignment": "consign", "consistency": "consist", "consistently": "consist",
		"generate": "generat", "generated": "generat", "general": "general", "generic": "generic",
		"running": "run", "hopping": "hop", "hoping": "hope", "caresses": "caress",
		"ponies": "poni", "ties": "tie", "cats": "cat", "agreed": "agre", "feed": "feed",
		"sized": "size", "happily": "happili", "relational": "relat", "hopefulness": "hope",
		"electrical": "electr", "adjustable": "adjust", "replacement": "replac",
		"adoption": "adopt", "communication": "communic", "cry": "cri", "say": "say",
		"news": "news", "skies": "sky", "dying": "die", "inning": "inning", "proceeding": "proceed",
		// Tool vocabulary: the forms a query and a description use must meet.
		"searching": "search", "searches": "search", "searched": "search",
		"repositories": "repositori", "repository": "repositori",
		"issues": "issu", "issue": "issu", "screenshots": "screenshot",
		"images": "imag", "image": "imag", "files": "file", "listing": "list",
		"deleted": "delet", "delete": "delet", "forecasts": "forecast",
		"ab": "ab", "ec2": "ec2", "größe": "größe",
	}
	for in, want := range tests {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

// handmade is a small catalogue shaped like real MCP servers.
var handmade = []Doc{
	{Server: "github", Name: "create_issue", Description: "Create a new issue in a GitHub repository.",
		Schema: []byte(`{"type":"object","properties":{"owner":{"type":"string","description":"Repository owner"},"repo":{"type":"string","description":"Repository name"},"title":{"type":"string","description":"Issue title"},"body":{"type":"string","description":"Issue body"},"labels":{"type":"array","items":{"type":"string"}}}}`)},
	{Server: "github", Name: "get_issue", Description: "Get details of a specific issue in a GitHub repository.",
		Schema: []byte(`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"issue_number":{"type":"number"}}}`)},
	{Server: "github", Name: "list_issues", Description: "List issues in a GitHub repository with filtering options.",
		Schema: []byte(`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"state":{"type":"string","enum":["open","closed","all"]},"labels":{"type":"array"}}}`)},
	{Server: "github", Name: "update_issue", Description: "Update an existing issue in a GitHub repository."},
	{Server: "github", Name: "add_issue_comment", Description: "Add a comment to an existing issue."},
	{Server: "github", Name: "search_issues", Description: "Search for issues and pull requests across GitHub repositories."},
	{Server: "github", Name: "create_pull_request", Description: "Create a new pull request in a GitHub repository."},
	{Server: "github", Name: "merge_pull_request", Description: "Merge a pull request."},
	{Server: "github", Name: "list_pull_requests", Description: "List and filter repository pull requests."},
	{Server: "github", Name: "get_file_contents", Description: "Get the contents of a file or directory from a GitHub repository."},
	{Server: "github", Name: "search_repositories", Description: "Search for GitHub repositories."},
	{Server: "github", Name: "create_branch", Description: "Create a new branch in a GitHub repository."},
	{Server: "github", Name: "list_commits", Description: "Get list of commits of a branch in a GitHub repository."},
	{Server: "slack", Name: "slack_list_channels", Description: "List public channels in the workspace with pagination."},
	{Server: "slack", Name: "slack_post_message", Description: "Post a new message to a Slack channel.",
		Schema: []byte(`{"type":"object","properties":{"channel_id":{"type":"string","description":"The ID of the channel to post to"},"text":{"type":"string","description":"The message text to post"}}}`)},
	{Server: "slack", Name: "slack_reply_to_thread", Description: "Reply to a specific message thread in Slack."},
	{Server: "slack", Name: "slack_add_reaction", Description: "Add a reaction emoji to a message."},
	{Server: "slack", Name: "slack_get_channel_history", Description: "Get recent messages from a channel."},
	{Server: "slack", Name: "slack_get_users", Description: "Get a list of all users in the workspace with their basic profile information."},
	{Server: "playwright", Name: "browser_navigate", Description: "Navigate to a URL.",
		Schema: []byte(`{"type":"object","properties":{"url":{"type":"string","description":"The URL to navigate to"}}}`)},
	{Server: "playwright", Name: "browser_take_screenshot", Description: "Take a screenshot of the current page. You can't perform actions based on the screenshot, use browser_snapshot for actions.",
		Schema: []byte(`{"type":"object","properties":{"filename":{"type":"string","description":"File name to save the screenshot to"},"fullPage":{"type":"boolean","description":"When true, takes a screenshot of the full scrollable page"}}}`)},
	{Server: "playwright", Name: "browser_snapshot", Description: "Capture accessibility snapshot of the current page, this is better than screenshot."},
	{Server: "playwright", Name: "browser_click", Description: "Perform click on a web page.",
		Schema: []byte(`{"type":"object","properties":{"element":{"type":"string","description":"Human-readable element description"},"ref":{"type":"string"}}}`)},
	{Server: "playwright", Name: "browser_type", Description: "Type text into editable element."},
	{Server: "playwright", Name: "browser_close", Description: "Close the page."},
	{Server: "filesystem", Name: "read_file", Description: "Read the complete contents of a file from the file system.",
		Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	{Server: "filesystem", Name: "write_file", Description: "Create a new file or completely overwrite an existing file with new content."},
	{Server: "filesystem", Name: "edit_file", Description: "Make line-based edits to a text file."},
	{Server: "filesystem", Name: "create_directory", Description: "Create a new directory or ensure a directory exists."},
	{Server: "filesystem", Name: "list_directory", Description: "Get a detailed listing of all files and directories in a specified path."},
	{Server: "filesystem", Name: "move_file", Description: "Move or rename files and directories."},
	{Server: "filesystem", Name: "search_files", Description: "Recursively search for files and directories matching a pattern."},
	{Server: "time", Name: "get_current_time", Description: "Get current time in a specific timezone.",
		Schema: []byte(`{"type":"object","properties":{"timezone":{"type":"string","description":"IANA timezone name"}}}`)},
	{Server: "time", Name: "convert_time", Description: "Convert time between timezones."},
	{Server: "weather", Name: "get_forecast", Description: "Get weather forecast for a location.",
		Schema: []byte(`{"type":"object","properties":{"latitude":{"type":"number"},"longitude":{"type":"number"}}}`)},
	{Server: "weather", Name: "get_alerts", Description: "Get weather alerts for a US state."},
	{Server: "brave-search", Name: "brave_web_search", Description: "Performs a web search using the Brave Search API, ideal for general queries, news, articles and online content."},
	{Server: "brave-search", Name: "brave_local_search", Description: "Searches for local businesses and places using Brave's Local Search API."},
	{Server: "postgres", Name: "query", Description: "Run a read-only SQL query.",
		Schema: []byte(`{"type":"object","properties":{"sql":{"type":"string"}}}`)},
	{Server: "memory", Name: "create_entities", Description: "Create multiple new entities in the knowledge graph."},
	{Server: "memory", Name: "search_nodes", Description: "Search for nodes in the knowledge graph based on a query."},
	{Server: "images", Name: "generateImage", Description: "Generate a picture from a text prompt."},
}

func hitName(docs []Doc, h Hit) string { return docs[h.Doc].Server + "/" + docs[h.Doc].Name }

func hitNames(docs []Doc, hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = hitName(docs, h)
	}
	return out
}

func TestSearchTop1(t *testing.T) {
	ix := NewIndex(handmade)
	tests := []struct{ query, want string }{
		// Keywords, as a model types them.
		{"github issue create", "github/create_issue"},
		{"create issue", "github/create_issue"},
		{"issue create", "github/create_issue"},
		{"screenshot", "playwright/browser_take_screenshot"},
		{"take_screenshot", "playwright/browser_take_screenshot"},
		{"list directory", "filesystem/list_directory"},
		{"slack post message", "slack/slack_post_message"},
		{"merge pr", "github/merge_pull_request"},
		{"read file", "filesystem/read_file"},
		{"current time timezone", "time/get_current_time"},
		{"weather forecast", "weather/get_forecast"},
		{"web search", "brave-search/brave_web_search"},
		{"sql", "postgres/query"},
		{"navigate url", "playwright/browser_navigate"},
		{"list issues", "github/list_issues"},
		{"issues", "github/list_issues"},
		{"add comment", "github/add_issue_comment"},
		{"repos search", "github/search_repositories"},
		{"generate image", "images/generateImage"},
		{"GenerateImage", "images/generateImage"},
		{"screnshot", "playwright/browser_take_screenshot"},         // a typo
		{"naviagte url", "playwright/browser_navigate"},             // a swap
		{"Open https://example.com", "playwright/browser_navigate"}, // a URL
		// Whole sentences, as a user writes them.
		{"Please open a new issue in the repository about the broken login page", "github/create_issue"},
		{"Can you take a screenshot of the page I have open?", "playwright/browser_take_screenshot"},
		{"Send a message to the #general channel on Slack saying the build is green", "slack/slack_post_message"},
		{"Show me what is inside this folder", "filesystem/list_directory"},
		{"What's the weather going to be like tomorrow in Paris?", "weather/get_forecast"},
		{"What time is it right now in Tokyo?", "time/get_current_time"},
		{"I'd like to merge the pull request that fixes the crash", "github/merge_pull_request"},
		{"Make me a picture of a cat riding a bicycle", "images/generateImage"},
		{"Rename the file notes.txt to todo.txt", "filesystem/move_file"},
		{"Find restaurants near me", "brave-search/brave_local_search"},
	}
	expectFirst(t, ix, handmade, tests)
}

func TestSearchOrderAndLimit(t *testing.T) {
	ix := NewIndex(handmade)
	all, err := ix.Search("issue", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 6 {
		t.Fatalf("Search(issue) found %d tools, want at least 6: %q", len(all), hitNames(handmade, all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].Score > all[i-1].Score {
			t.Errorf("hit %d scores %v after %v", i, all[i].Score, all[i-1].Score)
		}
	}
	top3, _ := ix.Search("issue", Options{Limit: 3})
	if !slices.Equal(top3, all[:3]) {
		t.Errorf("Limit 3 = %v, want the first three of %v", top3, all[:3])
	}
	none, _ := ix.Search("zzyzx", Options{})
	if len(none) != 0 {
		t.Errorf("Search(zzyzx) = %q, want nothing", hitNames(handmade, none))
	}
	stop, _ := ix.Search("the of and", Options{})
	if len(stop) != 0 {
		t.Errorf("Search of stop words = %q, want nothing", hitNames(handmade, stop))
	}
}

func TestSearchTiesByName(t *testing.T) {
	docs := []Doc{
		{Server: "b", Name: "zeta_export", Description: "Export data."},
		{Server: "a", Name: "alpha_export", Description: "Export data."},
		{Server: "c", Name: "mid_export", Description: "Export data."},
		{Server: "a", Name: "mid_export", Description: "Export data."},
	}
	want := []string{"a/alpha_export", "a/mid_export", "c/mid_export", "b/zeta_export"}
	for range 3 {
		ix := NewIndex(docs)
		hits, err := ix.Search("export data", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := hitNames(docs, hits); !slices.Equal(got, want) {
			t.Fatalf("Search(export data) = %q, want %q", got, want)
		}
		if hits[0].Score != hits[3].Score {
			t.Fatalf("scores differ: %v", hits)
		}
	}
	// With a limit the heap must keep the same order.
	ix := NewIndex(docs)
	hits, _ := ix.Search("export", Options{Limit: 2})
	if got := hitNames(docs, hits); !slices.Equal(got, want[:2]) {
		t.Errorf("Search(export, Limit 2) = %q, want %q", got, want[:2])
	}
}

func TestSearchServerFilter(t *testing.T) {
	ix := NewIndex(handmade)
	hits, err := ix.Search("create", Options{Server: "filesystem"})
	if err != nil {
		t.Fatal(err)
	}
	// "Make line-based edits" matches too: make is a synonym of create.
	want := []string{"filesystem/create_directory", "filesystem/write_file", "filesystem/edit_file"}
	if got := hitNames(handmade, hits); !slices.Equal(got, want) {
		t.Errorf("Search(create, server filesystem) = %q, want %q", got, want)
	}
	// An empty query lists the server's tools in name order.
	hits, _ = ix.Search("", Options{Server: "time"})
	if got, want := hitNames(handmade, hits), []string{"time/convert_time", "time/get_current_time"}; !slices.Equal(got, want) {
		t.Errorf("Search(\"\", server time) = %q, want %q", got, want)
	}
	hits, _ = ix.Search("issue", Options{Server: "nosuch"})
	if len(hits) != 0 {
		t.Errorf("Search with unknown server = %q, want nothing", hitNames(handmade, hits))
	}
	// The server name is itself searchable.
	hits, _ = ix.Search("slack", Options{})
	if len(hits) != 6 {
		t.Errorf("Search(slack) found %d tools, want the 6 slack tools: %q", len(hits), hitNames(handmade, hits))
	}
}

func TestSearchRegex(t *testing.T) {
	ix := NewIndex(handmade)
	hits, err := ix.Search("screenshot", Options{Regex: true})
	if err != nil {
		t.Fatal(err)
	}
	// Name and description first, then name only, then description only.
	want := []string{"playwright/browser_take_screenshot", "playwright/browser_snapshot"}
	if got := hitNames(handmade, hits); !slices.Equal(got, want) {
		t.Errorf("regex screenshot = %q, want %q", got, want)
	}
	hits, _ = ix.Search("^(get|list)_", Options{Regex: true, Server: "github"})
	want = []string{"github/get_file_contents", "github/get_issue", "github/list_commits", "github/list_issues", "github/list_pull_requests"}
	if got := hitNames(handmade, hits); !slices.Equal(got, want) {
		t.Errorf("regex ^(get|list)_ on github = %q, want %q", got, want)
	}
	hits, _ = ix.Search("^slack_(get|add)_", Options{Regex: true})
	want = []string{"slack/slack_add_reaction", "slack/slack_get_channel_history", "slack/slack_get_users"}
	if got := hitNames(handmade, hits); !slices.Equal(got, want) {
		t.Errorf("regex ^slack_(get|add)_ = %q, want %q", got, want)
	}
	hits, _ = ix.Search("^github_create_(issue|branch)$", Options{Regex: true})
	want = []string{"github/create_branch", "github/create_issue"}
	if got := hitNames(handmade, hits); !slices.Equal(got, want) {
		t.Errorf("regex on server_name = %q, want %q", got, want)
	}
	hits, _ = ix.Search("PULL REQUEST", Options{Regex: true, Limit: 2})
	if len(hits) != 2 || hits[0].Score < hits[1].Score {
		t.Errorf("regex PULL REQUEST limit 2 = %v", hits)
	}
	hits, _ = ix.Search("(?-i)PULL", Options{Regex: true})
	if len(hits) != 0 {
		t.Errorf("case-sensitive regex (?-i)PULL = %q, want nothing", hitNames(handmade, hits))
	}
	_, err = ix.Search("create_(issue", Options{Regex: true})
	var se *syntax.Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "create_(issue") {
		t.Errorf("bad regex error = %v, want a *syntax.Error naming the pattern", err)
	}
}

func TestSearchCompoundNames(t *testing.T) {
	docs := []Doc{
		{Server: "x", Name: "stellarexplorer", Description: "Browse images of outer space."},
		{Server: "x", Name: "cloud_storage", Description: "Store files in the cloud. A stellar service."},
		{Server: "x", Name: "keyword_explorer", Description: "Related keywords."},
		{Server: "x", Name: "WordCloud", Description: "Draw word images from text."},
	}
	ix := NewIndex(docs)
	hits, _ := ix.Search("stellar", Options{Limit: 1})
	if len(hits) == 0 || hitName(docs, hits[0]) != "x/stellarexplorer" {
		t.Errorf("Search(stellar) = %q, want x/stellarexplorer first", hitNames(docs, hits))
	}
	hits, _ = ix.Search("wordcloud", Options{Limit: 1})
	if len(hits) == 0 || hitName(docs, hits[0]) != "x/WordCloud" {
		t.Errorf("Search(wordcloud) = %q, want x/WordCloud first", hitNames(docs, hits))
	}
}

func TestSearchConcurrent(t *testing.T) {
	ix := NewIndex(handmade)
	want, _ := ix.Search("create a new issue", Options{Limit: 5})
	done := make(chan []Hit)
	for range 8 {
		go func() {
			var last []Hit
			for range 200 {
				last, _ = ix.Search("create a new issue", Options{Limit: 5})
			}
			done <- last
		}()
	}
	for range 8 {
		if got := <-done; !slices.Equal(got, want) {
			t.Errorf("concurrent search = %v, want %v", got, want)
		}
	}
}

func TestSearchStopWordNames(t *testing.T) {
	docs := []Doc{
		{Server: "cli", Name: "help", Description: "Show usage."},
		{Server: "cli", Name: "who_am_i", Description: "Print the signed-in account."},
		{Server: "cli", Name: "get_help_article", Description: "Fetch a support article."},
	}
	ix := NewIndex(docs)
	for _, tt := range []struct{ query, want string }{
		{"help", "cli/help"},
		{"who am I", "cli/who_am_i"},
		{"support article", "cli/get_help_article"},
	} {
		hits, _ := ix.Search(tt.query, Options{})
		if len(hits) == 0 || hitName(docs, hits[0]) != tt.want {
			t.Errorf("Search(%q) = %q, want %s first", tt.query, hitNames(docs, hits), tt.want)
		}
	}
	// In a sentence, stop words do not count.
	hits, _ := ix.Search("can you help me find a support article", Options{})
	if len(hits) != 1 || hitName(docs, hits[0]) != "cli/get_help_article" {
		t.Errorf("sentence search = %q, want only cli/get_help_article", hitNames(docs, hits))
	}
}

func TestNearWords(t *testing.T) {
	ix := NewIndex([]Doc{{Server: "x", Name: "take_screenshot",
		Description: "Navigate pages, screenshots and screens; navigata is a place."}})
	tests := []struct {
		word string
		want []string
	}{
		{"screnshot", []string{"screenshot"}},          // deletion
		{"screeenshot", []string{"screenshot"}},        // insertion
		{"naviagte", []string{"navigate"}},             // swap
		{"navigatx", []string{"navigata", "navigate"}}, // substitutions, sorted
		{"navigate", []string{"navigata"}},             // never itself
		{"nvaigtae", nil},                              // two swaps
		{"pagez", []string{"pages"}},                   // five letters
		{"pags", nil},                                  // too short
		{"größe", nil},                                 // not ASCII
	}
	for _, tt := range tests {
		var got []string
		ix.nearWords(tt.word, func(w string) { got = append(got, w) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("nearWords(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

func TestAppendShapeWords(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"open https://example.com/x in the browser", []string{"url"}},
		{"go to www.example.org", []string{"url"}},
		{"save it to notes.md", []string{"file"}},
		{"cat ./build/out and ~/x", []string{"file"}},
		{"mail bob@example.com the report.pdf", []string{"file", "email"}},
		{"docs for Node.js and ASP.NET", nil},
		{"close issue 42 in mcpgw/mcpgw, version 1.5", nil},
	}
	for _, tt := range tests {
		if got := appendShapeWords(nil, tt.query); !slices.Equal(got, tt.want) {
			t.Errorf("appendShapeWords(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

func TestSearchTypoOnlyInShortQueries(t *testing.T) {
	docs := []Doc{
		{Server: "x", Name: "take_screenshot", Description: "Capture the screen."},
		{Server: "x", Name: "send_email", Description: "Send an email."},
	}
	ix := NewIndex(docs)
	hits, _ := ix.Search("screnshot", Options{})
	if got := hitNames(docs, hits); !slices.Equal(got, []string{"x/take_screenshot"}) {
		t.Errorf("Search(screnshot) = %q, want x/take_screenshot", got)
	}
	// In a long query the other words carry it; no guessing.
	hits, _ = ix.Search("please send an email with the screnshot from yesterday afternoon", Options{})
	if got := hitNames(docs, hits); !slices.Equal(got, []string{"x/send_email"}) {
		t.Errorf("long query = %q, want only x/send_email", got)
	}
}

func TestSearchBrandNames(t *testing.T) {
	docs := []Doc{
		{Server: "vcs", Name: "search_repos", Description: "Search GitHub repositories."},
		{Server: "git", Name: "git_log", Description: "Show the commit log of a git repository."},
		{Server: "media", Name: "find_clip", Description: "Find a YouTube video."},
		{Server: "github", Name: "list_issues", Description: "List the issues of a repository."},
		{Server: "git", Name: "git_issues", Description: "Show the issues file."},
	}
	ix := NewIndex(docs)
	for _, tt := range []struct{ query, want string }{
		{"github repositories", "vcs/search_repos"},
		{"GitHub repositories", "vcs/search_repos"},
		{"git", "git/git_log"},
		{"youtube", "media/find_clip"},
		{"GitHub issues", "github/list_issues"}, // not git's
	} {
		hits, _ := ix.Search(tt.query, Options{})
		if len(hits) == 0 || hitName(docs, hits[0]) != tt.want {
			t.Errorf("Search(%q) = %q, want %s first", tt.query, hitNames(docs, hits), tt.want)
		}
	}
}

func TestSchemaWords(t *testing.T) {
	schema := `{"type":"object","properties":{
		"repoOwner":{"type":"string","description":"Owner of the repository"},
		"filter":{"type":"object","title":7,"properties":{"label_name":{"type":"string","title":"Label"}}},
		"files":{"type":"array","items":[{"type":"string"}]},
		"mode":{"anyOf":[{"type":"object","properties":{"dry_run":{"description":"Only pretend"}}}]}}}`
	names, descriptions := schemaWords([]byte(schema), nil, nil, nil)
	slices.Sort(names)
	slices.Sort(descriptions)
	if want := []string{"dry", "files", "filter", "label", "mode", "name", "owner", "repo", "repoowner", "run"}; !slices.Equal(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
	if want := []string{"label", "owner", "pretend", "repository"}; !slices.Equal(descriptions, want) {
		t.Errorf("descriptions = %q, want %q", descriptions, want)
	}
	for _, bad := range []string{``, `null`, `[1,2]`, `{"properties":`} {
		n, d := schemaWords([]byte(bad), nil, nil, nil)
		if len(n)+len(d) != 0 {
			t.Errorf("schemaWords(%q) = %q, %q, want nothing", bad, n, d)
		}
	}
}

func TestRequiredLiteral(t *testing.T) {
	tests := map[string]string{
		"screenshot":          "screenshot",
		"^browser_.*shot$":    "browser_",
		"(create|add)_issue+": "_issu",
		"a(bcd)e":             "bcd",
		"x{2,}yz":             "yz",
		"create|delete":       "",
		"pull.?request":       "request",
	}
	for pattern, want := range tests {
		re, err := syntax.Parse("(?i)"+pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.ToLower(requiredLiteral(re)); got != want {
			t.Errorf("requiredLiteral(%q) = %q, want %q", pattern, got, want)
		}
	}
	// The literal filter never drops a tool the expression matches, even
	// one whose text is not ASCII.
	docs := []Doc{{Server: "x", Name: "größe_ändern", Description: "Change the SIZE."}, {Server: "x", Name: "resize", Description: "Resize an image."}}
	ix := NewIndex(docs)
	hits, _ := ix.Search("size|ÄNDERN", Options{Regex: true})
	if got := hitNames(docs, hits); !slices.Equal(got, []string{"x/größe_ändern", "x/resize"}) {
		t.Errorf("regex over non-ASCII = %q", got)
	}
	hits, _ = ix.Search("ändern", Options{Regex: true})
	if got := hitNames(docs, hits); !slices.Equal(got, []string{"x/größe_ändern"}) {
		t.Errorf("regex ändern = %q", got)
	}
}

func TestSortKeys(t *testing.T) {
	for _, n := range []int{1, 2, 300, 5000} {
		for _, spread := range []uint64{1 << 8, 1 << 40, ^uint64(0)} {
			keys := make([]uint64, n)
			x := uint64(n) * 0x9E3779B97F4A7C15
			for i := range keys {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				keys[i] = 0xABCD<<48 | x%spread // shared high digits are skipped
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			sortKeys(keys, make([]uint64, n))
			if !slices.Equal(keys, want) {
				t.Fatalf("sortKeys of %d keys spread %x is out of order", n, spread)
			}
		}
	}
}

// cloudServer is a large server whose tools all take the same options,
// as a cloud provider's do.
func cloudServer() []Doc {
	common := `"subscription":{"type":"string","description":"The subscription ID or name."},` +
		`"resource-group":{"type":"string","description":"The name of the resource group."},` +
		`"tenant":{"type":"string","description":"The tenant ID."},` +
		`"retry-mode":{"type":"string","description":"Retry strategy: fixed or exponential."},` +
		`"auth-method":{"type":"string","description":"Authentication method."}`
	tools := []struct{ name, desc, own string }{
		{"group_list", "List all resource groups in a subscription.", ""},
		{"subscription_list", "List all subscriptions for the account.", ""},
		{"vm_get", "List virtual machines, or get the details of one.", `"vm":{"type":"string"}`},
		{"vm_create", "Create a virtual machine.", `"vm":{"type":"string"},"image":{"type":"string"}`},
		{"storage_account_list", "List storage accounts in a subscription.", ""},
		{"storage_account_create", "Create a storage account.", `"account":{"type":"string"}`},
		{"storage_blob_list", "List blobs in a container of a storage account.", `"account":{"type":"string"},"container":{"type":"string"}`},
		{"keyvault_key_list", "List keys in a key vault.", `"vault":{"type":"string"}`},
		{"keyvault_secret_list", "List secrets in a key vault.", `"vault":{"type":"string"}`},
		{"sql_db_list", "List databases on a SQL server.", `"server":{"type":"string"}`},
		{"sql_server_firewall_list", "List firewall rules of a SQL server.", `"server":{"type":"string"}`},
		{"aks_cluster_get", "List Kubernetes clusters, or get one cluster's details.", `"cluster":{"type":"string"}`},
		{"aks_nodepool_get", "List the node pools of a Kubernetes cluster.", `"cluster":{"type":"string"}`},
		{"monitor_workspace_list", "List Log Analytics workspaces.", ""},
		{"redis_cache_list", "List Redis caches.", ""},
		{"cosmos_account_list", "List Cosmos DB accounts.", ""},
	}
	var docs []Doc
	for _, tl := range tools {
		props := common
		if tl.own != "" {
			props += "," + tl.own
		}
		docs = append(docs, Doc{Server: "cloud", Name: tl.name, Description: tl.desc,
			Schema: []byte(`{"type":"object","properties":{` + props + `}}`)})
	}
	return docs
}

// Words that every tool of a large server has in its schema say nothing
// about which of them a query wants, and must not make the tool named by
// them look common.
func TestSearchBoilerplateParameters(t *testing.T) {
	docs := append(cloudServer(),
		Doc{Server: "chat", Name: "list_user_groups", Description: "List the groups a chat user belongs to.",
			Schema: []byte(`{"type":"object","properties":{"user":{"type":"string"}}}`)},
		Doc{Server: "billing", Name: "cancel_subscription", Description: "Cancel a customer's subscription.",
			Schema: []byte(`{"type":"object","properties":{"subscription":{"type":"string"}}}`)},
	)
	ix := NewIndex(docs)
	tests := []struct{ query, want string }{
		{"List all resource groups in my subscription", "cloud/group_list"},
		{"Show me my resource groups", "cloud/group_list"},
		{"Show me my subscriptions", "cloud/subscription_list"},
		{"What VMs do I have?", "cloud/vm_get"},
		{"cancel the subscription of customer 42", "billing/cancel_subscription"},
	}
	expectFirst(t, ix, docs, tests)
	// The words stay in the schemas of servers where they are not
	// boilerplate.
	if ex := ix.Explain("subscription", docIndex(docs, "billing/cancel_subscription")); ex.Score == 0 {
		t.Errorf("cancel_subscription does not match its own parameter")
	}
}

// "ID" in a request is an identifier, not "I'd".
func TestSearchIDIsAWord(t *testing.T) {
	docs := []Doc{
		{Server: "wiki", Name: "get_page", Description: "Get a wiki page by its title."},
		{Server: "wiki", Name: "get_page_by_id", Description: "Get a wiki page by its unique ID."},
	}
	ix := NewIndex(docs)
	hits, _ := ix.Search("Retrieve the page with ID 123456789", Options{Limit: 2})
	if len(hits) == 0 || hitName(docs, hits[0]) != "wiki/get_page_by_id" {
		t.Errorf("got %q, want wiki/get_page_by_id first", hitNames(docs, hits))
	}
}

func docIndex(docs []Doc, name string) int {
	return slices.IndexFunc(docs, func(d Doc) bool { return d.Server+"/"+d.Name == name })
}

// A path's directories are the data a tool is given, not what the tool
// does; its extension still says what kind of file it is.
func TestSearchPathsAreData(t *testing.T) {
	docs := []Doc{
		{Server: "music", Name: "music_files", Description: "The music files of the library."},
		{Server: "music", Name: "beat_track", Description: "Track the beats of a loaded music track."},
		{Server: "fs", Name: "list_directory", Description: "List the files and folders in a directory."},
		{Server: "fs", Name: "write_file", Description: "Write content to a file."},
		{Server: "web", Name: "write_html", Description: "Write a summary as an HTML page."},
		{Server: "notes", Name: "plan_notes", Description: "Notes of a plan."},
		{Server: "docs", Name: "markdown_to_pdf", Description: "Convert a markdown document to PDF."},
	}
	ix := NewIndex(docs)
	tests := []struct{ query, want string }{
		{"What files are in my /root/music folder?", "fs/list_directory"},
		{"save it to /root/html/ai.txt", "fs/write_file"},
		{"turn /root/notes/plan.md into a pdf", "docs/markdown_to_pdf"},
	}
	expectFirst(t, ix, docs, tests)
	if got, want := pathsAsKinds(`save it to "/root/markdown/bitcoin.md", then ./run.sh and ~/x`), `save it to md then sh and `; got != want {
		t.Errorf("pathsAsKinds = %q, want %q", got, want)
	}
}

// A catalogue word that several query words reach (through synonyms and
// related words) counts in full once, for the word where it weighs most.
func TestSearchTermCountsOnce(t *testing.T) {
	docs := []Doc{
		{Server: "pdf", Name: "save_pdf", Description: "Save the page as a PDF."},
		{Server: "notes", Name: "write_note", Description: "Write a note."},
	}
	ix := NewIndex(docs)
	s := newSearchScratch(len(docs), len(ix.terms))
	groups, _ := ix.parseQuery("document file pdf", s, false)
	pdf := ix.terms[ix.stem("pdf")]
	var full, shared int
	for _, g := range groups {
		for _, a := range g.alts {
			if a.term != pdf {
				continue
			}
			switch {
			case a.w == 1:
				full++
			case a.w > 0 && a.w < float32(ix.p.related):
				shared++ // less than a related word's own weight
			default:
				t.Errorf("pdf has weight %v in a group", a.w)
			}
		}
	}
	if full != 1 || shared != 2 {
		t.Errorf("pdf is in %d groups in full and %d at a share, want 1 and 2", full, shared)
	}
	// Explain says the same as Search.
	hits, _ := ix.Search("document file pdf", Options{})
	if ex := ix.Explain("document file pdf", hits[0].Doc); math.Abs(ex.Score-hits[0].Score) > 1e-4 {
		t.Errorf("Explain scores %v, Search %v", ex.Score, hits[0].Score)
	}
}

// A file's extension names the kind of tool it needs.
func TestSearchFileKinds(t *testing.T) {
	docs := []Doc{
		{Server: "word", Name: "get_document_text", Description: "Extract all text from a Word document."},
		{Server: "sheets", Name: "read_sheet", Description: "Read the rows of an Excel spreadsheet."},
		{Server: "slides", Name: "add_slide", Description: "Add a slide to a PowerPoint presentation."},
		{Server: "notes", Name: "read_note", Description: "Read a note and its text."},
		{Server: "files", Name: "read_file", Description: "Read a file from disk."},
	}
	ix := NewIndex(docs)
	tests := []struct{ query, want string }{
		{"what does the text of exchange.docx say", "word/get_document_text"},
		{"read the rows of budget.xlsx", "sheets/read_sheet"},
		{"add a slide to /root/ppt/apple.pptx", "slides/add_slide"},
	}
	expectFirst(t, ix, docs, tests)
	if got := appendFileKinds(nil, "turn notes.md and b.MD into report.docx."); !slices.Equal(got, []string{"markdown", "word", "document"}) {
		t.Errorf("appendFileKinds = %q", got)
	}
}

// A query's action tells apart siblings that share every other word.
func TestSearchActions(t *testing.T) {
	docs := []Doc{
		{Server: "cloud", Name: "create_storage_keys", Description: "Storage account keys."},
		{Server: "cloud", Name: "get_storage_keys", Description: "Storage account keys."},
		{Server: "cloud", Name: "remove_storage_keys", Description: "Storage account keys."},
		{Server: "cloud", Name: "storage_keys_report", Description: "Storage account keys."}, // no action
	}
	ix := NewIndex(docs)
	rank := func(query, name string) int {
		hits, _ := ix.Search(query, Options{})
		return slices.IndexFunc(hits, func(h Hit) bool { return hitName(docs, h) == name })
	}
	del := rank("purge the storage keys", "cloud/remove_storage_keys")
	for _, other := range []string{"cloud/get_storage_keys", "cloud/create_storage_keys"} {
		if r := rank("purge the storage keys", other); r < del {
			t.Errorf("%s is at %d for a delete, before remove_storage_keys (%d)", other, r, del)
		}
	}
	// A create: the tools with another action come after, the one with
	// none is not set back.
	q := "register the storage keys"
	create, report := rank(q, "cloud/create_storage_keys"), rank(q, "cloud/storage_keys_report")
	for _, other := range []string{"cloud/get_storage_keys", "cloud/remove_storage_keys"} {
		if r := rank(q, other); r < create || r < report {
			t.Errorf("%s is at %d for a create, before create (%d) or the report (%d)", other, r, create, report)
		}
	}
}

// Explain says when a tool's action is not the query's, and scores as
// Search does.
func TestExplainActions(t *testing.T) {
	docs := []Doc{
		{Server: "cloud", Name: "create_storage_keys", Description: "Storage account keys."},
		{Server: "cloud", Name: "remove_storage_keys", Description: "Storage account keys."},
	}
	ix := NewIndex(docs)
	hits, _ := ix.Search("purge the storage keys", Options{})
	for _, h := range hits {
		ex := ix.Explain("purge the storage keys", h.Doc)
		if want := hitName(docs, h) == "cloud/create_storage_keys"; ex.OtherAction != want {
			t.Errorf("%s: OtherAction %v", hitName(docs, h), ex.OtherAction)
		}
		if math.Abs(ex.Score-h.Score) > 1e-4 {
			t.Errorf("%s: Explain scores %v, Search %v", hitName(docs, h), ex.Score, h.Score)
		}
		if ex.OtherAction && !strings.Contains(ex.String(), "another thing") {
			t.Errorf("%s: %s", hitName(docs, h), ex)
		}
	}
}

// expectFirst checks that each query finds its tool first.
func expectFirst(t *testing.T, ix *Index, docs []Doc, tests []struct{ query, want string }) {
	t.Helper()
	for _, tt := range tests {
		hits, err := ix.Search(tt.query, Options{Limit: 5})
		if err != nil || len(hits) == 0 || hitName(docs, hits[0]) != tt.want {
			t.Errorf("Search(%q) = %q, %v; want %s first", tt.query, hitNames(docs, hits), err, tt.want)
		}
	}
}

// A query that writes out a tool's whole name (as the server names it, or
// as the gateway shows it) asks for that tool, even when a sibling's
// description matches more of its words; a one-word name is only a word.
func TestSearchFullToolName(t *testing.T) {
	docs := []Doc{
		{Server: "osrs", Name: "osrs_wiki_parse_page", Description: "Parse an Old School RuneScape wiki page into detailed text."},
		{Server: "osrs", Name: "osrs_wiki_get_page_info", Description: "Information about pages."},
		{Server: "flights", Name: "searchFlightItineraries", Description: "Search flight itineraries departing from a city on a date."},
		{Server: "flights", Name: "searchFlightsByDepArr", Description: "Flights between two airports."},
		{Server: "web", Name: "search", Description: "Search the web for flights, pages and more."},
	}
	ix := NewIndex(docs)
	tests := []struct{ query, want string }{
		{"On the Old School RuneScape wiki, retrieve detailed information about the page \"Tutorial\" using osrs_wiki_get_page_info.", "osrs/osrs_wiki_get_page_info"},
		{"call osrs_osrs_wiki_get_page_info for the page Tutorial in Old School RuneScape, detailed", "osrs/osrs_wiki_get_page_info"},
		{"Use searchFlightsByDepArr to search flight itineraries departing from LHR on 2023-02-15.", "flights/searchFlightsByDepArr"},
	}
	expectFirst(t, ix, docs, tests)
	if ex := ix.Explain("searchflightsbydeparr please", docIndex(docs, "flights/searchFlightsByDepArr")); !ex.FullName || !strings.Contains(ex.String(), "its full name in the query") {
		t.Errorf("the explanation does not say the name was written in full: %v", ex)
	}
	if ex := ix.Explain("search flights", docIndex(docs, "web/search")); ex.FullName {
		t.Errorf("a one-word name counts as written in full: %v", ex)
	}
}

// A word's synonyms count as the word would, not as rarer words: "show"
// reaches "list", which most tools say, and "enumerate", which one does;
// the tool named for what the query asks must not lose to the one whose
// description happens to use the rare synonym.
func TestSearchSynonymsWeighNoMoreThanTheWord(t *testing.T) {
	docs := []Doc{
		{Server: "db", Name: "mysql_server_list", Description: "Lists all MySQL server instances in the resource group, with their names and status, for server management."},
		{Server: "db", Name: "mysql_table_list", Description: "Enumerates all tables of a database on a MySQL server instance."},
		{Server: "db", Name: "mysql_database_list", Description: "Lists the databases on a MySQL server."},
		{Server: "db", Name: "mysql_database_query", Description: "Runs a query on a MySQL database."},
	}
	for _, thing := range []string{"storage accounts", "key vaults", "clusters", "subscriptions", "resource groups", "registries", "topics", "queues"} {
		docs = append(docs, Doc{Server: "cloud", Name: strings.ReplaceAll(thing, " ", "_") + "_list", Description: "Lists the " + thing + " of a subscription."})
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"Show me my MySQL servers", "db/mysql_server_list"},
		{"Show me the MySQL databases in server srv1", "db/mysql_database_list"},
	})
}

// An action word in a description ("it filters the logs to show only...")
// says less about what a tool does than in a name: there it weighs less
// than a noun would in its place, while in a name it weighs as much.
func TestSearchVerbsInProseWeighLess(t *testing.T) {
	docs := []Doc{
		{Server: "s", Name: "alpha", Description: "Filters the logs to show the data."},
		{Server: "s", Name: "beta", Description: "Filters the logs to chart the data."},
		{Server: "s", Name: "show_data", Description: "Data."},
		{Server: "s", Name: "chart_data", Description: "Data."},
	}
	ix := NewIndex(docs)
	verb, noun := ix.Explain("show", 0).Score, ix.Explain("chart", 1).Score
	if verb <= 0 || verb > 0.8*noun {
		t.Errorf("a verb in a description scores %.3f, a noun in its place %.3f; want the verb under 0.8 of the noun", verb, noun)
	}
	verb, noun = ix.Explain("show", 2).Score, ix.Explain("chart", 3).Score
	if verb <= 0 || math.Abs(verb-noun) > 1e-6 {
		t.Errorf("a verb in a name scores %.3f, a noun in its place %.3f; want the same", verb, noun)
	}
}

// A plural asks for the list, a singular for one: between the tools a
// server has for one resource, "the keys in the vault" wants key_list and
// "the key k1 in the vault" key_get; a query that asks to delete is left
// to its action.
func TestSearchNumberPicksListOrGet(t *testing.T) {
	docs := []Doc{
		{Server: "vault", Name: "keyvault_key_list", Description: "List all key names in a key vault."},
		{Server: "vault", Name: "keyvault_key_get", Description: "Get the details of a key in a key vault: its type, version and attributes."},
		{Server: "vault", Name: "keyvault_key_delete", Description: "Delete a key from a key vault."},
		{Server: "vault", Name: "keyvault_secret_list", Description: "List all secret names in a key vault."},
		{Server: "vault", Name: "keyvault_secret_get", Description: "Get the value and attributes of a secret in a key vault."},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"Show me the keys in the key vault myvault", "vault/keyvault_key_list"},
		{"Show me the key k1 in the key vault myvault", "vault/keyvault_key_get"},
		{"Show me the secrets in the key vault myvault", "vault/keyvault_secret_list"},
		{"Show me the secret s1 in the key vault myvault", "vault/keyvault_secret_get"},
		{"Delete the keys k1 and k2 from the key vault", "vault/keyvault_key_delete"},
	})
	q := "Show me the keys in the key vault myvault"
	hits, _ := ix.Search(q, Options{Limit: 1})
	ex := ix.Explain(q, hits[0].Doc)
	if !ex.Number || math.Abs(ex.Score-hits[0].Score) > 1e-4 || !strings.Contains(ex.String(), "lists what the query names in the plural") {
		t.Errorf("explanation of %s: %v, score %.4f; search scored %.4f", hitName(docs, hits[0]), ex, ex.Score, hits[0].Score)
	}
}

func TestQuotedSpans(t *testing.T) {
	tests := []struct {
		text string
		want string // quoted parts in [brackets]
	}{
		{`find "products" now`, `find [products] now`},
		{`the title 'My Travel Plans', please`, `the title [My Travel Plans], please`},
		{`don't touch Bob's file`, `don't touch Bob's file`},
		{`“curly” and 'single'`, `[curly] and [single]`},
		{`an "unclosed quote`, `an unclosed quote`},
		{`'it's here'`, `[it's here]`},
	}
	for _, tc := range tests {
		var b strings.Builder
		quotedSpans(tc.text, func(span string, quoted bool) {
			if quoted {
				b.WriteString("[" + span + "]")
			} else {
				b.WriteString(span)
			}
		})
		if b.String() != tc.want {
			t.Errorf("quotedSpans(%q) = %q, want %q", tc.text, b.String(), tc.want)
		}
	}
}

// Words in quotes are mostly the data a tool is given (a title, a search
// term, an index's name), not what it does: in a query for the note
// "Test plans", the quoted words count half, and the note still counts in
// full.
func TestSearchQuotedWordsAreData(t *testing.T) {
	docs := []Doc{
		{Server: "memory", Name: "read_note", Description: "Read a markdown note by its title or permalink."},
		{Server: "qa", Name: "get_plans", Description: "Get the test plans of a project."},
		{Server: "search", Name: "search", Description: "Search the documents of an index with a query."},
	}
	ix := NewIndex(docs)
	plans, note := docIndex(docs, "qa/get_plans"), docIndex(docs, "memory/read_note")
	quoted, bare := ix.Explain(`Find the note "Test plans"`, plans).Score, ix.Explain(`Find the note Test plans`, plans).Score
	if quoted <= 0 || quoted > 0.6*bare {
		t.Errorf("get_plans scores %.3f with the quoted title, %.3f with it bare; want at most 0.6 of it", quoted, bare)
	}
	quoted, bare = ix.Explain(`Find the note "Test plans"`, note).Score, ix.Explain(`Find the note Test plans`, note).Score
	if quoted <= 0 || math.Abs(quoted-bare) > 1e-6 {
		t.Errorf("read_note scores %.3f with the quoted title, %.3f with it bare; want the same", quoted, bare)
	}
}

// A catalogue's misspelt word ("strology") still answers the word the
// ranking knows ("astrology", and "horoscope" through it); a word one
// letter away that is another word ("discord" for "discard") does not.
func TestSearchMisspeltCatalogueWords(t *testing.T) {
	docs := []Doc{
		{Server: "s", Name: "StrologyTool", Description: "Povides strology services for you."},
		{Server: "s", Name: "zodiac_facts", Description: "Facts about the stars and planets."},
		{Server: "s", Name: "send_discord", Description: "Send a message to a Discord channel."},
		{Server: "s", Name: "trash_file", Description: "Move a file to the trash."},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"what does astrology say about me", "s/StrologyTool"},
		{"read my horoscope for today", "s/StrologyTool"},
	})
	if _, ok := ix.termOf(stem("discard")); ok {
		t.Errorf("discard matched a catalogue word; only discord is one letter away, and that is another word")
	}
	if hits, _ := ix.Search("discard", Options{}); len(hits) != 1 || docs[hits[0].Doc].Name != "trash_file" {
		t.Errorf("discard: hits %v, want trash_file alone (through its synonym trash)", hits)
	}
}

// Words that only qualify a request ("specific", "reliable", "options")
// weigh less than the words that name what it wants: a tool whose
// description happens to use them does not outrank the tool for the thing.
func TestSearchFillerWordsWeighLess(t *testing.T) {
	docs := []Doc{
		{Server: "s", Name: "market_news", Description: "Reliable updates on options and specific stocks."},
		{Server: "s", Name: "laptop_finder", Description: "Find a laptop."},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"specific reliable options for a laptop", "s/laptop_finder"},
	})
	if w := ix.Explain("specific", 0).Score; w <= 0 || w >= ix.Explain("stocks", 0).Score {
		t.Errorf("a filler word scores %.3f, a noun of the same rarity %.3f; want less", w, ix.Explain("stocks", 0).Score)
	}
}

// A number in a request ("3 days", "line 10") is data for the tool: a tool
// whose text happens to have the number does not outrank the tool for the
// words around it.
func TestSearchNumbersAreData(t *testing.T) {
	docs := []Doc{
		{Server: "chess", Name: "find_move", Description: "Replay the 2024 games 10 to 12 moves deep."},
		{Server: "stays", Name: "search_stays", Description: "Search homestays and rooms to rent, for a number of adults and children."},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"homestays for 2 adults from 2024 10 12", "stays/search_stays"},
	})
	if n, w := ix.Explain("2024", 0).Score, ix.Explain("replay", 0).Score; n <= 0 || n >= w {
		t.Errorf("a number scores %.3f, a word as rare %.3f; want less", n, w)
	}
}

// A tool named for a kind of file answers a request for another kind less:
// "save it to summary.md" wants write_file, not save_as_pdf, though both
// save; a request for a PDF still gets save_as_pdf.
func TestSearchOtherKindOfFile(t *testing.T) {
	docs := []Doc{
		{Server: "browser", Name: "save_as_pdf", Description: "Save the current page as a PDF file."},
		{Server: "fs", Name: "write_file", Description: "Create a new file or overwrite a file with new content."},
	}
	ix := NewIndex(docs)
	expectFirst(t, ix, docs, []struct{ query, want string }{
		{"save the notes to a file at /root/notes/summary.md", "fs/write_file"},
		{"Save the page as a PDF", "browser/save_as_pdf"},
	})
	ex := ix.Explain("save it to summary.md", 0)
	if !ex.OtherKind || !strings.Contains(ex.String(), "another kind of file") {
		t.Errorf("save_as_pdf for a markdown file: %s; want it to say it handles another kind", ex)
	}
	if ix.Explain("save it as report.pdf", 0).OtherKind {
		t.Errorf("save_as_pdf for a PDF is counted as another kind")
	}
}
