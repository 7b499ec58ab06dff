//go:build linux

package main

// The proxy bench's report: what a run measured, targets and the text a
// person reads.

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// benchReport is everything a run measured. Durations are in microseconds,
// memory in KiB.
type benchReport struct {
	Machine  benchMachine `json:"machine"`
	Call     string       `json:"call"`
	Protocol string       `json:"protocol,omitempty"` // the test server's only protocol version, if limited
	Duration float64      `json:"durationSeconds"`    // measuring time per path
	Rounds   int          `json:"rounds"`
	// Baseline is the mcpgw binary measured beside the one the report is
	// of (--baseline), on paths named benchBaselinePrefix + path.
	Baseline string `json:"baseline,omitempty"`

	Latency []*benchFigure `json:"latency,omitempty"` // concurrency 1
	// LatencyRatio is daemon HTTP p50 / direct HTTP p50.
	LatencyRatio float64 `json:"latencyRatio,omitempty"`
	// Throughput: direct HTTP and daemon HTTP at 16 and 64 sessions.
	Throughput []*benchFigure `json:"throughput,omitempty"`
	// LoadRSSKB is the daemon's largest VmRSS seen during the throughput
	// phase, LoadAnonKB its largest RssAnon (VmRSS less the pages of the
	// executable and other files, which the kernel can take back and
	// other mcpgw processes share); LoadHWMKB its VmHWM at the end of it.
	LoadRSSKB  int64 `json:"loadRssKB,omitempty"`
	LoadAnonKB int64 `json:"loadAnonKB,omitempty"`
	LoadHWMKB  int64 `json:"loadHwmKB,omitempty"`
	// StartRSSKB is the daemon's VmRSS with its server and no session;
	// SessionsRSSKB with Sessions warmed-up sessions open, before the
	// measured load; AfterRSSKB AfterLoadS seconds after they all closed.
	StartRSSKB    int64   `json:"startRssKB,omitempty"`
	Sessions      int     `json:"sessions,omitempty"`
	SessionsRSSKB int64   `json:"sessionsRssKB,omitempty"`
	AfterRSSKB    int64   `json:"afterRssKB,omitempty"`
	AfterLoadS    float64 `json:"afterLoadS,omitempty"`
	// Modes is the daemon's memory under benchModeSessions sessions of
	// one mode at a time, after the throughput phase.
	Modes []*benchModeMemory `json:"modes,omitempty"`

	Idle      *benchIdle      `json:"idle,omitempty"`
	Processes *benchProcesses `json:"processes,omitempty"`
	Targets   []benchTarget   `json:"targets"`
	Errors    int             `json:"errors"`
	Problems  []string        `json:"problems,omitempty"` // first error of each failing path, wrong counts
}

type benchMachine struct {
	CPUs       int     `json:"cpus"`
	Model      string  `json:"model"`
	GoVersion  string  `json:"goVersion"`
	Build      string  `json:"mcpgwBuild"`        // how the measured mcpgw was built: "CGO_ENABLED=0", "cgo"
	LoadBefore float64 `json:"loadAverageBefore"` // 1-minute load average at start
	LoadAfter  float64 `json:"loadAverageAfter"`
}

// benchFigure is one path's result over all its rounds.
type benchFigure struct {
	Path      string  `json:"path"`
	Sessions  int     `json:"sessions"`
	Calls     int     `json:"calls"`
	Errors    int     `json:"errors"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"callsPerSecond"`
	P50       float64 `json:"p50us"`
	P99       float64 `json:"p99us"`
	// CPU is the CPU time per successful call, in µs, of each process
	// taking part: "client" (this process), "shim", "daemon", "upstream"
	// (the test server that runs the tool).
	CPU map[string]float64 `json:"cpuPerCallUs"`
	// AllocKB is what the daemon allocated per call (its
	// go_memstats_alloc_bytes_total), GCs its garbage collections per
	// 1,000 calls; both only on daemon paths.
	AllocKB float64 `json:"daemonAllocKBPerCall,omitempty"`
	GCs     float64 `json:"daemonGCsPer1000Calls,omitempty"`
}

// benchIdle is the daemon with benchIdleServers servers, all cached.
type benchIdle struct {
	Servers int   `json:"servers"`
	RSSKB   int64 `json:"rssKB"`
	// AnonKB is the part of RSSKB that is the daemon's own (RssAnon); the
	// rest is the binary's file-backed pages, shared with other processes
	// running it.
	AnonKB   int64 `json:"rssAnonKB"`
	Children int   `json:"children"`
	// ListedTools is what a direct-mode session listed afterwards: every
	// tool, from the cache alone; ListedRSSKB the RSS after that listing
	// and ChildrenAfter the child processes then (still none).
	ListedTools   int   `json:"listedTools"`
	ListedRSSKB   int64 `json:"listedRssKB"`
	ChildrenAfter int   `json:"childrenAfter"`
}

// benchProcesses is benchFanSessions sessions each calling a tool on every
// one of benchFanServers servers.
type benchProcesses struct {
	Servers  int `json:"servers"`
	Sessions int `json:"sessions"`
	Calls    int `json:"calls"`
	Errors   int `json:"errors"`
	// Children are the daemon's upstream processes afterwards; Starts the
	// upstream processes ever started (each appends its PID to a file);
	// Helpers its other child processes (the upstream reaper).
	Children int `json:"children"`
	Starts   int `json:"starts"`
	Helpers  int `json:"helpers"`
	// Direct is the process count without a gateway: each session starts
	// its own copy of every server.
	Direct         int   `json:"directEquivalent"`
	DaemonRSSKB    int64 `json:"daemonRssKB"`
	UpstreamRSSKB  int64 `json:"upstreamRssKB"` // the upstreams' VmRSS, summed
	UpstreamAnonKB int64 `json:"upstreamRssAnonKB"`
	HelperRSSKB    int64 `json:"helperRssKB"`
	HelperAnonKB   int64 `json:"helperRssAnonKB"`
}

type benchTarget struct {
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"`
	Pass bool   `json:"pass"`
}

// failure is the run's verdict on correctness (not speed): calls that
// failed, or process counts that are wrong.
func (r *benchReport) failure() error {
	if len(r.Problems) == 0 {
		return nil
	}
	return fmt.Errorf("bench proxy: %s", strings.Join(r.Problems, "; "))
}

// benchTargets are the pass/fail lines. Each compares figures of this one
// run, so machine noise affects both sides of a ratio.
// benchDaemonPaths are the paths through the daemon that targets judge.
var benchDaemonPaths = []string{"daemon HTTP", "daemon HTTP, mcp tool"}

func benchFind(figs []*benchFigure, path string) *benchFigure {
	for _, f := range figs {
		if f.Path == path {
			return f
		}
	}
	return nil
}

func benchTargets(r *benchReport) []benchTarget {
	out := slices.Concat(latencyTargets(r), loadTargets(r), baselineTargets(r))
	for _, m := range r.Modes {
		out = append(out, benchTarget{
			Name: fmt.Sprintf("daemon peak VmRSS, %d sessions, %s", m.Sessions, m.Mode),
			Want: fmt.Sprintf("≤ %d MB", benchMaxLoadRSSKB/1024),
			Got:  benchMB(m.PeakRSSKB),
			Pass: m.PeakRSSKB > 0 && m.PeakRSSKB <= benchMaxLoadRSSKB,
		})
	}
	if r.Idle != nil {
		out = append(out, benchTarget{
			Name: fmt.Sprintf("idle RSS with %d cached servers", r.Idle.Servers),
			Want: fmt.Sprintf("≤ %d MB, 0 processes", benchMaxIdleRSSKB/1024),
			Got:  fmt.Sprintf("%s, %d processes", benchMB(r.Idle.RSSKB), r.Idle.Children),
			Pass: r.Idle.RSSKB > 0 && r.Idle.RSSKB <= benchMaxIdleRSSKB && r.Idle.Children == 0,
		})
	}
	if p := r.Processes; p != nil {
		out = append(out, benchTarget{
			Name: fmt.Sprintf("%d sessions × %d servers, upstream processes", p.Sessions, p.Servers),
			Want: fmt.Sprintf("≤ %d (direct use: %d)", p.Servers, p.Direct),
			Got:  fmt.Sprintf("%d running, %d started, %d errors", p.Children, p.Starts, p.Errors),
			Pass: p.Children <= p.Servers && p.Starts <= p.Servers && p.Errors == 0,
		})
	}
	return out
}

// latencyTargets judge the concurrency-1 figures.
func latencyTargets(r *benchReport) []benchTarget {
	var out []benchTarget
	find, daemonPaths := benchFind, benchDaemonPaths
	if direct := find(r.Latency, "direct HTTP"); direct != nil && direct.P50 > 0 {
		for _, path := range daemonPaths {
			f := find(r.Latency, path)
			if f == nil {
				continue
			}
			ratio := f.P50 / direct.P50
			out = append(out, benchTarget{
				Name: fmt.Sprintf("p50 at concurrency 1, %s vs direct HTTP", path),
				Want: fmt.Sprintf("≤ %.1f×", benchMaxLatencyRatio),
				Got:  fmt.Sprintf("%.2f× (%s vs %s)", ratio, benchUS(f.P50), benchUS(direct.P50)),
				Pass: ratio <= benchMaxLatencyRatio,
			})
		}
		for _, path := range daemonPaths {
			if f := find(r.Latency, path); f != nil {
				out = append(out, benchTarget{
					Name: fmt.Sprintf("daemon CPU per call at concurrency 1, %s", path),
					Want: fmt.Sprintf("≤ %.0f µs", benchMaxCPUPerCallUS),
					Got:  fmt.Sprintf("%.0f µs", f.CPU["daemon"]),
					Pass: f.CPU["daemon"] <= benchMaxCPUPerCallUS,
				})
			}
		}
		for _, path := range append(daemonPaths, "daemon via shim") {
			if f := find(r.Latency, path); f != nil {
				out = append(out, benchTarget{
					Name: fmt.Sprintf("daemon allocation per call, %s", path),
					Want: fmt.Sprintf("≤ %.0f KiB", benchMaxAllocKB),
					Got:  fmt.Sprintf("%.1f KiB", f.AllocKB),
					Pass: f.AllocKB <= benchMaxAllocKB,
				})
			}
		}
		if f := find(r.Latency, "daemon via shim"); f != nil {
			out = append(out, benchTarget{
				Name: "shim CPU per call at concurrency 1",
				Want: fmt.Sprintf("≤ %.0f µs", benchMaxShimCPUUS),
				Got:  fmt.Sprintf("%.0f µs", f.CPU["shim"]),
				Pass: f.CPU["shim"] <= benchMaxShimCPUUS,
			})
		}
	}
	return out
}

// baselineTargets judge the daemon's CPU per call and throughput against
// the baseline's, measured in the same rounds: no more CPU per call at
// concurrency 1 and at 64 sessions, and at 64 sessions at least the
// baseline's throughput.
func baselineTargets(r *benchReport) []benchTarget {
	var out []benchTarget
	if r.Baseline == "" {
		return nil
	}
	at := func(figs []*benchFigure, sessions int) []*benchFigure {
		var out []*benchFigure
		for _, f := range figs {
			if f.Sessions == sessions {
				out = append(out, f)
			}
		}
		return out
	}
	for _, set := range []struct {
		figs  []*benchFigure
		where string
	}{{r.Latency, "concurrency 1"}, {at(r.Throughput, 64), "64 sessions"}} {
		for _, path := range benchDaemonPaths {
			f, b := benchFind(set.figs, path), benchFind(set.figs, benchBaselinePrefix+path)
			if f == nil || b == nil {
				continue
			}
			out = append(out, benchTarget{
				Name: fmt.Sprintf("daemon CPU per call at %s, %s vs the baseline", set.where, path),
				Want: "≤ the baseline's",
				Got:  fmt.Sprintf("%.0f µs vs %.0f µs", f.CPU["daemon"], b.CPU["daemon"]),
				Pass: f.CPU["daemon"] > 0 && f.CPU["daemon"] <= b.CPU["daemon"],
			})
			if set.where != "concurrency 1" {
				out = append(out, benchTarget{
					Name: fmt.Sprintf("throughput at %s, %s vs the baseline", set.where, path),
					Want: "≥ the baseline's",
					Got:  fmt.Sprintf("%.0f vs %.0f calls/s", f.PerSecond, b.PerSecond),
					Pass: f.PerSecond > 0 && f.PerSecond >= b.PerSecond,
				})
			}
		}
	}
	return out
}

// loadTargets judge the figures at 64 sessions.
func loadTargets(r *benchReport) []benchTarget {
	var out []benchTarget
	find, daemonPaths := benchFind, benchDaemonPaths
	var loaded []*benchFigure
	for _, f := range r.Throughput {
		if f.Sessions == 64 {
			loaded = append(loaded, f)
		}
	}
	if direct := find(loaded, "direct HTTP"); direct != nil {
		for _, path := range daemonPaths {
			f := find(loaded, path)
			if f == nil {
				continue
			}
			out = append(out, benchTarget{
				Name: fmt.Sprintf("daemon CPU per call at 64 sessions, %s", path),
				Want: fmt.Sprintf("≤ %.0f µs", benchMaxCPULoadedUS),
				Got:  fmt.Sprintf("%.0f µs", f.CPU["daemon"]),
				Pass: f.CPU["daemon"] <= benchMaxCPULoadedUS,
			})
			ratio := 0.0
			if direct.PerSecond > 0 {
				ratio = f.PerSecond / direct.PerSecond
			}
			out = append(out, benchTarget{
				Name: fmt.Sprintf("throughput at 64 sessions, %s vs direct HTTP, no errors", path),
				Want: fmt.Sprintf("≥ %.2f×, 0 errors", benchMinThroughputRatio),
				Got:  fmt.Sprintf("%.2f× (%.0f vs %.0f calls/s), %d errors", ratio, f.PerSecond, direct.PerSecond, direct.Errors+f.Errors),
				Pass: ratio >= benchMinThroughputRatio && direct.Errors+f.Errors == 0,
			})
		}
	}
	return out
}

func (r *benchReport) writeText(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "mcpgw-bench proxy: %s, %s per path in %d alternating rounds\n", r.Call, time.Duration(r.Duration*float64(time.Second)), r.Rounds)
	if r.Protocol != "" {
		fmt.Fprintf(w, "the test server speaks protocol %s only\n", r.Protocol)
	}
	fmt.Fprintf(w, "machine: %d CPUs (%s), %s, mcpgw built with %s; load average %.2f at start, %.2f at end\n",
		m.CPUs, m.Model, m.GoVersion, m.Build, m.LoadBefore, m.LoadAfter)
	if r.Baseline != "" {
		fmt.Fprintf(w, "baseline: %s, measured on the daemon paths in the same rounds\n", r.Baseline)
	}
	fmt.Fprintln(w, "client, shim, daemon, upstream: CPU time per call, in µs, of that process; alloc: KiB the daemon allocated per call; GCs: its collections per 1,000 calls")

	r.writeCalls(w)
	if i := r.Idle; i != nil {
		fmt.Fprintf(w, "\nidle daemon, %d servers configured and cached: VmRSS %s (%s its own, RssAnon), %d child processes\n", i.Servers, benchMB(i.RSSKB), benchMB(i.AnonKB), i.Children)
		fmt.Fprintf(w, "  after one direct-mode session listed its %d tools, from the cache: VmRSS %s, %d child processes\n",
			i.ListedTools, benchMB(i.ListedRSSKB), i.ChildrenAfter)
	}
	if p := r.Processes; p != nil {
		fmt.Fprintf(w, "\n%d sessions × %d servers, each session calling every server (%d calls, %d errors):\n", p.Sessions, p.Servers, p.Calls, p.Errors)
		fmt.Fprintf(w, "  %d upstream processes running, %d ever started (direct use: %d); %d other child (the reaper)\n", p.Children, p.Starts, p.Direct, p.Helpers)
		fmt.Fprintf(w, "  VmRSS: daemon %s, upstreams %s together (RssAnon %s), reaper %s (RssAnon %s)\n",
			benchMB(p.DaemonRSSKB), benchMB(p.UpstreamRSSKB), benchMB(p.UpstreamAnonKB), benchMB(p.HelperRSSKB), benchMB(p.HelperAnonKB))
	}

	fmt.Fprintln(w, "\ntargets")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range r.Targets {
		verdict := "PASS"
		if !t.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", verdict, t.Name, t.Want, t.Got)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nerrors: %d\n", r.Errors)
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
}

// writeCalls writes the latency and throughput tables.
func (r *benchReport) writeCalls(w io.Writer) {
	if len(r.Latency) > 0 {
		fmt.Fprintln(w, "\nlatency at concurrency 1")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "path\tcalls\terrors\tp50\tp99\tclient\tshim\tdaemon\tupstream\talloc\tGCs\t")
		for _, f := range r.Latency {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t\n", f.Path, f.Calls, f.Errors, benchUS(f.P50), benchUS(f.P99), benchCPUColumns(f))
		}
		tw.Flush()
		ratio := func(a, b *benchFigure) string {
			if b.P50 == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f×", a.P50/b.P50)
		}
		l := r.Latency
		fmt.Fprintf(w, "p50 ratios: daemon HTTP / direct stdio %s; daemon HTTP / direct HTTP %s; shim / direct stdio %s\n",
			ratio(l[2], l[0]), ratio(l[2], l[1]), ratio(l[4], l[0]))
	}
	if len(r.Throughput) > 0 {
		fmt.Fprintln(w, "\nthroughput, one session per concurrent caller")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "path\tsessions\tcalls\terrors\tcalls/s\tp50\tp99\tclient\tshim\tdaemon\tupstream\talloc\tGCs\t")
		for _, f := range r.Throughput {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\t%s\t%s\t%s\t\n", f.Path, f.Sessions, f.Calls, f.Errors, f.PerSecond, benchUS(f.P50), benchUS(f.P99), benchCPUColumns(f))
		}
		tw.Flush()
		for _, prefix := range []string{"", benchBaselinePrefix} {
			var parts []string
			for _, n := range []int{16, 64} {
				var direct, daemon *benchFigure
				for _, f := range r.Throughput {
					switch {
					case f.Sessions != n:
					case f.Path == "direct HTTP":
						direct = f
					case f.Path == prefix+"daemon HTTP":
						daemon = f
					}
				}
				if direct != nil && daemon != nil && direct.PerSecond > 0 {
					parts = append(parts, fmt.Sprintf("%.2f× at %d sessions", daemon.PerSecond/direct.PerSecond, n))
				}
			}
			if len(parts) > 0 {
				fmt.Fprintf(w, "%sdaemon / direct calls/s: %s\n", prefix, strings.Join(parts, ", "))
			}
		}
		fmt.Fprintf(w, "daemon memory under this load: VmRSS up to %s (RssAnon up to %s), VmHWM %s\n", benchMB(r.LoadRSSKB), benchMB(r.LoadAnonKB), benchMB(r.LoadHWMKB))
		if r.StartRSSKB > 0 {
			fmt.Fprintf(w, "daemon VmRSS: %s idle with its server before any session", benchMB(r.StartRSSKB))
			if r.Sessions > 0 {
				fmt.Fprintf(w, "; %s with %d warmed-up sessions open (%.0f KB per session)", benchMB(r.SessionsRSSKB), r.Sessions,
					float64(r.SessionsRSSKB-r.StartRSSKB)/float64(r.Sessions))
			}
			if r.AfterRSSKB > 0 {
				fmt.Fprintf(w, "; %s %gs after they closed", benchMB(r.AfterRSSKB), r.AfterLoadS)
			}
			fmt.Fprintln(w)
		}
	}
	if len(r.Modes) > 0 {
		fmt.Fprintf(w, "\ndaemon memory with %d sessions of one mode calling, nothing else open\n", benchModeSessions)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "mode\tsessions\tcalls\terrors\tpeak VmRSS\tpeak RssAnon\tVmRSS at the end\t")
		for _, m := range r.Modes {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t\n", m.Mode, m.Sessions, m.Calls, m.Errors, benchMB(m.PeakRSSKB), benchMB(m.PeakAnonKB), benchMB(m.EndRSSKB))
		}
		tw.Flush()
	}
}

// benchCPUColumns are a figure's CPU per call by process, allocation and
// collections, as table columns.
func benchCPUColumns(f *benchFigure) string {
	var cols []string
	for _, role := range []string{"client", "shim", "daemon", "upstream"} {
		if c, ok := f.CPU[role]; ok {
			cols = append(cols, fmt.Sprintf("%.0f", c))
		} else {
			cols = append(cols, "-")
		}
	}
	if f.AllocKB > 0 {
		cols = append(cols, fmt.Sprintf("%.0f", f.AllocKB), fmt.Sprintf("%.1f", f.GCs))
	} else {
		cols = append(cols, "-", "-")
	}
	return strings.Join(cols, "\t")
}

func benchUS(us float64) string {
	if us >= 10000 {
		return fmt.Sprintf("%.1fms", us/1000)
	}
	return fmt.Sprintf("%.0fµs", us)
}

func benchMB(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }
