package registry

import (
	"reflect"
	"testing"
)

// TestDescribePolicy: the one description of a server's policy lists
// every rule that applies, in its fixed order, with what it inherits
// marked, so that the page (every item) and `check` (the server's own)
// cannot disagree on what a server has.
func TestDescribePolicy(t *testing.T) {
	yes, no := true, false
	destructive := Approval{Set: true, Destructive: true, Field: "mcpServers.p.approveTools"}
	all := Approval{Set: true, All: true, Field: "settings.approveTools"}
	env := PolicyItem{Rule: RuleInheritEnv, On: true, Inherited: true}
	for _, tc := range []struct {
		name string
		srv  Server
		st   Settings
		want []PolicyItem
	}{
		{"nothing but the default environment", Server{Command: "x"}, Settings{}, []PolicyItem{env}},
		{"a URL server has no environment", Server{URL: "http://h/mcp"}, Settings{}, nil},
		{"its own approvals over the settings'", Server{URL: "u", ApproveTools: destructive}, Settings{ApproveTools: all},
			[]PolicyItem{{Rule: RuleApproveTools, Approval: destructive, Field: "mcpServers.p.approveTools"}}},
		{"the settings' approvals", Server{URL: "u"}, Settings{ApproveTools: Approval{Set: true, Tools: []string{"*_delete"}}},
			[]PolicyItem{{Rule: RuleApproveTools, Approval: Approval{Set: true, Tools: []string{"*_delete"}}, Field: "settings.approveTools", Inherited: true}}},
		{"never asked", Server{URL: "u", AutoApprove: []string{"read_*"}}, Settings{},
			[]PolicyItem{{Rule: RuleAutoApprove, Tools: []string{"read_*"}}}},
		{"included, and narrowed by a project", Server{URL: "u", IncludeTools: []string{"a", "b"}, IncludeAlso: [][]string{{"a"}}}, Settings{},
			[]PolicyItem{{Rule: RuleIncludeTools, Tools: []string{"a", "b"}}, {Rule: RuleIncludeTools, Tools: []string{"a"}, Narrowed: true}}},
		{"excluded, by itself and by the settings", Server{URL: "u", ExcludeTools: []string{"b"}}, Settings{ExcludeTools: []string{"*_admin"}},
			[]PolicyItem{{Rule: RuleExcludeTools, Tools: []string{"b"}}, {Rule: RuleExcludeTools, Tools: []string{"*_admin"}, Field: "settings.excludeTools", Inherited: true}}},
		{"inheritEnv false", Server{Command: "x", InheritEnv: &no}, Settings{},
			[]PolicyItem{{Rule: RuleInheritEnv}}},
		{"inheritEnv true, as the default", Server{Command: "x", InheritEnv: &yes}, Settings{}, []PolicyItem{env}},
		{"its own direct tools over the settings'", Server{URL: "u", DirectTools: []string{"search"}}, Settings{DirectTools: []string{"*"}},
			[]PolicyItem{{Rule: RuleDirectTools, Tools: []string{"search"}}}},
		{"no direct tools (directTools false)", Server{URL: "u", DirectTools: []string{}}, Settings{DirectTools: []string{"*"}},
			[]PolicyItem{{Rule: RuleDirectTools, Tools: []string{}}}},
		{"the settings' direct tools", Server{URL: "u"}, Settings{DirectTools: []string{"*"}},
			[]PolicyItem{{Rule: RuleDirectTools, Tools: []string{"*"}, Field: "settings.directTools", Inherited: true}}},
		{"resources not offered", Server{URL: "u", ExposeResources: &no}, Settings{},
			[]PolicyItem{{Rule: RuleExposeResources}}},
		{"resources offered, as the default", Server{URL: "u", ExposeResources: &yes}, Settings{},
			[]PolicyItem{{Rule: RuleExposeResources, On: true}}},
		{"a note", Server{URL: "u", PolicyNotes: []string{`toolExposure "b": "hidden"`}}, Settings{},
			[]PolicyItem{{Rule: RuleNote, Note: `toolExposure "b": "hidden"`}}},
		{"every rule, in order",
			Server{Command: "x", ApproveTools: destructive, AutoApprove: []string{"read_*"}, IncludeTools: []string{"a", "b"},
				IncludeAlso: [][]string{{"a"}}, ExcludeTools: []string{"b"}, InheritEnv: &no, DirectTools: []string{"a"},
				ExposeResources: &no, PolicyNotes: []string{"n"}},
			Settings{ExcludeTools: []string{"c"}},
			[]PolicyItem{
				{Rule: RuleApproveTools, Approval: destructive, Field: "mcpServers.p.approveTools"},
				{Rule: RuleAutoApprove, Tools: []string{"read_*"}},
				{Rule: RuleIncludeTools, Tools: []string{"a", "b"}},
				{Rule: RuleIncludeTools, Tools: []string{"a"}, Narrowed: true},
				{Rule: RuleExcludeTools, Tools: []string{"b"}},
				{Rule: RuleExcludeTools, Tools: []string{"c"}, Field: "settings.excludeTools", Inherited: true},
				{Rule: RuleInheritEnv},
				{Rule: RuleDirectTools, Tools: []string{"a"}},
				{Rule: RuleExposeResources},
				{Rule: RuleNote, Note: "n"},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DescribePolicy(&tc.srv, &Config{Settings: tc.st}); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DescribePolicy =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}
