package statuspage

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/registry"
)

// A server's row of the report: its state in a word from its definition,
// its connection and what is known of its tools; its counts, those of its
// own name when it shares its process; its login, worded; its transport.
func TestServerReport(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	since := now.Add(-time.Minute)
	for _, tc := range []struct {
		name string
		f    ServerFacts
		want api.ServerReport
	}{
		{"untrusted", ServerFacts{Name: "p", Untrusted: true, Tools: 2, Source: "/p/.mcp.json", Line: 3, Lifecycle: "lazy"},
			api.ServerReport{Name: "p", State: "untrusted", Tools: 2, Source: "/p/.mcp.json", Line: 3, Lifecycle: "lazy", Transport: "stdio"}},
		{"disabled in the config", ServerFacts{Name: "d"},
			api.ServerReport{Name: "d", State: "disabled", Transport: "stdio"}},
		{"disabled from the page", ServerFacts{Name: "d", DisabledHere: true, Upstream: &UpstreamFacts{State: "connected", Calls: 3}},
			api.ServerReport{Name: "d", State: "disabled", DisabledHere: true, Transport: "stdio"}},
		{"connected", ServerFacts{Name: "c", Enabled: true, Remote: true, Tools: 4, Resources: 2, Listing: registry.SourceLive, P50: 1500 * time.Microsecond,
			Upstream: &UpstreamFacts{Name: "c", State: "connected", Since: since, PID: 42, Calls: 9, Errors: 1, LastError: "boom"}},
			api.ServerReport{Name: "c", State: "connected", Transport: "http", Tools: 4, Resources: 2, Listing: "live", P50Ms: 1.5,
				Since: since, PID: 42, Calls: 9, Errors: 1, LastError: "boom"}},
		{"connecting", ServerFacts{Name: "c", Enabled: true, Upstream: &UpstreamFacts{State: "connecting"}},
			api.ServerReport{Name: "c", State: "connecting", Transport: "stdio"}},
		{"failed, retried later", ServerFacts{Name: "f", Enabled: true, Upstream: &UpstreamFacts{State: "failed", NextRetry: now.Add(time.Minute), LastError: "exit status 1"}},
			api.ServerReport{Name: "f", State: "failed", NextRetry: now.Add(time.Minute), LastError: "exit status 1", Transport: "stdio"}},
		{"needs a login", ServerFacts{Name: "o", Enabled: true, Remote: true, OAuth: true, Upstream: &UpstreamFacts{State: "needs-auth"}},
			api.ServerReport{Name: "o", State: "needs-auth", Transport: "http", Login: "none"}},
		{"closed, its tools from the cache", ServerFacts{Name: "i", Enabled: true, Listing: registry.SourceCache, Upstream: &UpstreamFacts{State: "idle"}},
			api.ServerReport{Name: "i", State: "cached", Listing: "cache", Transport: "stdio"}},
		{"closed, its tools from the previous config", ServerFacts{Name: "i", Enabled: true, Listing: registry.SourcePrevious, Upstream: &UpstreamFacts{State: "idle"}},
			api.ServerReport{Name: "i", State: "cached", Listing: "previous", Transport: "stdio"}},
		{"closed after it was connected", ServerFacts{Name: "i", Enabled: true, Listing: registry.SourceLive, Upstream: &UpstreamFacts{State: "idle"}},
			api.ServerReport{Name: "i", State: "idle-closed", Listing: "live", Transport: "stdio"}},
		{"never connected", ServerFacts{Name: "n", Enabled: true, Upstream: &UpstreamFacts{State: "idle"}},
			api.ServerReport{Name: "n", State: "not connected", Transport: "stdio"}},
		{"no upstream told", ServerFacts{Name: "n", Enabled: true},
			api.ServerReport{Name: "n", State: "not connected", Transport: "stdio"}},
		{"sharing its process", ServerFacts{Name: "gh", Enabled: true, Upstream: &UpstreamFacts{Name: "github", Aliases: []string{"gh", "hub"}, State: "connected",
			Calls: 10, Errors: 2, ByName: map[string]Counts{"gh": {Calls: 3, Errors: 1}, "github": {Calls: 7, Errors: 1}}}},
			api.ServerReport{Name: "gh", State: "connected", Transport: "stdio", Upstream: "github", SharedWith: []string{"github", "hub"}, Calls: 3, Errors: 1}},
		{"logged in", ServerFacts{Name: "o", Enabled: true, OAuth: true, Login: LoginFacts{Token: true, Expiry: now.Add(time.Hour)}, Upstream: &UpstreamFacts{State: "connected"}},
			api.ServerReport{Name: "o", State: "connected", Transport: "stdio", Login: "logged in", TokenExpiry: now.Add(time.Hour)}},
		{"logged in, no expiry", ServerFacts{Name: "o", Enabled: true, OAuth: true, Login: LoginFacts{Token: true}, Upstream: &UpstreamFacts{State: "connected"}},
			api.ServerReport{Name: "o", State: "connected", Transport: "stdio", Login: "logged in"}},
		{"token expired, refreshable", ServerFacts{Name: "o", Enabled: true, OAuth: true, Login: LoginFacts{Token: true, Expiry: since, Refreshable: true}, Upstream: &UpstreamFacts{State: "connected"}},
			api.ServerReport{Name: "o", State: "connected", Transport: "stdio", Login: "logged in (refresh due)", TokenExpiry: since}},
		{"token expired", ServerFacts{Name: "o", Enabled: true, OAuth: true, Login: LoginFacts{Token: true, Expiry: since}, Upstream: &UpstreamFacts{State: "needs-auth"}},
			api.ServerReport{Name: "o", State: "needs-auth", Transport: "stdio", Login: "expired", TokenExpiry: since}},
		{"an upstream per user", ServerFacts{Name: "p", Enabled: true, PerUser: true, UserUpstreams: 2, Yours: &UpstreamFacts{State: "connected", PID: 9}, Upstream: &UpstreamFacts{State: "connected", PID: 7}},
			api.ServerReport{Name: "p", State: "connected", Transport: "stdio", PID: 7, PerUser: true, UserProcesses: 2, YourState: "connected", YourPID: 9}},
		{"not OAuth: no login", ServerFacts{Name: "x", Enabled: true, Login: LoginFacts{Token: true}, Upstream: &UpstreamFacts{State: "connected"}},
			api.ServerReport{Name: "x", State: "connected", Transport: "stdio"}},
	} {
		if got := ServerReport(tc.f, now); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// Each rule of a server's policy is a phrase of the report, inherited ones
// with the field they come from.
func TestPolicyPhrases(t *testing.T) {
	t.Parallel()
	items := registry.DescribePolicy(&registry.Server{Command: "x",
		ApproveTools: registry.Approval{Set: true, Destructive: true, Field: "mcpServers.x.approveTools"}, AutoApprove: []string{"read_*"},
		IncludeTools: []string{"a", "b"}, IncludeAlso: [][]string{{"a"}}, ExcludeTools: []string{"b"}, DirectTools: []string{"a"},
		ExposeResources: new(bool), PolicyNotes: []string{`toolExposure "b": "hidden"`}},
		&registry.Config{Settings: registry.Settings{ExcludeTools: []string{"*_admin"}}})
	want := []string{
		`approveTools "destructive" (mcpServers.x.approveTools)`,
		`never asked: ["read_*"]`,
		`only: ["a", "b"]`,
		`and only: ["a"]`,
		`excluded: ["b"]`,
		`excluded: ["*_admin"] (settings.excludeTools)`,
		"environment: mcpgw's, less MCPGW_*",
		`direct tools: ["a"]`,
		"resources not as tools",
		`from toolExposure "b": "hidden"`,
	}
	if got := ServerReport(ServerFacts{Policy: items}, time.Now()).Policy; !reflect.DeepEqual(got, want) {
		t.Errorf("policy\n%q\nwant\n%q", got, want)
	}
	no := false
	for _, tc := range []struct {
		item registry.PolicyItem
		want string
	}{
		{registry.PolicyItem{Rule: registry.RuleInheritEnv, On: no}, "environment: only HOME LOGNAME PATH SHELL TERM USER, plus env"},
		{registry.PolicyItem{Rule: registry.RuleDirectTools, Tools: []string{}}, "no direct tools"},
		{registry.PolicyItem{Rule: registry.RuleDirectTools, Tools: []string{"*"}, Field: "settings.directTools", Inherited: true}, "direct tools: all (settings.directTools)"},
		{registry.PolicyItem{Rule: registry.RuleExposeResources, On: true}, "resources as tools"},
		{registry.PolicyItem{Rule: registry.RuleApproveTools, Approval: registry.Approval{Set: true, All: true}, Field: "settings.approveTools", Inherited: true}, "approveTools true (settings.approveTools)"},
		{registry.PolicyItem{Rule: registry.RuleVisibleTo, Principals: []string{"group:eng", "user:carol"}}, "visible only to group:eng, user:carol"},
		{registry.PolicyItem{Rule: registry.RuleVisibleTo, Principals: []string{"group:eng"}, Off: true}, "visible only to group:eng (no effect outside team mode)"},
		{registry.PolicyItem{Rule: registry.RuleApproveToolsFor, Principals: []string{"group:contractors"}, Approval: registry.Approval{Set: true, Destructive: true}}, `approveTools "destructive" for group:contractors`},
	} {
		if got := policyPhrase(tc.item); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.item, got, tc.want)
		}
	}
}

// The report is the daemon's facts, a row per server in the hub's order,
// the tools of every server counted, and the pending approvals;
// GET /-/status is it as JSON.
func TestReport(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)
	h := &fakeHub{
		daemon: DaemonFacts{Version: "v1", PID: 7, StartedAt: started, Config: "/c.json", Cache: "/cache.json", HTTP: "127.0.0.1:7332",
			HTTPError: "", Sessions: 3, Warnings: []string{"w"}, LastReload: &api.ReloadInfo{At: started, OK: true},
			Scripts: []api.ScriptReport{{ID: "s1", Outcome: "ok"}}},
		servers:   []ServerFacts{{Name: "b", Enabled: true, Tools: 2}, {Name: "a", Tools: 5}, {Name: "c", Untrusted: true, Tools: 1}},
		approvals: []api.PendingApproval{{ID: "ap-1"}},
	}
	r := Report(context.Background(), h)
	if r.Version != "v1" || r.PID != 7 || !r.StartedAt.Equal(started) || r.Config != "/c.json" || r.Cache != "/cache.json" ||
		r.HTTP != "127.0.0.1:7332" || r.Sessions != 3 || len(r.Warnings) != 1 || r.LastReload == nil || !r.LastReload.OK ||
		len(r.Scripts) != 1 || len(r.Approvals) != 1 || r.Approvals[0].ID != "ap-1" {
		t.Errorf("report %+v", r)
	}
	if r.Tools != 8 || len(r.Servers) != 3 || r.Servers[0].Name != "b" || r.Servers[1].State != "disabled" || r.Servers[2].State != "untrusted" {
		t.Errorf("servers: %d tools, %+v", r.Tools, r.Servers)
	}

	empty := Report(context.Background(), &fakeHub{})
	if empty.Servers == nil {
		t.Error("no servers is null in JSON, want []")
	}
	resp := httptest.NewRecorder()
	ServeStatus(h)(resp, request("GET", "/-/status", "", false))
	var got api.Report
	if err := json.Unmarshal(resp.Body.Bytes(), &got); err != nil || resp.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%v %q: %s", err, resp.Header().Get("Content-Type"), resp.Body.String())
	}
	if got.Version != "v1" || len(got.Servers) != 3 || got.Tools != 8 {
		t.Errorf("GET /-/status: %+v", got)
	}
}

// The projects waiting for trust are the sessions' projects, but refused
// ones: each directory once, with each server once, both sorted.
func TestPendingProjects(t *testing.T) {
	t.Parallel()
	db := ProjectServer{Name: "db", Run: "db-mcp"}
	web := ProjectServer{Name: "web", Run: "https://h/mcp?key=***"}
	got := pendingProjects([]SessionFacts{
		{Dir: "/z", Project: &ProjectFacts{Dir: "/z", Servers: []ProjectServer{web, db}}},
		{Dir: "/a"},
		{Dir: "/z/", Project: &ProjectFacts{Dir: "/z", Servers: []ProjectServer{db}}},
		{Dir: "/r", Project: &ProjectFacts{Dir: "/r", Refused: true, Servers: []ProjectServer{db}}},
		{Dir: "/m", Project: &ProjectFacts{Dir: "/m", Servers: []ProjectServer{web}}},
		{Dir: "/e", Project: &ProjectFacts{Dir: "/e"}},
	})
	want := []Project{{Dir: "/m", Servers: []ProjectServer{web}}, {Dir: "/z", Servers: []ProjectServer{db, web}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pending\n%+v\nwant\n%+v", got, want)
	}
}

// Sessions are listed with their transport and client as the page words
// them, and each server lists the clients of the sessions that called it,
// sorted.
func TestPageSessions(t *testing.T) {
	t.Parallel()
	h := &fakeHub{
		servers: []ServerFacts{{Name: "a", Enabled: true}, {Name: "b", Enabled: true}},
		sessions: []SessionFacts{
			{ClientName: "zed", ClientVersion: "1", HTTP: true, Shim: true, Servers: []string{"a"}},
			{ClientName: "pi", ClientVersion: "2", Shim: true, Servers: []string{"a", "b"}},
			{Mode: "proxy"},
		},
	}
	d := pageData(context.Background(), h, "", time.Now())
	var got []string
	for _, s := range d.SessionList {
		got = append(got, s.Client+"/"+s.Transport)
	}
	if want := []string{"zed 1/http", "pi 2/socket", "/stdio"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sessions %q, want %q", got, want)
	}
	if !reflect.DeepEqual(d.Servers[0].Sessions, []string{"pi 2", "zed 1"}) || !reflect.DeepEqual(d.Servers[1].Sessions, []string{"pi 2"}) {
		t.Errorf("users: a %q, b %q", d.Servers[0].Sessions, d.Servers[1].Sessions)
	}
}
