//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/proctest"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestBenchProxy runs `mcpgw bench proxy` briefly and checks that it
// measured every figure without a failed call and counted the processes
// right. It asserts nothing about speed: that is what the command reports.
func TestBenchProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several daemons and upstreams")
	}
	t.Parallel() // with TestBenchProxyBaseline: both wait more than they work
	mcpgw, bench := buildBinaries(t)
	// A call may take long on a machine busy with other tests (one
	// direct call to the -race test server once took over 10 s): this
	// test counts failures, not time.
	// --settle 2s: the figures read after a settle are not checked here.
	cmd := exec.Command(bench, "proxy", "--mcpgw", mcpgw, "--duration", "1s", "--rounds", "2", "--json", "--quiet", "--memprofile", "mem.prof",
		"--call-timeout", "2m", "--settle", "2s", "--keep", "homes")
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", cmd, err, stdout.String(), stderr.String())
	}
	// The daemon's allocation profile, written as it stopped: gzipped.
	if prof, err := os.ReadFile(filepath.Join(cmd.Dir, "mem.prof")); err != nil || len(prof) < 100 || prof[0] != 0x1f || prof[1] != 0x8b {
		t.Errorf("--memprofile wrote %d bytes (%v), want a gzipped profile", len(prof), err)
	}
	// --keep: the measured daemon's whole log, from its start to its
	// stop, and its audit log of the calls, are left.
	home := filepath.Join(cmd.Dir, "homes", "main")
	if log, err := os.ReadFile(filepath.Join(home, "daemon.log")); err != nil ||
		!bytes.Contains(log, []byte(`"msg":"mcpgw serving"`)) || !bytes.Contains(log, []byte(`"msg":"mcpgw stopping"`)) {
		t.Errorf("--keep: the daemon's log (%v):\n%.2000s", err, log)
	}
	if audit, err := os.ReadFile(filepath.Join(home, "state", "mcpgw", "audit.jsonl")); err != nil || bytes.Count(audit, []byte(`"outcome":"ok"`)) < 100 {
		t.Errorf("--keep: the daemon's audit log holds %d calls (%v), want its calls", bytes.Count(audit, []byte(`"outcome":"ok"`)), err)
	}
	var r benchReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decoding the report: %v\n%s", err, stdout.String())
	}

	if r.Machine.CPUs <= 0 || r.Machine.Model == "" {
		t.Errorf("machine = %+v, want the CPU count and model", r.Machine)
	}
	if r.Errors != 0 || len(r.Problems) > 0 {
		t.Errorf("errors = %d, problems %q; want none", r.Errors, r.Problems)
	}
	if r.AfterRSSKB <= 0 || r.AfterLoadS != 5 {
		t.Errorf("memory after the load: %d KiB, read %gs after; want > 0, 5s (--settle 2s, and 3s more)", r.AfterRSSKB, r.AfterLoadS)
	}

	type want struct {
		path     string
		sessions int
		roles    []string // processes whose CPU time is charged
	}
	check := func(kind string, got []*benchFigure, wants []want) {
		t.Helper()
		if len(got) != len(wants) {
			t.Fatalf("%s: %d figures, want %d", kind, len(got), len(wants))
		}
		for i, w := range wants {
			f := got[i]
			if f.Path != w.path || f.Sessions != w.sessions {
				t.Errorf("%s[%d] = %s with %d sessions, want %s with %d", kind, i, f.Path, f.Sessions, w.path, w.sessions)
			}
			if f.Calls <= 0 || f.Errors != 0 || f.Seconds <= 0 || f.PerSecond <= 0 {
				t.Errorf("%s %s: calls %d, errors %d, %.2fs, %.0f/s; want calls, no errors", kind, f.Path, f.Calls, f.Errors, f.Seconds, f.PerSecond)
			}
			if f.P50 <= 0 || f.P99 < f.P50 {
				t.Errorf("%s %s: p50 %.0fµs, p99 %.0fµs", kind, f.Path, f.P50, f.P99)
			}
			var roles []string
			for role := range f.CPU {
				roles = append(roles, role)
			}
			slices.Sort(roles)
			if !slices.Equal(roles, w.roles) {
				t.Errorf("%s %s: CPU of %q, want %q", kind, f.Path, roles, w.roles)
			}
		}
	}
	direct := []string{"client", "upstream"}
	daemon := []string{"client", "daemon", "upstream"}
	check("latency", r.Latency, []want{
		{"direct stdio", 1, direct},
		{"direct HTTP", 1, direct},
		{"daemon HTTP", 1, daemon},
		{"daemon HTTP, mcp tool", 1, daemon},
		{"daemon via shim", 1, []string{"client", "daemon", "shim", "upstream"}},
	})
	if r.LatencyRatio <= 0 {
		t.Errorf("latency ratio = %v", r.LatencyRatio)
	}
	check("throughput", r.Throughput, []want{
		{"direct HTTP", 16, direct},
		{"daemon HTTP", 16, daemon},
		{"direct HTTP", 64, direct},
		{"daemon HTTP", 64, daemon},
		{"daemon HTTP, mcp tool", 64, daemon},
	})
	// VmHWM and VmRSS are read one after the other while the daemon still
	// works, so only their presence is checked.
	if r.LoadRSSKB <= 0 || r.LoadHWMKB <= 0 || r.LoadAnonKB <= 0 || r.LoadAnonKB > r.LoadRSSKB {
		t.Errorf("memory under load: VmRSS %d KiB, RssAnon %d KiB, VmHWM %d KiB; want all > 0, RssAnon ≤ VmRSS", r.LoadRSSKB, r.LoadAnonKB, r.LoadHWMKB)
	}

	// Each mode alone, one after the other.
	var modes []string
	for _, m := range r.Modes {
		modes = append(modes, m.Mode)
		if m.Sessions != benchModeSessions || m.Calls <= 0 || m.Errors != 0 || m.PeakAnonKB <= 0 || m.PeakAnonKB > m.PeakRSSKB || m.EndRSSKB <= 0 {
			t.Errorf("memory, %s = %+v; want %d sessions, calls, no errors, 0 < RssAnon ≤ VmRSS", m.Mode, *m, benchModeSessions)
		}
	}
	if want := []string{"HTTP, direct tools", "HTTP, mcp tool", "stdio shim, direct tools"}; !slices.Equal(modes, want) {
		t.Errorf("memory measured in modes %q, want %q", modes, want)
	}

	wantTools := benchIdleServers * len(fakeupstream.ToolNames)
	if i := r.Idle; i == nil {
		t.Error("no idle figures")
	} else if i.Servers != benchIdleServers || i.RSSKB <= 0 || i.AnonKB <= 0 || i.AnonKB > i.RSSKB || i.Children != 0 || i.ListedTools != wantTools || i.ListedRSSKB <= 0 || i.ChildrenAfter != 0 {
		t.Errorf("idle = %+v, want %d servers, an RSS, no child process, %d tools listed", *i, benchIdleServers, wantTools)
	}

	if p := r.Processes; p == nil {
		t.Error("no process figures")
	} else {
		w := *p // the memory figures, checked below
		w.Servers, w.Sessions, w.Calls, w.Errors, w.Children, w.Starts, w.Direct = 10, 10, 100, 0, 10, 10, 100
		if *p != w || p.DaemonRSSKB <= 0 || p.UpstreamRSSKB <= 0 {
			t.Errorf("processes = %+v, want %+v", *p, w)
		}
	}

	var names []string
	for _, tg := range r.Targets {
		names = append(names, tg.Name)
		if tg.Want == "" || tg.Got == "" {
			t.Errorf("target %q: want %q, got %q", tg.Name, tg.Want, tg.Got)
		}
	}
	prefixes := []string{
		"p50 at concurrency 1, daemon HTTP vs", "p50 at concurrency 1, daemon HTTP, mcp tool vs",
		"daemon CPU per call at concurrency 1, daemon HTTP", "daemon CPU per call at concurrency 1, daemon HTTP, mcp tool",
		"daemon allocation per call, daemon HTTP", "daemon allocation per call, daemon HTTP, mcp tool", "daemon allocation per call, daemon via shim",
		"shim CPU per call",
		"daemon CPU per call at 64 sessions, daemon HTTP", "throughput at 64 sessions, daemon HTTP vs",
		"daemon CPU per call at 64 sessions, daemon HTTP, mcp tool", "throughput at 64 sessions, daemon HTTP, mcp tool vs",
		"daemon peak VmRSS, 64 sessions, HTTP, direct tools", "daemon peak VmRSS, 64 sessions, HTTP, mcp tool",
		"daemon peak VmRSS, 64 sessions, stdio shim, direct tools",
		"idle RSS", "10 sessions × 10 servers",
	}
	if len(names) != len(prefixes) {
		t.Errorf("%d targets, want %d: %q", len(names), len(prefixes), names)
	}
	for i, prefix := range prefixes {
		if i >= len(names) || !strings.HasPrefix(names[i], prefix) {
			t.Errorf("targets = %q, want %q at %d", names, prefix, i)
		}
	}
	// Whatever the speed, the correctness targets hold.
	if tg := r.Targets[len(r.Targets)-1]; !tg.Pass {
		t.Errorf("target %q failed: %s", tg.Name, tg.Got)
	}

	// The text report shows the same figures.
	var text bytes.Buffer
	r.writeText(&text)
	for _, s := range []string{"latency at concurrency 1", "daemon via shim", "throughput", "calls/s",
		"idle daemon, 100 servers", "10 upstream processes running, 10 ever started (direct use: 100)", "targets", "errors: 0"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, text.String())
		}
	}
	if n := strings.Count(text.String(), "PASS") + strings.Count(text.String(), "FAIL"); n != len(prefixes) {
		t.Errorf("text report has %d pass/fail lines, want %d:\n%s", n, len(prefixes), text.String())
	}
}

// TestBenchProxyBaseline measures a build beside another in one run (here
// the same build beside itself, at concurrency 1): the baseline's daemon
// gets the daemon paths too, after the measured one's, and the report
// judges against it.
func TestBenchProxyBaseline(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two daemons and upstreams")
	}
	t.Parallel()
	mcpgw, bench := buildBinaries(t)
	cmd := exec.Command(bench, "proxy", "--mcpgw", mcpgw, "--baseline", mcpgw, "--phases", "latency",
		"--duration", "1s", "--rounds", "2", "--json", "--quiet", "--call-timeout", "2m")
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", cmd, err, stdout.String(), stderr.String())
	}
	var r benchReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("decoding the report: %v\n%s", err, stdout.String())
	}
	if r.Baseline != mcpgw || r.Errors != 0 || len(r.Problems) > 0 {
		t.Fatalf("baseline %q, errors %d, problems %q; want %q, none", r.Baseline, r.Errors, r.Problems, mcpgw)
	}
	var paths []string
	for _, f := range r.Latency {
		paths = append(paths, f.Path)
		if f.Calls <= 0 || f.CPU["daemon"] < 0 {
			t.Errorf("%s: %d calls, daemon CPU %v", f.Path, f.Calls, f.CPU["daemon"])
		}
		if strings.Contains(f.Path, "daemon") && f.CPU["daemon"] <= 0 {
			t.Errorf("%s: no daemon CPU time", f.Path)
		}
	}
	want := []string{"direct stdio", "direct HTTP", "daemon HTTP", "daemon HTTP, mcp tool", "daemon via shim",
		"baseline: daemon HTTP", "baseline: daemon HTTP, mcp tool", "baseline: daemon via shim"}
	if !slices.Equal(paths, want) {
		t.Fatalf("latency paths %q, want %q", paths, want)
	}
	var got []string
	for _, tg := range r.Targets {
		if strings.HasSuffix(tg.Name, "vs the baseline") {
			got = append(got, tg.Name)
		}
	}
	wantTargets := []string{"daemon CPU per call at concurrency 1, daemon HTTP vs the baseline",
		"daemon CPU per call at concurrency 1, daemon HTTP, mcp tool vs the baseline"}
	if !slices.Equal(got, wantTargets) {
		t.Errorf("baseline targets %q, want %q", got, wantTargets)
	}
	var text bytes.Buffer
	r.writeText(&text)
	if !strings.Contains(text.String(), "baseline: "+mcpgw+", measured on the daemon paths") {
		t.Errorf("text report does not name the baseline:\n%s", text.String())
	}
}

// The report's judgement against a baseline, on figures made up for it:
// CPU per call at concurrency 1 and 64 sessions, throughput at 64, each
// measured path against the baseline's path of the same name.
func TestBenchBaselineTargets(t *testing.T) {
	fig := func(path string, sessions int, cpu, perSecond float64) *benchFigure {
		return &benchFigure{Path: path, Sessions: sessions, CPU: map[string]float64{"daemon": cpu}, PerSecond: perSecond}
	}
	r := &benchReport{
		Baseline: "old",
		Latency: []*benchFigure{fig("direct stdio", 1, 0, 0), fig("direct HTTP", 1, 0, 0),
			fig("daemon HTTP", 1, 250, 0), fig("daemon HTTP, mcp tool", 1, 260, 0), fig("daemon via shim", 1, 180, 0),
			fig("baseline: daemon HTTP", 1, 250, 0), fig("baseline: daemon HTTP, mcp tool", 1, 259, 0)},
		Throughput: []*benchFigure{fig("direct HTTP", 16, 0, 2000), fig("daemon HTTP", 16, 100, 2100), fig("baseline: daemon HTTP", 16, 90, 2000),
			fig("direct HTTP", 64, 0, 2000), fig("daemon HTTP", 64, 140, 2100), fig("daemon HTTP, mcp tool", 64, 150, 1900),
			fig("baseline: daemon HTTP", 64, 145, 2050), fig("baseline: daemon HTTP, mcp tool", 64, 149, 1900)},
	}
	var got []string
	for _, tg := range baselineTargets(r) {
		got = append(got, fmt.Sprintf("%v %s: %s", tg.Pass, tg.Name, tg.Got))
	}
	want := []string{
		"true daemon CPU per call at concurrency 1, daemon HTTP vs the baseline: 250 µs vs 250 µs",
		"false daemon CPU per call at concurrency 1, daemon HTTP, mcp tool vs the baseline: 260 µs vs 259 µs",
		"true daemon CPU per call at 64 sessions, daemon HTTP vs the baseline: 140 µs vs 145 µs",
		"true throughput at 64 sessions, daemon HTTP vs the baseline: 2100 vs 2050 calls/s",
		"false daemon CPU per call at 64 sessions, daemon HTTP, mcp tool vs the baseline: 150 µs vs 149 µs",
		"true throughput at 64 sessions, daemon HTTP, mcp tool vs the baseline: 1900 vs 1900 calls/s",
	}
	if !slices.Equal(got, want) {
		t.Errorf("baseline targets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if baselineTargets(&benchReport{Latency: r.Latency}) != nil {
		t.Error("targets against a baseline without one")
	}
	// The ratio to direct HTTP, for each build, by sessions.
	var text bytes.Buffer
	r.writeCalls(&text)
	for _, s := range []string{"\ndaemon / direct calls/s: 1.05× at 16 sessions, 1.05× at 64 sessions\n",
		"\nbaseline: daemon / direct calls/s: 1.00× at 16 sessions, 1.02× at 64 sessions\n"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, text.String())
		}
	}
}

// TestBenchProcReaders checks the /proc readers against this process and a
// child of it.
func TestBenchProcReaders(t *testing.T) {
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()

	kids, err := benchChildren(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(kids, child.Process.Pid) {
		t.Errorf("children of %d = %v, want %d among them", os.Getpid(), kids, child.Process.Pid)
	}
	m, err := benchProcMemory(os.Getpid())
	if err != nil || m.RSS <= 0 || m.HWM < m.RSS || m.Anon <= 0 || m.Anon > m.RSS {
		t.Errorf("memory = %+v, %v; want VmRSS ≤ VmHWM, 0 < RssAnon ≤ VmRSS", m, err)
	}
	before, err := benchProcCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the tick counter moves: CPU time only grows.
	for after := before; after == before; {
		if after, err = benchProcCPU(os.Getpid()); err != nil {
			t.Fatal(err)
		}
		if after < before {
			t.Fatalf("CPU ticks went from %d to %d", before, after)
		}
	}
	if _, err := benchProcCPU(1 << 30); err == nil {
		t.Error("CPU of a PID that cannot exist: no error")
	}
}

// buildBinaries builds mcpgw and this command (without -race: the bench
// measures them), once per test process.
func buildBinaries(t *testing.T) (mcpgw, bench string) {
	t.Helper()
	var err error
	if mcpgw, err = proctest.Build("../mcpgw", false); err != nil {
		t.Fatalf("building mcpgw: %v", err)
	}
	if bench, err = proctest.Build(".", false); err != nil {
		t.Fatalf("building mcpgw-bench: %v", err)
	}
	return mcpgw, bench
}
