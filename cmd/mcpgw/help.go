package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// cmdDoc is what `mcpgw help CMD` and `mcpgw CMD -h` say about a command,
// in the style of the go command: usage, what it does, flags, examples.
type cmdDoc struct {
	usage    string   // after "mcpgw "
	summary  string   // one line
	examples []string // command lines, each with a comment after "#"
	more     string   // further paragraphs, if any
}

var docs = map[string]cmdDoc{
	"serve": {"serve [flags]", "Serve runs the daemon: MCP over Streamable HTTP on --listen and over the unix socket the `mcpgw stdio` shim dials, in front of the configured upstream servers.",
		[]string{"mcpgw serve                              # defaults: 127.0.0.1:7332, the config in ~/.config/mcpgw/mcp.json", "mcpgw serve --listen 127.0.0.1:8080 --log-level debug", "mcpgw serve --stdio --mode direct         # one private session on stdin/stdout"}, ""},
	"stdio": {"stdio [flags]", "Stdio connects an MCP client that speaks stdio to the daemon, starting the daemon if none runs; configure it as the command of a single MCP server in your client.",
		[]string{`{"mcpServers": {"mcpgw": {"command": "mcpgw", "args": ["stdio"]}}}   # in the client's config`, "mcpgw stdio --mode toolsearch"}, ""},
	"status": {"status [--json]", "Status shows what the running daemon is doing: servers, their state and tools, sessions, the last reload.",
		[]string{"mcpgw status", "mcpgw status --json | jq '.servers[] | {name, state}'"}, ""},
	"ui":       {"ui [--print]", "Ui opens the daemon's status page in the browser.", []string{"mcpgw ui", "mcpgw ui --print    # only print its address"}, ""},
	"logs":     {"logs [-f] SERVER", "Logs prints the daemon's recent log lines about a server, its stderr included.", []string{"mcpgw logs github", "mcpgw logs -f github"}, ""},
	"tools":    {"tools [--server S]", "Tools lists the tools of the configured servers, from the cache or live.", []string{"mcpgw tools", "mcpgw tools --server github"}, ""},
	"search":   {"search WORDS...", "Search finds tools by what they do, as the mcp tool's search does.", []string{"mcpgw search create pull request"}, ""},
	"describe": {"describe TOOL", "Describe shows a tool's description and parameters.", []string{"mcpgw describe github_create_pull_request"}, ""},
	"call":     {"call TOOL [JSON]", "Call calls a tool through the daemon with arguments given as a JSON object.", []string{`mcpgw call github_search_code '{"query":"mcpgw"}'`}, ""},
	"connect":  {"connect SERVER", "Connect connects a server now (or again), bypassing its backoff, and shows what it lists.", []string{"mcpgw connect github"}, ""},
	"login": {"login [--paste] [--timeout 5m] SERVER", "Login logs in to a remote server that uses OAuth: it opens the authorization page, and the daemon keeps and refreshes the tokens.",
		[]string{"mcpgw login linear", "mcpgw login --paste linear    # over SSH: open the URL elsewhere, paste the address it ends on"},
		`SERVER is a remote server with "auth": "oauth". The login is stored where
the daemon finds it, so that every session can use the server across
daemon restarts. The authorization URL opens with $BROWSER, else xdg-open
or open, and is always printed. On a machine without a browser (SSH),
--paste: open the URL anywhere, then paste the address the browser ends on
(it starts with the redirect URI).`},
	"logout": {"logout [--all] SERVER", "Logout forgets a server's OAuth tokens (with --all, the registered client too).", []string{"mcpgw logout linear"}, ""},
	"reload": {"reload", "Reload makes the daemon read its configuration again (it also does so when the file changes).", []string{"mcpgw reload"}, ""},
	"check": {"check [--config FILE] [--project DIR]", "Check loads the configuration as the daemon would, with its imports, and lists the servers, where each comes from, and what is wrong (unknown fields, commands not on the daemon's PATH).",
		[]string{"mcpgw check", "mcpgw check --project ~/src/app    # what a session working there sees"}, ""},
	"trust":   {"trust DIR | --list", "Trust lets the project files under DIR (.mcp.json, .pi/mcp.json) start servers.", []string{"mcpgw trust ~/src/app", "mcpgw trust --list"}, ""},
	"untrust": {"untrust DIR", "Untrust stops trusting DIR's project files.", []string{"mcpgw untrust ~/src/app"}, ""},
	"service": {"service install|uninstall|status [--dry-run]", "Service runs the daemon as a user service: systemd on Linux, launchd on macOS.",
		[]string{"mcpgw service install", "mcpgw service install --dry-run    # show the file and the commands", "mcpgw service status"}, ""},
	"healthcheck": {"healthcheck [--url URL]", "Healthcheck exits 0 if the daemon answers /healthz: for container health checks.", []string{"mcpgw healthcheck"}, ""},
	"bench": {"bench search --catalog FILE --queries FILE [--k 10] [--explain N]", "Bench measures the search ranking that ToolSearch and mcp({search}) use on your own catalogue: R@1, R@5, R@10 and MRR over the queries, and the latency of one search.",
		[]string{"mcpgw bench search --catalog ~/.pi/agent/mcp-cache.json --queries mine.jsonl --explain 5"},
		`The catalogue is in the metadata cache's shape
({"version":1,"servers":{NAME:{"tools":[...]}}}, e.g. mcpgw's own cache
file); queries are JSON Lines of {"query": "...", "relevant": ["server/tool"]}.
--explain N shows, for N queries whose first result is not relevant, why
that result and the relevant tool scored what they did, term by term.`},
	"completion": {"completion bash|zsh|fish", "Completion prints a shell completion script, with server names from the configuration.",
		[]string{"source <(mcpgw completion bash)", "mcpgw completion fish > ~/.config/fish/completions/mcpgw.fish"}, ""},
	"version": {"version", "Version prints mcpgw's version.", []string{"mcpgw version"}, ""},
}

// newFlagSet is a subcommand's flag set, writing to stderr, whose -h
// prints the command's documentation.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { writeDoc(fs.Output(), name, fs) }
	return fs
}

// writeDoc prints the documentation of command name (its flags from fs,
// if any).
func writeDoc(w io.Writer, name string, fs *flag.FlagSet) {
	d, ok := docs[strings.Fields(name)[0]]
	if !ok {
		d = cmdDoc{usage: name + " [flags]"}
	}
	fmt.Fprintf(w, "usage: mcpgw %s\n", d.usage)
	if d.summary != "" {
		fmt.Fprintf(w, "\n%s\n", d.summary)
	}
	if d.more != "" {
		fmt.Fprintf(w, "\n%s\n", d.more)
	}
	hasFlags := false
	if fs != nil {
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	}
	if hasFlags {
		fmt.Fprintln(w, "\nFlags:")
		fs.PrintDefaults()
	}
	if len(d.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range d.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}
