package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/registry"
)

// writePolicy prints what restricts each server's tools, as the daemon
// enforces it, and where each part was written (for mcpgw check).
func writePolicy(w io.Writer, cfg *registry.Config) {
	st := cfg.Settings
	fmt.Fprintln(w, "\npolicy:")
	var parts []string
	if st.ApproveTools.Set {
		parts = append(parts, "approveTools "+st.ApproveTools.String())
	}
	for _, pa := range st.ApproveToolsFor {
		parts = append(parts, policyLine(registry.PolicyItem{Rule: registry.RuleApproveToolsFor,
			Principals: []string{pa.Principal}, Approval: pa.Approval, Off: cfg.Team == nil}))
	}
	if len(st.ExcludeTools) > 0 {
		parts = append(parts, "excludeTools "+quoteList(st.ExcludeTools))
	}
	timeout := st.ApprovalTimeout
	if timeout == 0 {
		timeout = registry.DefaultApprovalTimeout
	}
	parts = append(parts, "approvals wait "+timeout.Round(time.Millisecond).String()+" for the page or `mcpgw approve`")
	if st.Audit != nil && !*st.Audit {
		parts = append(parts, "audit off")
	} else {
		parts = append(parts, "audit on")
	}
	fmt.Fprintf(w, "  settings: %s\n", strings.Join(parts, "; "))
	fmt.Fprintf(w, "  environment: stdio servers get mcpgw's, never its MCPGW_* variables; with inheritEnv false only %s, plus env\n",
		strings.Join(registry.DefaultInheritedEnv, " "))
	names := make([]string, 0, len(cfg.Servers))
	for name := range cfg.Servers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := cfg.Servers[name]
		lines := serverPolicyIn(s, cfg)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s (%s):\n", name, s.Source)
		for _, l := range lines {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

// serverPolicyIn is one server of cfg's policy, a line each, empty when
// only the settings and mcpgw's defaults apply (printed once above).
func serverPolicyIn(s *registry.Server, cfg *registry.Config) []string {
	var out []string
	for _, it := range registry.DescribePolicy(s, cfg) {
		if !it.Inherited {
			out = append(out, policyLine(it))
		}
	}
	return out
}

// policyLine is one rule of a server's policy as check prints it.
func policyLine(it registry.PolicyItem) string {
	switch it.Rule {
	case registry.RuleApproveTools:
		return "approveTools " + it.Approval.String() + " (" + it.Field + "; overrides settings)"
	case registry.RuleAutoApprove:
		return "never asked: " + quoteList(it.Tools)
	case registry.RuleIncludeTools:
		if it.Narrowed {
			return "and only: " + quoteList(it.Tools)
		}
		return "only: " + quoteList(it.Tools)
	case registry.RuleExcludeTools:
		return "excluded: " + quoteList(it.Tools)
	case registry.RuleInheritEnv:
		if it.On {
			return "environment: mcpgw's, less MCPGW_*"
		}
		return "environment: only " + strings.Join(registry.DefaultInheritedEnv, " ") + ", plus env (inheritEnv false)"
	case registry.RuleDirectTools:
		switch {
		case len(it.Tools) == 0:
			return "direct tools: none (directTools false)"
		case slices.Contains(it.Tools, "*"):
			return "direct tools: all (directTools true)"
		}
		return "direct tools: " + quoteList(it.Tools)
	case registry.RuleExposeResources:
		if it.On {
			return "resources offered as tools (exposeResources true)"
		}
		return "resources not offered as tools (exposeResources false)"
	case registry.RuleNote:
		return "from " + it.Note
	case registry.RuleVisibleTo:
		if it.Off {
			return "visible to everyone: visibleTo " + quoteList(it.Principals) + " has no effect without a team block"
		}
		return "visible only to " + strings.Join(it.Principals, ", ") + " (team mode; hidden from everyone else)"
	case registry.RuleApproveToolsFor:
		if it.Off {
			return "approveToolsFor " + strings.Join(it.Principals, ", ") + " has no effect without a team block"
		}
		return "approveTools " + it.Approval.String() + " for " + strings.Join(it.Principals, ", ") + " (team mode; adds to approveTools)"
	}
	return string(it.Rule)
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
