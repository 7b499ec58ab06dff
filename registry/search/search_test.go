package search

import (
	"errors"
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
		{"获取八字信息", []string{"获取", "取八", "八字", "字信", "信息"}},
		{"查询12306余票", []string{"查询", "12306", "余票"}},
		{"汤, 早餐", []string{"汤", "早餐"}},
		{"東京タワー行き", []string{"東京", "京タ", "タワ", "ワー", "ー行", "行き"}},
		{"날씨 예보", []string{"날씨", "예보"}},
		{"get天气forecast", []string{"get", "天气", "forecast"}},
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
	names, descriptions, _ := schemaWords([]byte(schema), nil, nil, nil)
	slices.Sort(names)
	slices.Sort(descriptions)
	if want := []string{"dry", "files", "filter", "label", "mode", "name", "owner", "repo", "repoowner", "run"}; !slices.Equal(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
	if want := []string{"label", "owner", "pretend", "repository"}; !slices.Equal(descriptions, want) {
		t.Errorf("descriptions = %q, want %q", descriptions, want)
	}
	for _, bad := range []string{``, `null`, `[1,2]`, `{"properties":`} {
		n, d, _ := schemaWords([]byte(bad), nil, nil, nil)
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
