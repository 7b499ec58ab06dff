package surface

import (
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// testView is a catalogue with server "github" (tools search_issues and
// delete_repo, prompt triage) and server "fs" (tool read_file).
func testView() *registry.View {
	cfg := &registry.Config{Servers: map[string]*registry.Server{
		"github": {Name: "github", URL: "https://h/mcp", Enabled: true, Hash: "gh"},
		"fs":     {Name: "fs", Command: "fs-mcp", Enabled: true, Hash: "fs"},
	}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer}}
	c := registry.NewCatalog(cfg)
	obj := map[string]any{"type": "object"}
	return c.SetListings(map[string]*registry.Listing{
		"gh": {Source: registry.SourceLive, Tools: []*mcp.Tool{{Name: "search_issues", InputSchema: obj}, {Name: "delete_repo", InputSchema: obj}},
			Prompts: []*mcp.Prompt{{Name: "triage"}}},
		"fs": {Source: registry.SourceLive, Tools: []*mcp.Tool{{Name: "read_file", InputSchema: obj}}},
	})
}

// Every sentence the model reads from mcpgw's own tools, as it reads it:
// the text of each answer, and whether it is an error.
func TestSentences(t *testing.T) {
	t.Parallel()
	v := testView()
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		res     *mcp.CallToolResult
		want    string
		isError bool
	}{
		// the mcp tool
		{"invalid mcp args", InvalidMCPArgs(boom), `Invalid arguments for mcp: boom. Use mcp({}) for status or mcp({tool:"name",args:{...}}) to call a tool.`, true},
		{"args without tool", ArgsWithoutTool(), `args given without tool: say which tool to call, e.g. mcp({tool:"server_tool",args:{...}}). Find tools with mcp({search:"words"}).`, true},
		{"unknown mcp args", UnknownMCPArgs([]string{"qeury", "limt"}), "Unknown argument(s) qeury, limt for mcp. It takes tool+args, search, describe, server, connect, prompts, prompt+args, script or read; mcp({}) shows status.", true},
		{"server disabled", ServerDisabled("fs", "/home/u/mcp.json"), `Server "fs" is disabled in /home/u/mcp.json.`, true},
		{"connect failed", ConnectFailed("fs", boom), "Connecting fs: boom", true},
		{"untrusted server", Text(UntrustedServer("db", "/home/u/p/.mcp.json")), "Server \"db\" comes from /home/u/p/.mcp.json, in a project you have not trusted; it is never started. Run `mcpgw trust DIR` on the project directory to allow it.", false},
		{"encoding failed", EncodingFailed(boom), "encoding the result: boom", true},
		// prompts
		{"unknown prompt, like one", UnknownPrompt(v, "triag"), `Unknown prompt "triag". Did you mean: github_triage? List prompts with mcp({prompts:true}).`, true},
		{"unknown prompt", UnknownPrompt(v, "zzz"), `Unknown prompt "zzz". List prompts with mcp({prompts:true}).`, true},
		{"invalid prompt args", InvalidPromptArgs("github_triage", boom), "Invalid args for prompt github_triage: boom (want an object of strings).", true},
		{"prompt failed", PromptFailed("github_triage", boom), "Getting prompt github_triage: boom", true},
		{"prompt without messages", PromptMessages(&mcp.GetPromptResult{}), "(the prompt has no messages)", false},
		{"prompt messages", PromptMessages(&mcp.GetPromptResult{Description: "Triage an issue", Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: "Look at #4"}}, nil, {Role: "assistant", Content: &mcp.TextContent{Text: "On it"}}}}),
			"Triage an issue\n[user] Look at #4\n[assistant] On it", false},
		// saved results
		{"no saved results", NoSavedResults(), "This daemon keeps no saved results.", true},
		{"not saved", NotSaved("r-1.txt"), `No saved result "r-1.txt" in this session: saved results are kept for a while (settings.savedResultsMaxAge), then removed; a session reads only those it was given.`, true},
		{"binary", BinaryResult("r-2", "/run/mcpgw/results"), "r-2 is binary data: read the file /run/mcpgw/results/r-2 with a tool that handles its type.", true},
		{"read failed", ReadFailed("r-1.txt", boom), "Reading r-1.txt: boom", true},
		{"a range, more to read", ResultRange("r-1.txt", 10, []byte("hello"), 100), "[r-1.txt: bytes 10–15 of 100; read on with mcp({read: \"r-1.txt\", offset: 15})]\nhello", false},
		{"the last range", ResultRange("r-1.txt", 95, []byte("world"), 100), "[r-1.txt: bytes 95–100 of 100]\nworld", false},
		// scripts
		{"invalid script args", InvalidScriptArgs(boom), `Invalid arguments for mcp_script: boom. It takes {script: "...", timeoutMs?: number}.`, true},
		{"scripts off", ScriptsOff(), "Scripts are turned off (settings.scripts is false).", true},
		{"no script", NoScript(), `No script: give the body of an async function, e.g. const r = await tools.call("server_tool", {...}); return r.data;`, true},
		{"too many in the session", TooManyScripts(true, 2), "Too many scripts running in this session (limit 2, settings.scriptsPerSession): wait for one to finish, then run this one again.", true},
		{"too many in mcpgw", TooManyScripts(false, 8), "Too many scripts running in mcpgw (limit 8, settings.scriptsPerDaemon): wait for one to finish, then run this one again.", true},
		// ToolSearch
		{"invalid ToolSearch args", InvalidToolSearchArgs(boom), `Invalid arguments for ToolSearch: boom. Use ToolSearch({query:"words"}).`, true},
		{"no query", NoQuery(), `ToolSearch needs a query: keywords, a task description, or "select:name1,name2".`, true},
		{"ToolSearch failed", ToolSearchFailed("a[", boom), `ToolSearch "a[": boom`, true},
	} {
		if got := ResultText(tc.res); got != tc.want || tc.res.IsError != tc.isError {
			t.Errorf("%s:\n got %q (isError %v)\nwant %q (isError %v)", tc.name, got, tc.res.IsError, tc.want, tc.isError)
		}
	}
	for _, tc := range []struct{ name, got, want string }{
		{"list connect failed", ListConnectFailed("fs", boom), "Connecting fs to list its tools: boom\n"},
		{"no match", NoToolsMatch("zebra", false), `No tools match "zebra".`},
		{"no match, nothing known", NoToolsMatch("zebra", true), `No tools match "zebra". No tools are known yet.`},
		{"instructions", InstructionsFrom("github", "Use search first."), "Instructions from github:\nUse search first.\n"},
		{"unknown tool, like one", UnknownToolFor(v, "github_search_issue", Naming{}), `Unknown tool "github_search_issue". Did you mean: github_search_issues?`},
		{"unknown tool, as the client names them", UnknownToolFor(v, "github_search_issue", NamingFor("mcp__gw__", nil)), `Unknown tool "github_search_issue". Did you mean: mcp__gw__github_search_issues?`},
		{"unknown tool", UnknownToolFor(v, "zzzz", Naming{}), `Unknown tool "zzzz".`},
		{"nothing missing", DiscoveryNote(nil, nil), ""},
		{"starting and failed", DiscoveryNote([]ServerWait{{"github", 3 * time.Second}, {"fs", 90 * time.Second}},
			[]ServerFailure{{"db", "exit status 1"}, {"api", "401"}}),
			"\nStill starting, tools not known yet: github (for 3s), fs (for 1m30s). Ask again shortly.\nNot available: db: exit status 1; api: 401."},
		{"failure with stderr", FailureReason("exit status 1\nmore", "  GITHUB_TOKEN is not set  "), "exit status 1 (stderr: GITHUB_TOKEN is not set)"},
		{"failure carrying stderr", FailureReason("GITHUB_TOKEN is not set", "GITHUB_TOKEN is not set"), "GITHUB_TOKEN is not set"},
		{"failure without stderr", FailureReason("connection refused", ""), "connection refused"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
	}
}
