package main

import (
	"slices"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
)

// check prints each rule of a server's own policy, a line each, and none
// of what it inherits (printed once, under settings).
func TestServerPolicyLines(t *testing.T) {
	no := false
	srv := &registry.Server{Command: "x",
		ApproveTools: registry.Approval{Set: true, Destructive: true, Field: "mcpServers.x.approveTools"}, AutoApprove: []string{"read_*"},
		IncludeTools: []string{"a", "b"}, IncludeAlso: [][]string{{"a"}}, ExcludeTools: []string{"b"}, InheritEnv: &no,
		DirectTools: []string{"a"}, ExposeResources: &no, PolicyNotes: []string{`toolExposure "b": "hidden"`}}
	want := []string{
		`approveTools "destructive" (mcpServers.x.approveTools; overrides settings)`,
		`never asked: ["read_*"]`,
		`only: ["a", "b"]`,
		`and only: ["a"]`,
		`excluded: ["b"]`,
		"environment: only HOME LOGNAME PATH SHELL TERM USER, plus env (inheritEnv false)",
		`direct tools: ["a"]`,
		"resources not offered as tools (exposeResources false)",
		`from toolExposure "b": "hidden"`,
	}
	if got := serverPolicyIn(srv, &registry.Config{Settings: registry.Settings{ExcludeTools: []string{"*_admin"}, DirectTools: []string{"*"}}}); !slices.Equal(got, want) {
		t.Errorf("policy\n%q\nwant\n%q", got, want)
	}
	if got := serverPolicyIn(&registry.Server{Command: "x"}, &registry.Config{Settings: registry.Settings{ExcludeTools: []string{"*_admin"}, DirectTools: []string{"*"},
		ApproveTools: registry.Approval{Set: true, All: true}}}); len(got) != 0 {
		t.Errorf("only inherited rules: %q, want none", got)
	}
	for _, tc := range []struct {
		it   registry.PolicyItem
		want string
	}{
		{registry.PolicyItem{Rule: registry.RuleDirectTools, Tools: []string{}}, "direct tools: none (directTools false)"},
		{registry.PolicyItem{Rule: registry.RuleDirectTools, Tools: []string{"*"}}, "direct tools: all (directTools true)"},
		{registry.PolicyItem{Rule: registry.RuleExposeResources, On: true}, "resources offered as tools (exposeResources true)"},
		{registry.PolicyItem{Rule: registry.RuleInheritEnv, On: true}, "environment: mcpgw's, less MCPGW_*"},
	} {
		if got := policyLine(tc.it); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.it, got, tc.want)
		}
	}
}
