package main

import (
	"fmt"
	"io"
	"slices"
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
		lines := serverPolicy(s)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s (%s):\n", name, s.Source)
		for _, l := range lines {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

// serverPolicy is one server's policy, a line each, empty when only the
// settings apply.
func serverPolicy(s *registry.Server) []string {
	var out []string
	if s.ApproveTools.Set {
		out = append(out, fmt.Sprintf("approveTools %s (%s; overrides settings)", s.ApproveTools, s.ApproveTools.Field))
	}
	if len(s.AutoApprove) > 0 {
		out = append(out, "never asked: "+quoteList(s.AutoApprove))
	}
	if len(s.IncludeTools) > 0 {
		out = append(out, "only: "+quoteList(s.IncludeTools))
	}
	for _, also := range s.IncludeAlso {
		out = append(out, "and only: "+quoteList(also))
	}
	if len(s.ExcludeTools) > 0 {
		out = append(out, "excluded: "+quoteList(s.ExcludeTools))
	}
	if s.Command != "" && !s.InheritsEnv() {
		out = append(out, "environment: only "+strings.Join(registry.DefaultInheritedEnv, " ")+", plus env (inheritEnv false)")
	}
	for _, n := range s.PolicyNotes {
		out = append(out, "from "+n)
	}
	return out
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
