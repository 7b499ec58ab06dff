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
	if len(st.ExcludeTools) > 0 {
		q := make([]string, len(st.ExcludeTools))
		for i, g := range st.ExcludeTools {
			q[i] = strconv.Quote(g)
		}
		parts = append(parts, "excludeTools ["+strings.Join(q, ", ")+"]")
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
		lines := serverPolicy(s, st)
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
// settings and mcpgw's defaults apply (printed once above).
func serverPolicy(s *registry.Server, st registry.Settings) []string {
	var out []string
	for _, l := range s.Policy(st) {
		if !l.Inherited {
			out = append(out, l.String())
		}
	}
	return out
}
