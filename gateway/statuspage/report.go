package statuspage

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/registry"
)

// Report is the daemon's state as `mcpgw status` and the page show it
// (GET /-/status), made of h's facts.
func Report(ctx context.Context, h Hub) *api.Report {
	return report(ctx, h, h.Servers(ctx), time.Now())
}

func report(ctx context.Context, h Hub, servers []ServerFacts, now time.Time) *api.Report {
	d := h.Daemon(ctx)
	r := &api.Report{
		Version:    d.Version,
		PID:        d.PID,
		StartedAt:  d.StartedAt,
		Config:     d.Config,
		Cache:      d.Cache,
		HTTP:       d.HTTP,
		HTTPError:  d.HTTPError,
		Sessions:   d.Sessions,
		LastReload: d.LastReload,
		Warnings:   d.Warnings,
		Scripts:    d.Scripts,
		Approvals:  h.Approvals(ctx),
		Servers:    make([]api.ServerReport, 0, len(servers)),
	}
	for _, f := range servers {
		sr := ServerReport(f, now)
		r.Tools += sr.Tools
		r.Servers = append(r.Servers, sr)
	}
	return r
}

// ServeStatus is GET /-/status: Report as JSON.
func ServeStatus(h Hub) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(Report(r.Context(), h))
	}
}

// ServerReport is one server's row of the report at now: its state in a
// word, its counts, its login and its policy.
func ServerReport(f ServerFacts, now time.Time) api.ServerReport {
	sr := api.ServerReport{
		Name:      f.Name,
		Lifecycle: f.Lifecycle,
		Transport: "stdio",
		Source:    f.Source,
		Line:      f.Line,
		Tools:     f.Tools,
		Resources: f.Resources,
		Listing:   f.Listing,
		P50Ms:     float64(f.P50.Microseconds()) / 1000,
		Policy:    policyPhrases(f.Policy),
	}
	if f.Remote {
		sr.Transport = "http"
	}
	if f.OAuth {
		sr.Login, sr.TokenExpiry = login(f.Login, now), f.Login.Expiry
		if sr.Login == "none" {
			sr.TokenExpiry = time.Time{}
		}
	}
	switch {
	case f.Untrusted:
		sr.State = "untrusted"
		return sr
	case !f.Enabled:
		sr.State = "disabled"
		sr.DisabledHere = f.DisabledHere
		return sr
	}
	up := f.Upstream
	if up == nil {
		up = &UpstreamFacts{}
	}
	sr.Calls, sr.Errors, sr.LastError = up.Calls, up.Errors, up.LastError
	if len(up.Aliases) > 0 {
		sr.Upstream = up.Name
		for _, n := range append([]string{up.Name}, up.Aliases...) {
			if n != f.Name {
				sr.SharedWith = append(sr.SharedWith, n)
			}
		}
		// Each name's row counts the calls made by that name; the
		// process is shared, the calls are not.
		c := up.ByName[f.Name]
		sr.Calls, sr.Errors = c.Calls, c.Errors
	}
	sr.Since, sr.NextRetry, sr.PID = up.Since, up.NextRetry, up.PID
	if f.PerUser {
		sr.PerUser, sr.UserProcesses = true, f.UserUpstreams
		if y := f.Yours; y != nil {
			sr.YourState, sr.YourPID, sr.YourError = y.State, y.PID, y.LastError
		}
	}
	switch up.State {
	case "connected", "connecting", "failed", "needs-auth":
		sr.State = up.State
	default:
		switch {
		case f.Listing != "" && f.Listing != registry.SourceLive:
			sr.State = "cached"
		case f.Listing != "":
			sr.State = "idle-closed" // connected before, closed for idleness or after a crash
		default:
			sr.State = "not connected"
		}
	}
	return sr
}

// login words a stored login at now: "none", "logged in", "logged in
// (refresh due)", or "expired" when nothing can renew it.
func login(l LoginFacts, now time.Time) string {
	switch {
	case !l.Token:
		return "none"
	case !l.Expiry.IsZero() && now.After(l.Expiry):
		if !l.Refreshable {
			return "expired"
		}
		return "logged in (refresh due)"
	}
	return "logged in"
}

// policyPhrases words a server's policy for the report and the page, a
// phrase each, what it inherits included.
func policyPhrases(items []registry.PolicyItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, policyPhrase(it))
	}
	return out
}

func policyPhrase(it registry.PolicyItem) string {
	var p string
	switch it.Rule {
	case registry.RuleApproveTools:
		p = "approveTools " + it.Approval.String()
	case registry.RuleAutoApprove:
		p = "never asked: " + quoteList(it.Tools)
	case registry.RuleIncludeTools:
		p = "only: " + quoteList(it.Tools)
		if it.Narrowed {
			p = "and only: " + quoteList(it.Tools)
		}
	case registry.RuleExcludeTools:
		p = "excluded: " + quoteList(it.Tools)
	case registry.RuleInheritEnv:
		p = "environment: mcpgw's, less MCPGW_*"
		if !it.On {
			p = "environment: only " + strings.Join(registry.DefaultInheritedEnv, " ") + ", plus env"
		}
	case registry.RuleDirectTools:
		switch {
		case len(it.Tools) == 0:
			p = "no direct tools"
		case slices.Contains(it.Tools, "*"):
			p = "direct tools: all"
		default:
			p = "direct tools: " + quoteList(it.Tools)
		}
	case registry.RuleExposeResources:
		p = "resources as tools"
		if !it.On {
			p = "resources not as tools"
		}
	case registry.RuleNote:
		p = "from " + it.Note
	case registry.RuleVisibleTo:
		p = "visible only to " + strings.Join(it.Principals, ", ")
	case registry.RuleApproveToolsFor:
		p = "approveTools " + it.Approval.String() + " for " + strings.Join(it.Principals, ", ")
	default:
		p = string(it.Rule)
	}
	if it.Field != "" {
		p += " (" + it.Field + ")"
	}
	if it.Off {
		p += " (no effect outside team mode)"
	}
	return p
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// mergeLines merges two names' log lines, each oldest first, by the time
// each starts with (time.TimeOnly); a tie keeps a's line first.
func mergeLines(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if lineTime(b[0]) < lineTime(a[0]) {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

func lineTime(l string) string {
	t, _, _ := strings.Cut(l, " ")
	return t
}

// serverLines are the daemon's lines about f's server: for a name whose
// upstream runs under another, the shared upstream's lines too, which
// are logged under the upstream's own name.
func serverLines(h Hub, f ServerFacts) []string {
	lines := h.Log(f.Name)
	if up := f.Upstream; up != nil && up.Name != "" && up.Name != f.Name {
		lines = mergeLines(h.Log(up.Name), lines)
	}
	return lines
}

// usable says whether f may be (re)connected: on, and trusted.
func usable(f ServerFacts) bool { return f.Enabled && !f.Untrusted }

// findServer is the facts of the server named name.
func findServer(servers []ServerFacts, name string) (ServerFacts, bool) {
	i := slices.IndexFunc(servers, func(f ServerFacts) bool { return f.Name == name })
	if i < 0 {
		return ServerFacts{}, false
	}
	return servers[i], true
}
