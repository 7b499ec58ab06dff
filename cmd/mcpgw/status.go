package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
)

// writeStatus prints r as a person reads it (`mcpgw status`): a header,
// then a table of servers. Times are relative to now; paths under the
// home directory print as ~.
func writeStatus(w io.Writer, r *api.Report, now time.Time) {
	connected := 0
	for _, s := range r.Servers {
		if s.State == "connected" {
			connected++
		}
	}
	fmt.Fprintf(w, "mcpgw %s, pid %d, up %s, %d session%s, %d/%d servers connected, %d tools\n",
		r.Version, r.PID, api.Ago(now, r.StartedAt), r.Sessions, pluralS(r.Sessions), connected, len(r.Servers), r.Tools)
	cfg := tildePath(r.Config)
	if cfg == "" {
		cfg = "(none)"
	}
	fmt.Fprintf(w, "config: %s", cfg)
	if rl := r.LastReload; rl != nil {
		switch {
		case rl.OK:
			fmt.Fprintf(w, " (reloaded %s ago)", api.Ago(now, rl.At))
		case rl.NoConfig:
			fmt.Fprintf(w, " (does NOT load, so no servers run until it is fixed: %s)", oneLine(rl.Error))
		default:
			fmt.Fprintf(w, " (reload FAILED %s ago, running the last good config: %s)", api.Ago(now, rl.At), oneLine(rl.Error))
		}
	}
	fmt.Fprintln(w)
	if r.Cache != "" {
		fmt.Fprintf(w, "cache:  %s\n", tildePath(r.Cache))
	}
	if r.HTTPError != "" {
		fmt.Fprintf(w, "http:   none, %s: no page and no /mcp; shims and the CLI use the socket\n", oneLine(r.HTTPError))
	}
	if len(r.Servers) == 0 {
		if r.LastReload != nil && r.LastReload.NoConfig {
			fmt.Fprintln(w, "\nNo servers: the config does not load.")
		} else {
			fmt.Fprintln(w, "\nNo servers configured.")
		}
		writeReportWarnings(w, r)
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tTOOLS\tCALLS\tERRORS\tLAST ERROR\tSOURCE")
	for _, s := range r.Servers {
		state := s.State
		switch {
		case s.State == "connected" && s.PID != 0:
			state += fmt.Sprintf(" (pid %d)", s.PID)
		case s.State == "failed" && !s.NextRetry.IsZero() && s.NextRetry.After(now):
			state += ", retry in " + api.Ago(s.NextRetry, now)
		case s.DisabledHere:
			state += " on the status page, until the daemon stops"
		}
		if s.Upstream != "" && s.Upstream != s.Name {
			state += ", same as " + s.Upstream
		}
		if s.PerUser {
			each := "a process"
			if s.Transport == "http" {
				each = "a connection"
			}
			state += fmt.Sprintf(", %s per user: %d connected", each, s.UserProcesses)
			if s.YourPID != 0 {
				state += fmt.Sprintf(", yours pid %d", s.YourPID)
			}
			if s.YourError != "" && s.YourState != "connected" {
				state += ", yours " + s.YourState + ": " + s.YourError
			}
		}
		switch {
		case s.Login == "none":
			state += ", not logged in (mcpgw login " + s.Name + ")"
		case s.Login != "" && !s.TokenExpiry.IsZero() && s.TokenExpiry.After(now):
			state += ", " + s.Login + ", token for " + api.Ago(s.TokenExpiry, now)
		case s.Login != "":
			state += ", " + s.Login
		}
		lastErr := s.LastError
		if lastErr == "" {
			lastErr = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", oneLine(s.Name), oneLine(state), s.Tools, s.Calls, s.Errors,
			oneLine(clip(firstLine(lastErr), 50)), oneLine(tildePath(s.Source)))
	}
	tw.Flush()
	writeScripts(w, r, now)
	writeReportWarnings(w, r)
}

// writeScripts lists the last code-mode scripts (the status page has each
// one's code and calls).
func writeScripts(w io.Writer, r *api.Report, now time.Time) {
	if len(r.Scripts) == 0 {
		return
	}
	fmt.Fprintln(w, "\nrecent scripts (the status page shows their code and calls):")
	for i, sc := range r.Scripts {
		if i == 5 {
			fmt.Fprintf(w, "  and %d more\n", len(r.Scripts)-i)
			break
		}
		failed := 0
		for _, c := range sc.Calls {
			if !c.OK {
				failed++
			}
		}
		who := sc.Session
		if sc.Client != "" {
			who += " (" + sc.Client + ")"
		}
		line := fmt.Sprintf("  %s  %s  %d call%s", sc.ID, sc.Outcome, len(sc.Calls), pluralS(len(sc.Calls)))
		if failed > 0 {
			line += fmt.Sprintf(", %d failed", failed)
		}
		fmt.Fprintf(w, "%s  %.0f ms  %s ago  session %s\n", oneLine(line), sc.DurationMs, api.Ago(now, sc.Started), oneLine(who))
		if sc.Error != "" {
			fmt.Fprintf(w, "      %s\n", oneLine(clip(firstLine(sc.Error), 100)))
		}
	}
}

// writeReportWarnings lists the config's warnings, if any.
func writeReportWarnings(w io.Writer, r *api.Report) {
	if len(r.Warnings) == 0 {
		return
	}
	fmt.Fprintf(w, "\nconfig warnings:\n")
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "  %s\n", oneLine(warn))
	}
}

// tildePath writes the home directory as ~, as people do.
func tildePath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return p
	}
	if p == home {
		return "~"
	}
	if rest, ok := strings.CutPrefix(p, home+"/"); ok {
		return "~/" + rest
	}
	return p
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// pluralS is "s" unless n is 1.
func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
