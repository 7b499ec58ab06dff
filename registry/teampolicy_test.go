package registry

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTeamPolicyLoads: visibleTo and approveToolsFor are read as written,
// each approveTools value with its field, and a configuration that uses
// them in team mode loads without a warning.
func TestTeamPolicyLoads(t *testing.T) {
	cfg, err := Load(absTestdata(t, "valid-team-policy.json"), testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %q", cfg.Warnings)
	}
	db := cfg.Servers["db"]
	if want := []string{"group:eng", "user:carol"}; !slices.Equal(db.VisibleTo, want) {
		t.Errorf("VisibleTo = %q, want %q", db.VisibleTo, want)
	}
	want := []PrincipalApproval{
		{"group:contractors", Approval{Set: true, All: true, Field: `mcpServers.db.approveToolsFor."group:contractors"`}},
		{"user:bob", Approval{Set: true, Destructive: true, Tools: []string{"delete_*"}, Field: `mcpServers.db.approveToolsFor."user:bob"`}},
	}
	if !reflect.DeepEqual(db.ApproveToolsFor, want) {
		t.Errorf("ApproveToolsFor =\n%+v\nwant\n%+v", db.ApproveToolsFor, want)
	}
	if cfg.Servers["docs"].VisibleTo != nil {
		t.Errorf("docs VisibleTo = %q, want none", cfg.Servers["docs"].VisibleTo)
	}
}

// TestTeamPolicyRefused: each bad value gives its exact error, and values
// that cannot take effect their warning.
func TestTeamPolicyRefused(t *testing.T) {
	const team = `"team": {"issuer": "https://login.example.com", "audience": "mcpgw", "groupsClaim": "groups"},`
	for _, tc := range []struct {
		name, file string
		err        string
		warns      []string
	}{
		{"no prefix", `{` + team + `"mcpServers": {"a": {"command": "x", "visibleTo": ["alice"]}}}`,
			`mcpServers.a.visibleTo[0]: "alice" is neither user:NAME nor group:NAME`, nil},
		{"no name", `{` + team + `"mcpServers": {"a": {"command": "x", "visibleTo": ["group:"]}}}`,
			`mcpServers.a.visibleTo[0]: "group:" names no one`, nil},
		{"empty list", `{` + team + `"mcpServers": {"a": {"command": "x", "visibleTo": []}}}`,
			`mcpServers.a.visibleTo: must name at least one user:NAME or group:NAME (an empty list would hide the server from everyone; use "enabled": false)`, nil},
		{"not a list", `{` + team + `"mcpServers": {"a": {"command": "x", "visibleTo": "group:eng"}}}`,
			`mcpServers.a.visibleTo: must be an array of strings, got string`, nil},
		{"bad principal key", `{` + team + `"mcpServers": {"a": {"command": "x", "approveToolsFor": {"eng": true}}}}`,
			`mcpServers.a.approveToolsFor.eng: "eng" is neither user:NAME nor group:NAME`, nil},
		{"bad approval", `{` + team + `"mcpServers": {"a": {"command": "x", "approveToolsFor": {"user:bob": "always"}}}}`,
			`mcpServers.a.approveToolsFor."user:bob": "always" is not true, false, "destructive" or a list of tool names`, nil},
		{"not an object", `{` + team + `"mcpServers": {"a": {"command": "x", "approveToolsFor": ["user:bob"]}}}`,
			`mcpServers.a.approveToolsFor: must be an object of user:NAME or group:NAME to an approveTools value, got array`, nil},
		{"no team block", `{"mcpServers": {"a": {"command": "x", "visibleTo": ["group:eng"], "approveToolsFor": {"user:bob": true}}}}`, "", []string{
			"mcpServers.a.visibleTo: " + ErrTeamOff.Error(),
			"mcpServers.a.approveToolsFor: " + ErrTeamOff.Error(),
		}},
		{"no groups claim", `{"team": {"issuer": "https://login.example.com", "audience": "mcpgw"}, "mcpServers": {"a": {"command": "x", "visibleTo": ["group:eng"], "approveToolsFor": {"user:bob": true}}}}`, "", []string{
			"mcpServers.a.visibleTo: no group matches: team.groupsClaim is not set, so tokens name no groups",
		}},
		{"per user without a team block", `{"mcpServers": {"a": {"command": "x", "isolation": "user"}}}`, "", []string{
			`mcpServers.a.isolation: "user" has no effect outside team mode (no team block): with one user, the server is shared`,
		}},
		{"per user", `{` + team + `"mcpServers": {"a": {"command": "x", "isolation": "user"}}}`, "", nil},
		{"settings: bad principal key", `{` + team + `"settings": {"approveToolsFor": {"eng": true}}, "mcpServers": {"a": {"command": "x"}}}`,
			`settings.approveToolsFor.eng: "eng" is neither user:NAME nor group:NAME`, nil},
		{"settings: no team block", `{"settings": {"approveToolsFor": {"group:contractors": true}}, "mcpServers": {"a": {"command": "x"}}}`, "", []string{
			"settings.approveToolsFor: " + ErrTeamOff.Error(),
		}},
		{"false lifts nothing", `{` + team + `"mcpServers": {"a": {"command": "x", "approveToolsFor": {"group:admins": false}}}}`, "", []string{
			`mcpServers.a.approveToolsFor."group:admins": false asks for nothing: approveToolsFor adds approvals to approveTools, never lifts them; ignored`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.file), "mcp.json", testOptions(nil))
			if tc.err != "" {
				if err == nil || !strings.HasSuffix(err.Error(), ": "+tc.err) {
					t.Fatalf("error %v, want …: %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.Warnings, tc.warns) {
				t.Errorf("warnings\n%q\nwant\n%q", cfg.Warnings, tc.warns)
			}
		})
	}
}

// teamPolicyView is the View of valid-team-policy.json for user in
// groups, with db and docs each offering the same tools, prompt and
// resource.
func teamPolicyView(t *testing.T, cfg *Config, user string, groups ...string) *View {
	t.Helper()
	c := NewCatalog(cfg)
	for _, srv := range cfg.Servers {
		c.SetListing(srv.Hash, &Listing{Source: SourceLive,
			Tools: []*mcp.Tool{
				{Name: "query", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
				{Name: "delete_row", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
				{Name: "drop_table", InputSchema: map[string]any{"type": "object"}},
			},
			Prompts:   []*mcp.Prompt{{Name: "greet"}},
			Resources: []*mcp.Resource{{Name: srv.Name + "-readme", URI: "test://" + srv.Name + "/readme"}},
		})
	}
	return c.ViewFor(cfg.ForUser(user, groups))
}

// TestForUserHidesServers: a server whose visibleTo leaves a user out is
// in no part of that user's View, as a hidden server is in no one's; the
// users and groups it names see it whole.
func TestForUserHidesServers(t *testing.T) {
	cfg, err := Load(absTestdata(t, "valid-team-policy.json"), testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user   string
		groups []string
		sees   bool
	}{
		{"alice", []string{"eng"}, true},
		{"carol", nil, true},
		{"bob", []string{"contractors"}, false},
		{"dave", nil, false},
		{"eng", nil, false}, // a user named like the group is not in it
	} {
		v := teamPolicyView(t, cfg, tc.user, tc.groups...)
		_, server := v.Server("db")
		_, tool := v.Lookup("db_query")
		_, prompt := v.Prompt("db/greet")
		_, resource := v.Resource("test://db/readme")
		if got := []bool{server, tool, prompt, resource}; !slices.Equal(got, []bool{tc.sees, tc.sees, tc.sees, tc.sees}) {
			t.Errorf("%s %q: server, tool, prompt, resource = %v; want all %v", tc.user, tc.groups, got, tc.sees)
		}
		if _, ok := v.Lookup("docs_query"); !ok {
			t.Errorf("%s: docs, visible to everyone, is gone", tc.user)
		}
		if got := cfg.Settings.Hidden(v.Config.Servers["db"]); got != !tc.sees {
			t.Errorf("%s: Hidden(db) = %v; the pool's reconcile would start it for them: %v", tc.user, got, !got)
		}
	}
	if cfg.Servers["db"].ExcludeTools != nil {
		t.Errorf("the loaded configuration changed: db excludeTools %q", cfg.Servers["db"].ExcludeTools)
	}
}

// TestForUserSharesAlikeViews: ForUser gives the configuration itself
// when no rule concerns the user (or team mode is off), and users the
// rules treat alike the same Hash, so that they share a View; others a
// Hash of their own.
func TestForUserSharesAlikeViews(t *testing.T) {
	cfg, err := Load(absTestdata(t, "valid-team-policy.json"), testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.ForUser("alice", []string{"eng"}); got != cfg {
		t.Error("alice, whom no rule restricts, got a configuration of her own")
	}
	dave, erin := cfg.ForUser("dave", nil), cfg.ForUser("erin", []string{"sales"})
	bob, bob2 := cfg.ForUser("bob", []string{"contractors"}), cfg.ForUser("bob", []string{"contractors"})
	switch {
	case dave == cfg || bob == cfg:
		t.Fatal("a restricted user got the configuration itself")
	case dave.Hash != erin.Hash:
		t.Errorf("dave and erin, both without db, have Hashes %s and %s", dave.Hash, erin.Hash)
	case bob.Hash != bob2.Hash:
		t.Errorf("bob's Hash changed between calls: %s, %s", bob.Hash, bob2.Hash)
	case bob.Hash == dave.Hash || dave.Hash == cfg.Hash:
		t.Errorf("unlike users share a Hash: cfg %s, dave %s, bob %s", cfg.Hash, dave.Hash, bob.Hash)
	}
	off := *cfg
	off.Team = nil
	if got := off.ForUser("dave", nil); got != &off {
		t.Error("outside team mode, ForUser changed the configuration")
	}
}

// TestForUserApprovals: approveToolsFor adds to the server's approveTools
// (or to the settings' when the server has none) for the users and groups
// it names, and asks nothing more of anyone else.
func TestForUserApprovals(t *testing.T) {
	cfg, err := Load(absTestdata(t, "valid-team-policy.json"), testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Settings.ApproveTools = Approval{Set: true, Tools: []string{"docs_query"}, Field: "settings.approveTools"}
	asked := func(v *View) []string {
		var out []string
		for _, tool := range v.Tools {
			if rule, ok := v.NeedsApproval(tool); ok {
				out = append(out, tool.Name+" by "+rule.Field)
			}
		}
		return out
	}
	const db, dbBob, dbCon = `mcpServers.db.approveTools`,
		`mcpServers.db.approveTools and mcpServers.db.approveToolsFor."user:bob"`,
		`mcpServers.db.approveTools and mcpServers.db.approveToolsFor."group:contractors"`
	for _, tc := range []struct {
		user   string
		groups []string
		want   []string
	}{
		{"alice", []string{"eng"}, []string{"db_drop_table by " + db, "docs_query by settings.approveTools"}},
		// bob's own list: delete_* and destructive tools.
		{"bob", []string{"eng"}, []string{"db_delete_row by " + dbBob, "db_drop_table by " + dbBob, "docs_query by settings.approveTools"}},
		// contractors: everything of db; destructive ones of docs, added to the settings'.
		{"carol", []string{"contractors"}, []string{
			"db_delete_row by " + dbCon, "db_drop_table by " + dbCon, "db_query by " + dbCon, "db_read_db_readme by " + dbCon,
			`docs_drop_table by settings.approveTools and mcpServers.docs.approveToolsFor."group:contractors"`,
			`docs_query by settings.approveTools and mcpServers.docs.approveToolsFor."group:contractors"`,
		}},
	} {
		if got := asked(teamPolicyView(t, cfg, tc.user, tc.groups...)); !slices.Equal(got, tc.want) {
			t.Errorf("%s %q asked for\n%q\nwant\n%q", tc.user, tc.groups, got, tc.want)
		}
	}
}

// TestDescribeTeamPolicy: the rules by user and group are in the one
// description, marked Off without a team block.
func TestDescribeTeamPolicy(t *testing.T) {
	cfg, err := Load(absTestdata(t, "valid-team-policy.json"), testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	db := cfg.Servers["db"]
	for _, off := range []bool{false, true} {
		c := *cfg
		if off {
			c.Team = nil
		}
		want := []PolicyItem{
			{Rule: RuleVisibleTo, Principals: []string{"group:eng", "user:carol"}, Off: off},
			{Rule: RuleApproveTools, Approval: db.ApproveTools, Field: db.ApproveTools.Field},
			{Rule: RuleApproveToolsFor, Principals: []string{"group:contractors"}, Approval: db.ApproveToolsFor[0].Approval, Off: off},
			{Rule: RuleApproveToolsFor, Principals: []string{"user:bob"}, Approval: db.ApproveToolsFor[1].Approval, Off: off},
			{Rule: RuleInheritEnv, On: true, Inherited: true},
		}
		if got := DescribePolicy(db, &c); !reflect.DeepEqual(got, want) {
			t.Errorf("team off %v:\n%+v\nwant\n%+v", off, got, want)
		}
	}
}

// TestSettingsApproveToolsFor: the settings' approveToolsFor is added to
// every server's approvals for the users and groups it names, over the
// names mcpgw shows, beside the server's own entries; nobody else is asked
// anything more, and the description lists it as inherited.
func TestSettingsApproveToolsFor(t *testing.T) {
	cfg, err := Parse([]byte(`{
	  "team": {"issuer": "https://login.example.com", "audience": "mcpgw", "groupsClaim": "groups"},
	  "settings": {"approveToolsFor": {"group:contractors": "destructive", "user:dave": ["*_query"]}},
	  "mcpServers": {
	    "db": {"command": "db-mcp", "approveTools": ["drop_*"], "approveToolsFor": {"user:dave": ["delete_*"]}},
	    "docs": {"command": "docs-mcp"},
	  },
	}`), "mcp.json", testOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	asked := func(v *View) []string {
		var out []string
		for _, tool := range v.Tools {
			if rule, ok := v.NeedsApproval(tool); ok {
				out = append(out, tool.Name+" by "+rule.Field)
			}
		}
		return out
	}
	const dave = `settings.approveToolsFor."user:dave"`
	for _, tc := range []struct {
		user   string
		groups []string
		want   []string
	}{
		{"alice", []string{"eng"}, []string{"db_drop_table by mcpServers.db.approveTools"}},
		{"carol", []string{"contractors"}, []string{
			`db_drop_table by mcpServers.db.approveTools and settings.approveToolsFor."group:contractors"`,
			`docs_drop_table by settings.approveToolsFor."group:contractors"`,
		}},
		// The server's own entry first, then the settings'.
		{"dave", nil, []string{
			`db_delete_row by mcpServers.db.approveTools and mcpServers.db.approveToolsFor."user:dave" and ` + dave,
			`db_drop_table by mcpServers.db.approveTools and mcpServers.db.approveToolsFor."user:dave" and ` + dave,
			`db_query by mcpServers.db.approveTools and mcpServers.db.approveToolsFor."user:dave" and ` + dave,
			"docs_query by " + dave,
		}},
	} {
		if got := asked(teamPolicyView(t, cfg, tc.user, tc.groups...)); !slices.Equal(got, tc.want) {
			t.Errorf("%s %q asked for\n%q\nwant\n%q", tc.user, tc.groups, got, tc.want)
		}
	}

	docs := cfg.Servers["docs"]
	st := cfg.Settings.ApproveToolsFor
	if len(st) != 2 {
		t.Fatalf("settings.approveToolsFor = %+v, want 2 entries", st)
	}
	want := []PolicyItem{
		{Rule: RuleApproveToolsFor, Principals: []string{"group:contractors"}, Approval: st[0].Approval, Field: "settings.approveToolsFor", Inherited: true},
		{Rule: RuleApproveToolsFor, Principals: []string{"user:dave"}, Approval: st[1].Approval, Field: "settings.approveToolsFor", Inherited: true},
		{Rule: RuleInheritEnv, On: true, Inherited: true},
	}
	if got := DescribePolicy(docs, cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("DescribePolicy(docs) =\n%+v\nwant\n%+v", got, want)
	}
}
