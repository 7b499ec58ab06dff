package statuspage

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/registry"
)

// pageHub is a daemon with a server in each state, tools, sessions, a
// project waiting for trust and a pending approval.
func pageHub() *fakeHub {
	now := time.Now()
	return &fakeHub{
		daemon: DaemonFacts{Version: "v9.9.9", PID: 4242, StartedAt: now.Add(-90 * time.Second), Config: "/etc/mcpgw.json",
			Sessions: 2, Warnings: []string{"unknown field \"comand\""}},
		approvals: []api.PendingApproval{{ID: "ap-7", Session: "sess-1", Client: "claude-code 2.0", Server: "github", Tool: "delete_repo",
			Args: `repo: "mcpgw"`, Full: `{"repo":"mcpgw"}`, Rule: "approveTools: delete_*", Since: now.Add(-5 * time.Second), Deadline: now.Add(time.Minute)}},
		servers: []ServerFacts{
			{Name: "github", Enabled: true, Remote: true, Tools: 2, Source: "/etc/mcpgw.json", Line: 12, Listing: "live", P50: 1500 * time.Microsecond,
				Policy: []registry.PolicyItem{{Rule: registry.RuleExcludeTools, Tools: []string{"admin_*"}}, {Rule: registry.RuleApproveTools,
					Approval: registry.Approval{Set: true, All: true}, Field: "settings.approveTools", Inherited: true}},
				Upstream: &UpstreamFacts{Name: "github", State: "connected", Calls: 17}},
			{Name: "broken", Enabled: true, Tools: 1, Upstream: &UpstreamFacts{Name: "broken", State: "failed", LastError: "exit status 3"}},
			{Name: "oauthy", Enabled: true, Remote: true, OAuth: true, Upstream: &UpstreamFacts{Name: "oauthy", State: "needs-auth"}},
			{Name: "slow", Enabled: true, Upstream: &UpstreamFacts{Name: "slow", State: "connecting"}},
			{Name: "parked", DisabledHere: true},
			{Name: "proj-db", Untrusted: true, Source: "/home/u/other/.mcp.json"},
		},
		tools: map[string][]ToolFacts{"github": {
			{Name: "search_issues", Description: "Finds issues\nin every repository", Params: "query: string"},
			{Name: "delete_repo", Description: "Deletes a repository", Params: "repo: string"}}},
		logs:   map[string][]string{"github": {"connected in 40ms"}},
		stderr: map[string][]string{"github": {"listening"}},
		sessions: []SessionFacts{
			{ClientName: "claude-code", ClientVersion: "2.0", HTTP: true, Protocol: "2025-06-18", Mode: "proxy", Dir: "/home/u/proj", Activated: 3, LastActive: now.Add(-time.Second),
				Servers: []string{"github"}},
			{ClientName: "pi", ClientVersion: "1.5", Shim: true, Protocol: "2026-07-28", Mode: "direct", Servers: []string{"github", "broken"},
				Project: &ProjectFacts{Dir: "/home/u/other", Servers: []ProjectServer{{Name: "local-db", Run: "npx db-server --password ****"}}}},
		},
	}
}

// The page shows every part of the Data: the summary, each server's row
// with its state's class and its actions, its log and tools, the
// sessions, the project waiting for trust with its two forms, the pending
// approval with its four decisions.
func TestPageRenders(t *testing.T) {
	t.Parallel()
	d := pageHub()
	w := serve(d, request("GET", "/", "", false))
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body.String())
	}
	for h, want := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"Cache-Control":           "no-store",
		"Content-Security-Policy": "default-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; frame-ancestors 'none'",
	} {
		if got := w.Header().Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	body := w.Body.String()
	for _, want := range []string{
		"<title>mcpgw — 1/6 servers</title>",
		"v9.9.9 · pid 4242 · up 1m30s · 2 sessions · 1/6 servers connected · 3 tools",
		"<code>/etc/mcpgw.json</code>",
		`<li>unknown field &#34;comand&#34;</li>`,
		// rows, with the colour of their state
		`<tr class="state-ok" id="server-github">`,
		`<tr class="state-bad" id="server-broken">`,
		`<tr class="state-bad" id="server-oauthy">`,
		`<tr class="state-wait" id="server-slow">`,
		`<tr class="state-off" id="server-parked">`,
		`<tr class="state-off" id="server-proj-db">`,
		"<td>untrusted</td>",
		"<td>disabled</td>",
		"<td>failed</td>",
		`<td><code>/etc/mcpgw.json:12</code></td>`,
		"<td>1.5 ms</td>", // github's p50
		`<p class="policy">excluded: [&#34;admin_*&#34;] · approveTools true (settings.approveTools)</p>`,
		`<pre>exit status 3</pre>`,
		`not logged in: <code>mcpgw login oauthy</code>`,
		`<form method="post" action="/-/login" class="inline"><input type="hidden" name="server" value="oauthy">`,
		`<form method="post" action="/-/connect" class="inline"><input type="hidden" name="server" value="github"><button>Reconnect</button></form>`,
		`<form method="post" action="/-/disable" class="inline"><input type="hidden" name="server" value="broken"><button>Disable</button></form>`,
		`<form method="post" action="/-/enable" class="inline"><input type="hidden" name="server" value="parked"><button>Enable</button></form>`,
		// logs and tools
		"<pre>connected in 40ms\n</pre>",
		"<pre>listening\n</pre>",
		"<h3>2 tools</h3>",
		"<li><code>search_issues</code>(query: string) Finds issues</li>", // the first line of its description
		"<li><code>delete_repo</code>(repo: string) Deletes a repository</li>",
		// sessions
		"<tr><td>claude-code 2.0</td><td>http</td><td>2025-06-18</td><td>proxy</td><td><code>/home/u/proj</code></td><td>3</td><td>1s</td></tr>",
		"<tr><td>pi 1.5</td><td>socket</td><td>2026-07-28</td><td>direct</td><td><code></code></td><td>0</td><td></td></tr>",
		"<td>17<br><small>from 2 sessions</small></td>", // github's calls, and the sessions that made them
		"<td>0<br><small>from 1 session</small></td>",   // broken's
		// the project waiting for trust
		"Project waiting for trust: <code>/home/u/other</code>",
		"<li><strong>local-db</strong>: <code>npx db-server --password ****</code></li>",
		`<form method="post" action="/-/trust" class="inline"><input type="hidden" name="dir" value="/home/u/other"><button>Trust /home/u/other</button></form>`,
		`<form method="post" action="/-/refuse" class="inline"><input type="hidden" name="dir" value="/home/u/other"><button>Refuse</button></form>`,
		// the approval
		`<div class="approval" id="approval-ap-7"><p><strong>delete_repo</strong> on <strong>github</strong> · session <code>sess-1</code> (claude-code 2.0) · waiting 5s`,
		"<small>approveTools: delete_*</small>",
		"<pre>{&#34;repo&#34;:&#34;mcpgw&#34;}</pre>",
		`<input type="hidden" name="id" value="ap-7"><input type="hidden" name="decision" value="once"><button>Allow once</button>`,
		`<input type="hidden" name="id" value="ap-7"><input type="hidden" name="decision" value="tool"><button>Allow this tool for the session</button>`,
		`<input type="hidden" name="id" value="ap-7"><input type="hidden" name="decision" value="server"><button>Allow this server for the session</button>`,
		`<input type="hidden" name="id" value="ap-7"><input type="hidden" name="decision" value="deny"><button>Deny</button>`,
		"<code>mcpgw approve ap-7</code>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Only servers that are on and trusted have Reconnect; only those
	// disabled here, Enable.
	if n := strings.Count(body, "<button>Reconnect</button>"); n != 4 {
		t.Errorf("%d Reconnect buttons, want 4 (github, broken, oauthy, slow)", n)
	}
	if n := strings.Count(body, "<button>Enable</button>"); n != 1 {
		t.Errorf("%d Enable buttons, want 1 (parked)", n)
	}
	if got := d.Actions(); len(got) != 0 {
		t.Errorf("the page asked for %q", got)
	}
	// The stderr of servers that are on; the logs of every name.
	for _, want := range []string{`Stderr("github", 20)`, `Stderr("broken", 20)`, `Log("parked")`, `Log("proj-db")`} {
		if !slices.Contains(d.Calls(), want) {
			t.Errorf("the page did not ask %s: %q", want, d.Calls())
		}
	}
	for _, unwanted := range []string{`Stderr("parked", 20)`, `Stderr("proj-db", 20)`} {
		if slices.Contains(d.Calls(), unwanted) {
			t.Errorf("the page asked %s", unwanted)
		}
	}
}

// A search of the tools (?q=) is asked of the daemon and its results shown
// with their scores and why they ranked; none says so.
func TestPageSearch(t *testing.T) {
	t.Parallel()
	d := pageHub()
	d.hits = []Hit{{Tool: "github_search_issues", Description: "Finds issues\nacross repositories " + strings.Repeat("and more ", 30), Score: 3.14159, Why: "name: issues ×2"}}
	body := serve(d, request("GET", "/?q=issues", "", false)).Body.String()
	for _, want := range []string{
		"<h2>Search: issues</h2>",
		`<li><strong>github_search_issues</strong> <small>(3.14)</small> Finds issues<details><summary>why</summary><pre>name: issues ×2</pre></details></li>`,
		`<input name="q" value="issues"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if got := d.Actions(); !slices.Equal(got, []string{`Search("issues", 10)`}) {
		t.Errorf("actions %q", got)
	}

	body = serve(&fakeHub{}, request("GET", "/?q=nothing", "", false)).Body.String()
	for _, want := range []string{"<p>No tool matches.</p>", "<p>No sessions.</p>", "<title>mcpgw — 0/0 servers</title>"} {
		if !strings.Contains(body, want) {
			t.Errorf("the empty page lacks %q", want)
		}
	}
	for _, unwanted := range []string{`id="approvals"`, `id="pending"`, "Config warnings"} {
		if strings.Contains(body, unwanted) {
			t.Errorf("the empty page has %q", unwanted)
		}
	}
}

// Strings that come from configs, upstreams and clients (server and tool
// names, descriptions, errors, approval arguments, session clients,
// search queries) are escaped for where they land: never markup, never
// out of their attribute.
func TestPageEscapes(t *testing.T) {
	t.Parallel()
	const (
		tag   = `<script>alert(1)</script>`
		quote = `x" onmouseover="alert(2)`
	)
	h := &fakeHub{
		daemon:    DaemonFacts{Warnings: []string{tag}},
		approvals: []api.PendingApproval{{ID: quote, Server: tag, Tool: tag, Args: `{"cmd":"` + tag + `"}`, Full: `{"cmd":"` + tag + `"}`, Client: tag, Session: tag, Rule: tag}},
		servers: []ServerFacts{
			{Name: quote, Enabled: true, Source: tag, Upstream: &UpstreamFacts{State: "failed", LastError: tag}},
			{Name: tag, Enabled: true, Upstream: &UpstreamFacts{State: "connected"}}},
		stderr:   map[string][]string{quote: {tag}},
		logs:     map[string][]string{quote: {tag}},
		tools:    map[string][]ToolFacts{quote: {{Name: tag, Description: tag + " does things", Params: tag}}},
		sessions: []SessionFacts{{ClientName: tag, Protocol: tag, Mode: tag, Dir: tag, Project: &ProjectFacts{Dir: quote, Servers: []ProjectServer{{Name: tag, Run: tag}}}}},
		hits:     []Hit{{Tool: tag, Description: tag, Why: tag}},
	}
	body := serve(h, request("GET", "/?q="+url.QueryEscape(quote), "", false)).Body.String()
	if n := strings.Count(body, "<script>"); n != 1 {
		t.Errorf("%d <script> tags, want the page's own only", n)
	}
	for _, unwanted := range []string{"<script>alert", `" onmouseover="`, `"alert(2)`} {
		if strings.Contains(body, unwanted) {
			t.Errorf("the page has %q unescaped", unwanted)
		}
	}
	for _, want := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt; does things",                          // a tool's description
		"<pre>{&#34;cmd&#34;:&#34;&lt;script&gt;alert(1)&lt;/script&gt;&#34;}</pre>", // an approval's arguments
		`value="x&#34; onmouseover=&#34;alert(2)"`,                                   // in an attribute
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// With Accept: application/json, GET / is the Data as JSON, with the
// connected servers counted.
func TestPageJSON(t *testing.T) {
	t.Parallel()
	d := pageHub()
	r := request("GET", "/?q=x", "", false)
	r.Header.Set("Accept", "application/json")
	w := serve(d, r)
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", w.Code, w.Header().Get("Content-Type"))
	}
	var got struct {
		Version   string `json:"version"`
		Connected int    `json:"connected"`
		Servers   []struct {
			Name     string `json:"name"`
			State    string `json:"state"`
			ToolList []Tool `json:"toolList"`
		} `json:"servers"`
		SessionList []Session             `json:"sessionList"`
		Pending     []Project             `json:"pending"`
		Approvals   []api.PendingApproval `json:"approvals"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, w.Body.String())
	}
	if got.Version != "v9.9.9" || got.Connected != 1 || len(got.Servers) != 6 || got.Servers[0].Name != "github" ||
		len(got.Servers[0].ToolList) != 2 || got.Servers[0].ToolList[1].Name != "delete_repo" ||
		len(got.SessionList) != 2 || got.SessionList[1].Client != "pi 1.5" ||
		len(got.Pending) != 1 || got.Pending[0].Dir != "/home/u/other" ||
		len(got.Approvals) != 1 || got.Approvals[0].ID != "ap-7" {
		t.Errorf("got %+v", got)
	}
	if got := d.Actions(); !slices.Equal(got, []string{`Search("x", 10)`}) {
		t.Errorf("actions %q", got)
	}
}

// The token form's POST / shows the page too.
func TestPagePost(t *testing.T) {
	t.Parallel()
	w := serve(pageHub(), request("POST", "/", "token=x", true))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `id="server-github"`) {
		t.Errorf("%d %.200q", w.Code, w.Body.String())
	}
}
