package registry

import (
	"slices"
	"testing"
)

// TestServerPolicy: the one description of a server's policy, with what
// it inherits marked, so that the page (every line) and `check` (its own
// lines) cannot disagree on what a server has.
func TestServerPolicy(t *testing.T) {
	no := false
	destructive := Approval{Set: true, Destructive: true, Field: "mcpServers.p.approveTools"}
	for _, tc := range []struct {
		name string
		srv  Server
		st   Settings
		want []string // String() of each line; "+" marks Inherited
	}{
		{"nothing but the default environment", Server{Command: "x"}, Settings{},
			[]string{"+environment: mcpgw's, less MCPGW_*"}},
		{"a URL server has no environment", Server{URL: "http://h/mcp"}, Settings{}, nil},
		{"its own approvals over the settings'",
			Server{URL: "u", ApproveTools: destructive}, Settings{ApproveTools: Approval{Set: true, All: true}},
			[]string{`approveTools "destructive" (mcpServers.p.approveTools; overrides settings)`}},
		{"the settings' approvals", Server{URL: "u"}, Settings{ApproveTools: Approval{Set: true, Tools: []string{"*_delete"}}},
			[]string{`+approveTools ["*_delete"] (settings.approveTools)`}},
		{"every list and note", Server{Command: "x", InheritEnv: &no, AutoApprove: []string{"read_*"}, IncludeTools: []string{"a", "b"},
			IncludeAlso: [][]string{{"a"}}, ExcludeTools: []string{"b"}, PolicyNotes: []string{`toolExposure "b": "hidden"`}}, Settings{},
			[]string{`never asked: ["read_*"]`, `only: ["a", "b"]`, `and only: ["a"]`, `excluded: ["b"]`,
				"environment: only HOME LOGNAME PATH SHELL TERM USER, plus env (inheritEnv false)", `from toolExposure "b": "hidden"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, l := range tc.srv.Policy(tc.st) {
				s := l.String()
				if l.Inherited {
					s = "+" + s
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Policy =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
