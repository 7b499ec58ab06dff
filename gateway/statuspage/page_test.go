package statuspage

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
)

// pageData is a daemon with a server in each state, tools, sessions, a
// project waiting for trust and a pending approval.
func pageData() *Data {
	now := time.Now()
	return &Data{
		Report: &api.Report{Version: "v9.9.9", PID: 4242, StartedAt: now.Add(-90 * time.Second), Config: "/etc/mcpgw.json",
			Sessions: 2, Tools: 3,
			Approvals: []api.PendingApproval{{ID: "ap-7", Session: "sess-1", Client: "claude-code 2.0", Server: "github", Tool: "delete_repo",
				Args: `repo: "mcpgw"`, Full: `{"repo":"mcpgw"}`, Rule: "approveTools: delete_*", Since: now.Add(-5 * time.Second), Deadline: now.Add(time.Minute)}},
			Warnings: []string{"unknown field \"comand\""},
		},
		Servers: []Server{
			{ServerReport: api.ServerReport{Name: "github", State: "connected", Tools: 2, Calls: 17, Transport: "http", Source: "/etc/mcpgw.json", Line: 12},
				Actionable: true, Daemon: []string{"connected in 40ms"}, Stderr: []string{"listening"},
				ToolList: []Tool{{Name: "search_issues", Description: "Finds issues", Params: "query: string"}, {Name: "delete_repo", Description: "Deletes a repository", Params: "repo: string"}}},
			{ServerReport: api.ServerReport{Name: "broken", State: "failed", LastError: "exit status 3", Transport: "stdio"}, Actionable: true},
			{ServerReport: api.ServerReport{Name: "oauthy", State: "needs-auth", Login: "none", Transport: "http"}},
			{ServerReport: api.ServerReport{Name: "slow", State: "connecting", Transport: "stdio"}},
			{ServerReport: api.ServerReport{Name: "parked", State: "disabled", DisabledHere: true, Transport: "stdio"}},
		},
		SessionList: []Session{
			{Client: "claude-code 2.0", Transport: "http", Protocol: "2025-06-18", Mode: "proxy", Dir: "/home/u/proj", Activated: 3, LastActive: now.Add(-time.Second)},
			{Client: "pi 1.5", Transport: "socket", Protocol: "2026-07-28", Mode: "direct"},
		},
		Pending: []Project{{Dir: "/home/u/other", Servers: []ProjectServer{{Name: "local-db", Run: "npx db-server --password ****"}}}},
	}
}

// The page shows every part of the Data: the summary, each server's row
// with its state's class and its actions, its log and tools, the
// sessions, the project waiting for trust with its two forms, the pending
// approval with its four decisions.
func TestPageRenders(t *testing.T) {
	t.Parallel()
	d := &fakeDaemon{data: pageData()}
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
		"<title>mcpgw — 1/5 servers</title>",
		"v9.9.9 · pid 4242 · up 1m30s · 2 sessions · 1/5 servers connected · 3 tools",
		"<code>/etc/mcpgw.json</code>",
		`<li>unknown field &#34;comand&#34;</li>`,
		// rows, with the colour of their state
		`<tr class="state-ok" id="server-github">`,
		`<tr class="state-bad" id="server-broken">`,
		`<tr class="state-bad" id="server-oauthy">`,
		`<tr class="state-wait" id="server-slow">`,
		`<tr class="state-off" id="server-parked">`,
		`<td><code>/etc/mcpgw.json:12</code></td>`,
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
		"<li><code>search_issues</code>(query: string) Finds issues</li>",
		"<li><code>delete_repo</code>(repo: string) Deletes a repository</li>",
		// sessions
		"<tr><td>claude-code 2.0</td><td>http</td><td>2025-06-18</td><td>proxy</td><td><code>/home/u/proj</code></td><td>3</td><td>1s</td></tr>",
		"<tr><td>pi 1.5</td><td>socket</td><td>2026-07-28</td><td>direct</td><td><code></code></td><td>0</td><td></td></tr>",
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
	// Only actionable servers have Reconnect; only those disabled here, Enable.
	if n := strings.Count(body, "<button>Reconnect</button>"); n != 2 {
		t.Errorf("%d Reconnect buttons, want 2 (github, broken)", n)
	}
	if n := strings.Count(body, "<button>Enable</button>"); n != 1 {
		t.Errorf("%d Enable buttons, want 1 (parked)", n)
	}
	if calls := d.Calls(); !slices.Equal(calls, []string{`PageData("")`}) {
		t.Errorf("calls %q", calls)
	}
}

// A search of the tools (?q=) is asked of the daemon and its results shown
// with their scores and why they ranked; none says so.
func TestPageSearch(t *testing.T) {
	t.Parallel()
	data := pageData()
	data.Query = "issues"
	data.Results = []Result{{Tool: "github_search_issues", Description: "Finds issues", Score: 3.14159, Why: "name: issues ×2"}}
	d := &fakeDaemon{data: data}
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
	if calls := d.Calls(); !slices.Equal(calls, []string{`PageData("issues")`}) {
		t.Errorf("calls %q", calls)
	}

	empty := &Data{Report: &api.Report{}, Query: "nothing"}
	body = serve(&fakeDaemon{data: empty}, request("GET", "/?q=nothing", "", false)).Body.String()
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
	data := &Data{
		Report: &api.Report{Warnings: []string{tag},
			Approvals: []api.PendingApproval{{ID: quote, Server: tag, Tool: tag, Args: `{"cmd":"` + tag + `"}`, Full: `{"cmd":"` + tag + `"}`, Client: tag, Session: tag, Rule: tag}}},
		Servers: []Server{{ServerReport: api.ServerReport{Name: quote, State: "failed", LastError: tag, Source: tag}, Actionable: true,
			Stderr: []string{tag}, Daemon: []string{tag},
			ToolList: []Tool{{Name: tag, Description: tag + " does things", Params: tag}}},
			{ServerReport: api.ServerReport{Name: tag, State: "connected"}}},
		SessionList: []Session{{Client: tag, Transport: tag, Protocol: tag, Mode: tag, Dir: tag}},
		Pending:     []Project{{Dir: quote, Servers: []ProjectServer{{Name: tag, Run: tag}}}},
		Query:       quote,
		Results:     []Result{{Tool: tag, Description: tag, Why: tag}},
	}
	body := serve(&fakeDaemon{data: data}, request("GET", "/?q=x", "", false)).Body.String()
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
	d := &fakeDaemon{data: pageData()}
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
	if got.Version != "v9.9.9" || got.Connected != 1 || len(got.Servers) != 5 || got.Servers[0].Name != "github" ||
		len(got.Servers[0].ToolList) != 2 || got.Servers[0].ToolList[1].Name != "delete_repo" ||
		len(got.SessionList) != 2 || got.SessionList[1].Client != "pi 1.5" ||
		len(got.Pending) != 1 || got.Pending[0].Dir != "/home/u/other" ||
		len(got.Approvals) != 1 || got.Approvals[0].ID != "ap-7" {
		t.Errorf("got %+v", got)
	}
	if calls := d.Calls(); !slices.Equal(calls, []string{`PageData("x")`}) {
		t.Errorf("calls %q", calls)
	}
}

// The token form's POST / shows the page too.
func TestPagePost(t *testing.T) {
	t.Parallel()
	d := &fakeDaemon{data: pageData()}
	w := serve(d, request("POST", "/", "token=x", true))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `id="server-github"`) {
		t.Errorf("%d %.200q", w.Code, w.Body.String())
	}
}
