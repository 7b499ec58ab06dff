//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/cachefile"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/upstreamtest"
)

// `mcpgw-bench proxy` measures what the gateway costs: the same echo call
// made directly to a test server (over stdio and over HTTP) and through a
// real daemon (over HTTP and through the stdio shim), alternated in rounds
// so that noise from the rest of the machine lands on both sides alike. It
// reads the daemon's CPU time and memory from /proc, which is why it is
// Linux only.

const (
	// benchEnvUpstream set to "http" makes `mcpgw-bench proxy` serve the
	// test server over Streamable HTTP instead: it prints the base URL on a
	// line and serves until stdin closes. The benchmark runs itself so to
	// get a direct HTTP upstream in a process of its own, as the daemon is.
	benchEnvUpstream = "MCPGW_BENCH_UPSTREAM"
	// benchEnvServer is set, with a distinct value, in the environment of
	// each generated server so that their identity hashes differ: servers
	// with equal identities would share one upstream.
	benchEnvServer = "MCPGW_BENCH_SERVER"

	benchMessage = "hello through mcpgw"
	// benchClockTicks is sysconf(_SC_CLK_TCK), the unit of utime and stime
	// in /proc/<pid>/stat: 100 on every Linux architecture Go supports.
	benchClockTicks  = 100
	benchCallTimeout = 10 * time.Second
)

// Targets (see benchTargets).
const (
	benchMaxLatencyRatio = 2.0
	benchMaxCPUPerCallUS = 150.0
	benchMaxIdleRSSKB    = 20 * 1024
	benchIdleServers     = 100
	benchFanServers      = 10
	benchFanSessions     = 10
)

// Phases a run can be limited to with --phases.
const (
	benchPhaseLatency    = "latency"
	benchPhaseThroughput = "throughput"
	benchPhaseMemory     = "memory"
	benchPhaseProcesses  = "processes"
)

var benchAllPhases = []string{benchPhaseLatency, benchPhaseThroughput, benchPhaseMemory, benchPhaseProcesses}

// benchProxyOptions configure runBenchProxy.
type benchProxyOptions struct {
	Mcpgw      string        // the mcpgw binary: it runs serve and stdio
	Self       string        // this binary: it runs the test servers
	Duration   time.Duration // measuring time of each path, split over Rounds
	Rounds     int
	Phases     []string // of benchAllPhases
	CPUProfile string   // passed to the main daemon's serve --cpuprofile
	Progress   io.Writer
}

func benchProxy(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if os.Getenv(benchEnvUpstream) == "http" {
		return benchServeUpstream(ctx, stdin, stdout)
	}
	fs := flag.NewFlagSet("bench proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: mcpgw-bench proxy [--mcpgw PATH] [--duration 10s] [--rounds 5] [--json]

Measures an echo tool call made directly to a fast test server and through a
real mcpgw daemon (HTTP, and the stdio shim), alternating the two in rounds:
latency at concurrency 1, throughput at 16 and 64 sessions, the daemon's CPU
time per call and memory, and the number of upstream processes 10 sessions
× 10 servers start. Figures from one run are comparable with each other; on
a busy machine they are noisy. It exits non-zero when a call failed or the
process counts are wrong, not when a speed target is missed.

`)
		fs.PrintDefaults()
	}
	o := benchProxyOptions{Progress: stderr}
	fs.StringVar(&o.Mcpgw, "mcpgw", "", "the mcpgw binary to measure (default: mcpgw beside this binary, else on PATH)")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "measuring time of each path")
	fs.IntVar(&o.Rounds, "rounds", 5, "rounds the measuring time is split into; paths alternate within each")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	phases := fs.String("phases", strings.Join(benchAllPhases, ","), "phases to run")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write the CPU profile of the daemon measured in the latency and throughput phases to `FILE`")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench proxy: unexpected arguments %q", fs.Args())
	}
	if o.Duration <= 0 || o.Rounds <= 0 {
		return errors.New("bench proxy: --duration and --rounds must be positive")
	}
	for _, p := range strings.Split(*phases, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !slices.Contains(benchAllPhases, p) {
			return fmt.Errorf("bench proxy: unknown phase %q (want some of %s)", p, strings.Join(benchAllPhases, ","))
		}
		o.Phases = append(o.Phases, p)
	}
	if *quiet {
		o.Progress = io.Discard
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary: %w", err)
	}
	o.Self = self
	if o.Mcpgw, err = findMcpgw(o.Mcpgw, self); err != nil {
		return err
	}

	rep, err := runBenchProxy(ctx, o)
	if err != nil {
		return fmt.Errorf("bench proxy: %w", err)
	}
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		rep.writeText(stdout)
	}
	return rep.failure()
}

// benchReport is everything a run measured. Durations are in microseconds,
// memory in KiB.
type benchReport struct {
	Machine  benchMachine `json:"machine"`
	Call     string       `json:"call"`
	Duration float64      `json:"durationSeconds"` // measuring time per path
	Rounds   int          `json:"rounds"`

	Latency []*benchFigure `json:"latency,omitempty"` // concurrency 1
	// LatencyRatio is daemon HTTP p50 / direct stdio p50.
	LatencyRatio float64 `json:"latencyRatio,omitempty"`
	// Throughput: direct HTTP and daemon HTTP at 16 and 64 sessions.
	Throughput []*benchFigure `json:"throughput,omitempty"`
	// LoadRSSKB is the daemon's largest VmRSS seen during the throughput
	// phase; LoadHWMKB its VmHWM at the end of it.
	LoadRSSKB int64 `json:"loadRssKB,omitempty"`
	LoadHWMKB int64 `json:"loadHwmKB,omitempty"`

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

// runBenchProxy runs the phases of o and returns the report. An error means
// the benchmark could not run; failed calls are counted in the report.
func runBenchProxy(ctx context.Context, o benchProxyOptions) (*benchReport, error) {
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	if len(o.Phases) == 0 {
		o.Phases = benchAllPhases
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	rep := &benchReport{
		Machine:  benchMachineInfo(),
		Call:     fmt.Sprintf("echo {%q:%q}", "message", benchMessage),
		Duration: o.Duration.Seconds(),
		Rounds:   o.Rounds,
	}
	dir, err := os.MkdirTemp("", "mcpgw-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	tools, err := benchToolList(ctx)
	if err != nil {
		return nil, err
	}
	b := &benchRun{o: o, dir: dir, rep: rep, tools: tools}

	if slices.Contains(o.Phases, benchPhaseLatency) || slices.Contains(o.Phases, benchPhaseThroughput) {
		if err := b.callPhases(ctx); err != nil {
			return nil, err
		}
	}
	if slices.Contains(o.Phases, benchPhaseMemory) {
		if err := b.idlePhase(ctx); err != nil {
			return nil, err
		}
	}
	if slices.Contains(o.Phases, benchPhaseProcesses) {
		if err := b.processPhase(ctx); err != nil {
			return nil, err
		}
	}
	rep.Machine.LoadAfter = benchLoadAverage()
	rep.Targets = benchTargets(rep)
	return rep, nil
}

type benchRun struct {
	o     benchProxyOptions
	dir   string
	rep   *benchReport
	tools []*mcp.Tool // the test server's tools
	hc    *http.Client
}

func (b *benchRun) progress(format string, a ...any) {
	fmt.Fprintf(b.o.Progress, "bench proxy: "+format+"\n", a...)
}

// httpClient is shared by every HTTP session. Each session holds one
// connection for its standalone SSE stream and one for its calls, so the
// idle pool must keep far more than the default 2 per host, or the 64
// sessions would spend their time opening connections.
func (b *benchRun) httpClient() *http.Client {
	if b.hc == nil {
		b.hc = &http.Client{Transport: &http.Transport{
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 512,
			IdleConnTimeout:     5 * time.Minute,
		}}
	}
	return b.hc
}

// callPhases measures latency and throughput against one daemon configured
// with one server, the test server over stdio.
func (b *benchRun) callPhases(ctx context.Context) error {
	var closers benchClosers
	defer closers.close()
	rep := b.rep
	exe, self := b.o.Mcpgw, b.o.Self // mcpgw; this binary, for the test servers

	cfg, err := benchWriteConfig(filepath.Join(b.dir, "main"), map[string]any{
		"bench": map[string]any{"command": self, "args": []string{"testserver"}},
	})
	if err != nil {
		return err
	}
	var extra []string
	if b.o.CPUProfile != "" {
		prof, err := filepath.Abs(b.o.CPUProfile)
		if err != nil {
			return err
		}
		extra = append(extra, "--cpuprofile", prof)
	}
	b.progress("starting the daemon")
	d, err := startBenchDaemon(ctx, exe, filepath.Join(b.dir, "main"), cfg, extra...)
	if err != nil {
		return err
	}
	closers.add(d.stop)
	up, err := startBenchHTTPUpstream(ctx, self)
	if err != nil {
		return err
	}
	closers.add(up.stop)

	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgw-bench", Version: version}, nil)
	me := os.Getpid()
	echo := benchCall{tool: "echo", args: map[string]any{"message": benchMessage}}
	viaDaemon := benchCall{tool: "bench_echo", args: map[string]any{"message": benchMessage}}
	viaProxy := benchCall{tool: "mcp", args: map[string]any{"tool": "bench_echo", "args": map[string]any{"message": benchMessage}}}

	httpSessions := func(url string, n int) ([]*mcp.ClientSession, error) {
		var out []*mcp.ClientSession
		for range n {
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: b.httpClient()}, nil)
			if err != nil {
				return nil, fmt.Errorf("connecting to %s: %w", url, err)
			}
			closers.add(func() { _ = cs.Close() })
			out = append(out, cs)
		}
		return out, nil
	}
	stdioSession := func(bin string, args ...string) (*mcp.ClientSession, int, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = benchEnv(nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
		if err != nil {
			return nil, 0, fmt.Errorf("starting %s: %w", strings.Join(args, " "), err)
		}
		closers.add(func() { _ = cs.Close() })
		return cs, cmd.Process.Pid, nil
	}

	daemonURL := d.url + "/mcp?mode=direct"
	var latency []*benchPath
	if slices.Contains(b.o.Phases, benchPhaseLatency) {
		b.progress("connecting the concurrency-1 sessions")
		direct, directPID, err := stdioSession(self, "testserver")
		if err != nil {
			return err
		}
		directHTTP, err := httpSessions(up.url+"/mcp", 1)
		if err != nil {
			return err
		}
		viaHTTP, err := httpSessions(daemonURL, 1)
		if err != nil {
			return err
		}
		viaTool, err := httpSessions(d.url+"/mcp?mode=proxy", 1)
		if err != nil {
			return err
		}
		shim, shimPID, err := stdioSession(exe, "stdio", "--socket", d.socket, "--mode", "direct", "--no-start")
		if err != nil {
			return err
		}
		latency = []*benchPath{
			newBenchPath("direct stdio", echo, []*mcp.ClientSession{direct}, map[string]int{"client": me, "upstream": directPID}),
			newBenchPath("direct HTTP", echo, directHTTP, map[string]int{"client": me, "upstream": up.pid}),
			newBenchPath("daemon HTTP", viaDaemon, viaHTTP, map[string]int{"client": me, "daemon": d.pid}),
			newBenchPath("daemon HTTP, mcp tool", viaProxy, viaTool, map[string]int{"client": me, "daemon": d.pid}),
			newBenchPath("daemon via shim", viaDaemon, []*mcp.ClientSession{shim}, map[string]int{"client": me, "shim": shimPID, "daemon": d.pid}),
		}
	}
	var throughput []*benchPath
	if slices.Contains(b.o.Phases, benchPhaseThroughput) {
		for _, n := range []int{16, 64} {
			b.progress("connecting %d sessions to each side", n)
			directHTTP, err := httpSessions(up.url+"/mcp", n)
			if err != nil {
				return err
			}
			viaHTTP, err := httpSessions(daemonURL, n)
			if err != nil {
				return err
			}
			throughput = append(throughput,
				newBenchPath("direct HTTP", echo, directHTTP, map[string]int{"client": me, "upstream": up.pid}),
				newBenchPath("daemon HTTP", viaDaemon, viaHTTP, map[string]int{"client": me, "daemon": d.pid}))
		}
	}

	// Warm up every session. By then the daemon runs its one upstream
	// (connected at start, having no cache entry), whose CPU time the
	// daemon paths count as "upstream".
	for _, p := range slices.Concat(latency, throughput) {
		p.warmUp(ctx, 20)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	kids, _, err := benchUpstreams(d.pid)
	if err != nil {
		return err
	}
	if len(kids) != 1 {
		return fmt.Errorf("the daemon runs %d upstream processes after the warm-up, want 1:\n%s", len(kids), d.logTail())
	}
	for _, p := range slices.Concat(latency, throughput) {
		if _, ok := p.procs["daemon"]; ok {
			p.procs["upstream"] = kids[0]
			p.metrics = d.url + "/metrics"
		}
	}

	slice := b.o.Duration / time.Duration(b.o.Rounds)
	if len(latency) > 0 {
		b.progress("latency at concurrency 1: %d paths × %v", len(latency), b.o.Duration)
		for r := range b.o.Rounds {
			for _, p := range benchRotate(latency, r) {
				p.run(ctx, slice)
			}
		}
		for _, p := range latency {
			rep.Latency = append(rep.Latency, p.figure())
		}
		if dp, hp := rep.Latency[0].P50, rep.Latency[2].P50; dp > 0 {
			rep.LatencyRatio = hp / dp
		}
	}
	if len(throughput) > 0 {
		b.progress("throughput at 16 and 64 sessions: %d paths × %v", len(throughput), b.o.Duration)
		for r := range b.o.Rounds {
			for i := 0; i < len(throughput); i += 2 {
				for _, p := range benchRotate(throughput[i:i+2], r) {
					p.run(ctx, slice)
				}
			}
		}
		for _, p := range throughput {
			rep.Throughput = append(rep.Throughput, p.figure())
			rep.LoadRSSKB = max(rep.LoadRSSKB, p.rssPeakKB)
		}
		if m, err := benchProcMemory(d.pid); err == nil {
			rep.LoadHWMKB = m.HWM
		}
	}
	for _, p := range slices.Concat(latency, throughput) {
		rep.Errors += p.errs
		if p.firstErr != nil {
			rep.Problems = append(rep.Problems, fmt.Sprintf("%s (%d sessions): %d of %d calls failed, first: %v",
				p.name, len(p.sessions), p.errs, p.errs+p.calls, p.firstErr))
		}
	}
	if rep.Errors > 0 {
		rep.Problems = append(rep.Problems, d.problems("main")...)
	}
	return ctx.Err()
}

// idlePhase starts a daemon with benchIdleServers servers whose tools are
// all in the cache, and reads its memory while nothing runs.
func (b *benchRun) idlePhase(ctx context.Context) error {
	b.progress("memory: a daemon with %d cached servers", benchIdleServers)
	dir := filepath.Join(b.dir, "idle")
	cfg, err := benchWriteServers(dir, b.o.Self, "b", benchIdleServers, nil)
	if err != nil {
		return err
	}
	if err := benchWriteCache(filepath.Join(dir, "cache.json"), cfg, b.tools); err != nil {
		return err
	}
	d, err := startBenchDaemon(ctx, b.o.Mcpgw, dir, cfg, "--no-bootstrap")
	if err != nil {
		return err
	}
	defer d.stop()
	// Let start-up garbage be collected and the runtime settle.
	if err := benchSleep(ctx, 2*time.Second); err != nil {
		return err
	}
	idle := &benchIdle{Servers: benchIdleServers}
	m, err := benchProcMemory(d.pid)
	if err != nil {
		return err
	}
	idle.RSSKB, idle.AnonKB = m.RSS, m.Anon
	kids, err := benchChildren(d.pid)
	if err != nil {
		return err
	}
	idle.Children = len(kids)

	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgw-bench", Version: version}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.url + "/mcp?mode=direct", HTTPClient: b.httpClient(), DisableStandaloneSSE: true}, nil)
	if err != nil {
		return fmt.Errorf("connecting to the idle daemon: %w", err)
	}
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return fmt.Errorf("listing the idle daemon's tools: %w", err)
		}
		idle.ListedTools++
	}
	cs.Close()
	if m, err = benchProcMemory(d.pid); err != nil {
		return err
	}
	idle.ListedRSSKB = m.RSS
	if kids, err = benchChildren(d.pid); err != nil {
		return err
	}
	idle.ChildrenAfter = len(kids)
	b.rep.Idle = idle

	if want := benchIdleServers * len(b.tools); idle.ListedTools != want {
		b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("the idle daemon listed %d tools from its cache, want %d", idle.ListedTools, want))
	}
	if idle.Children != 0 || idle.ChildrenAfter != 0 {
		b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("the idle daemon has %d child processes (%d after listing), want 0", idle.Children, idle.ChildrenAfter))
	}
	return nil
}

// processPhase has benchFanSessions sessions call a tool on every one of
// benchFanServers servers at once and counts the upstream processes.
func (b *benchRun) processPhase(ctx context.Context) error {
	b.progress("processes: %d sessions × %d servers", benchFanSessions, benchFanServers)
	dir := filepath.Join(b.dir, "fan")
	pidFile := filepath.Join(dir, "pids")
	cfg, err := benchWriteServers(dir, b.o.Self, "s", benchFanServers, map[string]string{upstreamtest.EnvPIDFile: pidFile})
	if err != nil {
		return err
	}
	// No cache and no bootstrap: nothing runs until the calls, which find
	// their servers' tools by connecting them.
	d, err := startBenchDaemon(ctx, b.o.Mcpgw, dir, cfg, "--no-bootstrap")
	if err != nil {
		return err
	}
	defer d.stop()

	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgw-bench", Version: version}, nil)
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	for range benchFanSessions {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.url + "/mcp?mode=proxy", HTTPClient: b.httpClient()}, nil)
		if err != nil {
			return fmt.Errorf("connecting to the daemon: %w", err)
		}
		sessions = append(sessions, cs)
	}
	pr := &benchProcesses{Servers: benchFanServers, Sessions: benchFanSessions, Direct: benchFanServers * benchFanSessions}
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for _, cs := range sessions {
		for i := range benchFanServers {
			call := benchCall{tool: "mcp", args: map[string]any{"tool": benchServerName("s", i) + "_echo", "args": map[string]any{"message": benchMessage}}}
			wg.Go(func() {
				err := call.do(ctx, cs)
				mu.Lock()
				defer mu.Unlock()
				pr.Calls++
				if err != nil {
					pr.Errors++
					if first == nil {
						first = err
					}
				}
			})
		}
	}
	wg.Wait()
	kids, helpers, err := benchUpstreams(d.pid)
	if err != nil {
		return err
	}
	pr.Children, pr.Helpers = len(kids), len(helpers)
	pids, err := upstreamtest.ReadPIDs(pidFile)
	if err != nil {
		return err
	}
	pr.Starts = len(pids)
	m, _ := benchProcMemory(d.pid)
	pr.DaemonRSSKB = m.RSS
	for _, k := range kids {
		m, _ := benchProcMemory(k)
		pr.UpstreamRSSKB += m.RSS
		pr.UpstreamAnonKB += m.Anon
	}
	for _, k := range helpers {
		m, _ := benchProcMemory(k)
		pr.HelperRSSKB += m.RSS
		pr.HelperAnonKB += m.Anon
	}
	b.rep.Processes = pr
	b.rep.Errors += pr.Errors
	if first != nil {
		b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("%d sessions × %d servers: %d of %d calls failed, first: %v", benchFanSessions, benchFanServers, pr.Errors, pr.Calls, first))
	}
	if pr.Errors > 0 {
		b.rep.Problems = append(b.rep.Problems, d.problems(fmt.Sprintf("%d-server", benchFanServers))...)
	}
	if pr.Children != benchFanServers || pr.Starts != benchFanServers {
		b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("%d sessions × %d servers: %d upstream processes running, %d started; want %d",
			benchFanSessions, benchFanServers, pr.Children, pr.Starts, benchFanServers))
	}
	return ctx.Err()
}

// benchCall is the measured tool call; its result must be the echo.
type benchCall struct {
	tool string
	args any
}

func (c benchCall) do(ctx context.Context, cs *mcp.ClientSession) error {
	ctx, cancel := context.WithTimeout(ctx, benchCallTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
	if err != nil {
		return err
	}
	var text string
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	switch {
	case res.IsError:
		return fmt.Errorf("%s: error result %q", c.tool, text)
	case text != benchMessage:
		return fmt.Errorf("%s: got %q, want %q", c.tool, text, benchMessage)
	}
	return nil
}

// benchPath is one way of making the call, with its sessions (one per
// concurrent caller) and what it measured so far.
type benchPath struct {
	name     string
	call     benchCall
	sessions []*mcp.ClientSession
	procs    map[string]int // role → PID of the processes whose CPU counts
	metrics  string         // the daemon's /metrics URL, on daemon paths

	lat       []time.Duration // of successful calls
	calls     int             // successful
	errs      int
	firstErr  error
	elapsed   time.Duration
	ticks     map[string]int64
	rssPeakKB int64 // the daemon's, sampled while running
	allocs    float64
	gcs       float64
}

func newBenchPath(name string, call benchCall, sessions []*mcp.ClientSession, procs map[string]int) *benchPath {
	return &benchPath{name: name, call: call, sessions: sessions, procs: procs, ticks: map[string]int64{}}
}

// warmUp makes n calls on each session, not measured.
func (p *benchPath) warmUp(ctx context.Context, n int) {
	var wg sync.WaitGroup
	for _, cs := range p.sessions {
		wg.Go(func() {
			for range n {
				if err := p.call.do(ctx, cs); err != nil {
					p.record(nil, 0, 1, err) // a warm-up failure counts
					return
				}
			}
		})
	}
	wg.Wait()
}

var benchRecordMu sync.Mutex

func (p *benchPath) record(lat []time.Duration, calls, errs int, err error) {
	benchRecordMu.Lock()
	defer benchRecordMu.Unlock()
	p.lat = append(p.lat, lat...)
	p.calls += calls
	p.errs += errs
	if p.firstErr == nil && err != nil {
		p.firstErr = err
	}
}

// run calls on every session at once, each in a loop, for d; the CPU time
// of the path's processes is read before and after.
func (p *benchPath) run(ctx context.Context, d time.Duration) {
	allocs0, gcs0, _ := benchScrapeGC(ctx, p.metrics)
	before := p.cpu()
	stopSampling := func() {}
	if pid, ok := p.procs["daemon"]; ok {
		stopSampling = p.sampleRSS(pid)
	}
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for _, cs := range p.sessions {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 1024)
			errs := 0
			var first error
			for ctx.Err() == nil && time.Now().Before(deadline) {
				t0 := time.Now()
				err := p.call.do(ctx, cs)
				if err != nil {
					errs++
					if first == nil {
						first = err
					}
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			p.record(lat, len(lat), errs, first)
		})
	}
	wg.Wait()
	p.elapsed += time.Since(start)
	stopSampling()
	after := p.cpu()
	for role, t := range after {
		p.ticks[role] += t - before[role]
	}
	if allocs1, gcs1, err := benchScrapeGC(ctx, p.metrics); err == nil {
		p.allocs += allocs1 - allocs0
		p.gcs += gcs1 - gcs0
	}
}

// benchScrapeGC reads the bytes allocated and the GC cycles so far from a
// daemon's /metrics ("" reads nothing).
func benchScrapeGC(ctx context.Context, url string) (allocs, gcs float64, err error) {
	if url == "" {
		return 0, 0, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	found := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		switch name {
		case "go_memstats_alloc_bytes_total":
			allocs, err = strconv.ParseFloat(val, 64)
		case "go_gc_duration_seconds_count":
			gcs, err = strconv.ParseFloat(val, 64)
		default:
			continue
		}
		if err != nil {
			return 0, 0, fmt.Errorf("parsing %s from %s: %w", name, url, err)
		}
		found++
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("%s lacks go_memstats_alloc_bytes_total or go_gc_duration_seconds_count", url)
	}
	return allocs, gcs, nil
}

func (p *benchPath) cpu() map[string]int64 {
	out := make(map[string]int64, len(p.procs))
	for role, pid := range p.procs {
		if t, err := benchProcCPU(pid); err == nil {
			out[role] = t
		}
	}
	return out
}

// sampleRSS records the largest VmRSS of pid every 100ms until the
// returned function is called.
func (p *benchPath) sampleRSS(pid int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			if m, err := benchProcMemory(pid); err == nil {
				p.rssPeakKB = max(p.rssPeakKB, m.RSS)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

func (p *benchPath) figure() *benchFigure {
	f := &benchFigure{
		Path:     p.name,
		Sessions: len(p.sessions),
		Calls:    p.calls,
		Errors:   p.errs,
		Seconds:  p.elapsed.Seconds(),
		CPU:      map[string]float64{},
	}
	if p.elapsed > 0 {
		f.PerSecond = float64(p.calls) / p.elapsed.Seconds()
	}
	lat := slices.Clone(p.lat)
	slices.Sort(lat)
	f.P50 = benchQuantile(lat, 0.50)
	f.P99 = benchQuantile(lat, 0.99)
	if p.calls > 0 {
		for role, t := range p.ticks {
			f.CPU[role] = float64(t) * (1e6 / benchClockTicks) / float64(p.calls)
		}
		f.AllocKB = p.allocs / 1024 / float64(p.calls)
		f.GCs = p.gcs * 1000 / float64(p.calls)
	}
	return f
}

// benchQuantile is the nearest-rank q-quantile of sorted, in µs.
func benchQuantile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	i = min(max(i, 0), len(sorted)-1)
	return float64(sorted[i]) / float64(time.Microsecond)
}

// benchRotate returns paths starting at the r-th, so that no path is
// always measured first in a round.
func benchRotate(paths []*benchPath, r int) []*benchPath {
	k := r % len(paths)
	return slices.Concat(paths[k:], paths[:k])
}

// benchTargets are the pass/fail lines. Each compares figures of this one
// run, so machine noise affects both sides of a ratio.
func benchTargets(r *benchReport) []benchTarget {
	var out []benchTarget
	if len(r.Latency) > 0 {
		out = append(out, benchTarget{
			Name: "p50 at concurrency 1, daemon HTTP vs direct stdio",
			Want: fmt.Sprintf("≤ %.0f×", benchMaxLatencyRatio),
			Got:  fmt.Sprintf("%.2f× (%s vs %s)", r.LatencyRatio, benchUS(r.Latency[2].P50), benchUS(r.Latency[0].P50)),
			Pass: r.LatencyRatio > 0 && r.LatencyRatio <= benchMaxLatencyRatio,
		})
	}
	// The CPU target is judged under load, at 64 sessions, where the cost
	// per call is the daemon's work; at concurrency 1 a call also pays for
	// waking the idle daemon. The worst phase is shown beside it.
	var worst *benchFigure
	for _, f := range slices.Concat(r.Latency, r.Throughput) {
		if c, ok := f.CPU["daemon"]; ok && (worst == nil || c > worst.CPU["daemon"]) {
			worst = f
		}
	}
	if n := len(r.Throughput); n >= 2 {
		f := r.Throughput[n-1]
		out = append(out, benchTarget{
			Name: fmt.Sprintf("daemon CPU per call at %d sessions", f.Sessions),
			Want: fmt.Sprintf("≤ %.0f µs", benchMaxCPUPerCallUS),
			Got:  fmt.Sprintf("%.0f µs (worst phase: %.0f µs, %s, %d sessions)", f.CPU["daemon"], worst.CPU["daemon"], worst.Path, worst.Sessions),
			Pass: f.CPU["daemon"] <= benchMaxCPUPerCallUS,
		})
	}
	if n := len(r.Throughput); n >= 2 {
		direct, daemon := r.Throughput[n-2], r.Throughput[n-1]
		ratio := 0.0
		if direct.PerSecond > 0 {
			ratio = daemon.PerSecond / direct.PerSecond
		}
		out = append(out, benchTarget{
			Name: fmt.Sprintf("throughput at %d sessions, daemon HTTP vs direct HTTP, no errors", daemon.Sessions),
			Want: "≥ 1.00×, 0 errors",
			Got:  fmt.Sprintf("%.2f× (%.0f vs %.0f calls/s), %d errors", ratio, daemon.PerSecond, direct.PerSecond, direct.Errors+daemon.Errors),
			Pass: ratio >= 1 && direct.Errors+daemon.Errors == 0,
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

func (r *benchReport) writeText(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "mcpgw-bench proxy: %s, %s per path in %d alternating rounds\n", r.Call, time.Duration(r.Duration*float64(time.Second)), r.Rounds)
	fmt.Fprintf(w, "machine: %d CPUs (%s), %s; load average %.2f at start, %.2f at end\n",
		m.CPUs, m.Model, m.GoVersion, m.LoadBefore, m.LoadAfter)
	fmt.Fprintln(w, "client, shim, daemon, upstream: CPU time per call, in µs, of that process; alloc: KiB the daemon allocated per call; GCs: its collections per 1,000 calls")

	cpu := func(f *benchFigure) string {
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
	if len(r.Latency) > 0 {
		fmt.Fprintln(w, "\nlatency at concurrency 1")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "path\tcalls\terrors\tp50\tp99\tclient\tshim\tdaemon\tupstream\talloc\tGCs\t")
		for _, f := range r.Latency {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t\n", f.Path, f.Calls, f.Errors, benchUS(f.P50), benchUS(f.P99), cpu(f))
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
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\t%s\t%s\t%s\t\n", f.Path, f.Sessions, f.Calls, f.Errors, f.PerSecond, benchUS(f.P50), benchUS(f.P99), cpu(f))
		}
		tw.Flush()
		var parts []string
		for i := 0; i+1 < len(r.Throughput); i += 2 {
			if direct, daemon := r.Throughput[i], r.Throughput[i+1]; direct.PerSecond > 0 {
				parts = append(parts, fmt.Sprintf("%.2f× at %d sessions", daemon.PerSecond/direct.PerSecond, daemon.Sessions))
			}
		}
		fmt.Fprintf(w, "daemon / direct calls/s: %s\n", strings.Join(parts, ", "))
		fmt.Fprintf(w, "daemon memory under this load: VmRSS up to %s, VmHWM %s\n", benchMB(r.LoadRSSKB), benchMB(r.LoadHWMKB))
	}
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

func benchUS(us float64) string {
	if us >= 10000 {
		return fmt.Sprintf("%.1fms", us/1000)
	}
	return fmt.Sprintf("%.0fµs", us)
}

func benchMB(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }

// benchDaemon is a `mcpgw serve` child process with its own config, cache,
// socket and home directory.
type benchDaemon struct {
	cmd    *exec.Cmd
	pid    int
	url    string // http://127.0.0.1:P
	socket string
	exited chan struct{}
	logs   chan struct{} // closed when stderr is drained

	mu       sync.Mutex
	tail     []string // last lines of its log
	warnings []string // its first warning and error lines
}

// startBenchDaemon runs `exe serve` on a free port with dir as its home and
// waits for its "mcpgw serving" log line.
func startBenchDaemon(ctx context.Context, exe, dir, config string, extra ...string) (*benchDaemon, error) {
	d := &benchDaemon{socket: filepath.Join(dir, "run", "mcpgw.sock"), exited: make(chan struct{}), logs: make(chan struct{})}
	args := append([]string{"serve", "--config", config, "--cache", filepath.Join(dir, "cache.json"),
		"--listen", "127.0.0.1:0", "--socket", d.socket, "--log-format", "json", "--log-level", "info"}, extra...)
	d.cmd = exec.Command(exe, args...)
	d.cmd.Env = benchEnv(map[string]string{
		"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, "config"),
		"XDG_RUNTIME_DIR": filepath.Join(dir, "run"), "XDG_STATE_HOME": filepath.Join(dir, "state"),
	})
	// Its own process group, so that ^C reaches only the benchmark, which
	// then stops the daemon in order; and the daemon ends with us.
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	stderr, err := d.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the daemon: %w", err)
	}
	d.pid = d.cmd.Process.Pid
	go func() { _ = d.cmd.Wait(); close(d.exited) }()

	ready := make(chan string, 1)
	go func() {
		defer close(d.logs)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			d.mu.Lock()
			d.tail = append(d.tail, line)
			if len(d.tail) > 20 {
				d.tail = d.tail[1:]
			}
			d.mu.Unlock()
			var rec struct {
				Level string `json:"level"`
				Msg   string `json:"msg"`
				MCP   string `json:"mcp"`
			}
			_ = json.Unmarshal([]byte(line), &rec)
			if (rec.Level == "WARN" || rec.Level == "ERROR") && len(d.warnings) < 20 {
				d.mu.Lock()
				d.warnings = append(d.warnings, line)
				d.mu.Unlock()
			}
			if rec.Msg == "mcpgw serving" {
				select {
				case ready <- strings.TrimSuffix(rec.MCP, "/mcp"):
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case d.url = <-ready:
		return d, nil
	case <-d.exited:
		<-d.logs
		return nil, fmt.Errorf("the daemon exited at start:\n%s", d.logTail())
	case <-time.After(30 * time.Second):
		d.stop()
		return nil, fmt.Errorf("the daemon did not start within 30s:\n%s", d.logTail())
	case <-ctx.Done():
		d.stop()
		return nil, ctx.Err()
	}
}

// problems returns its warning and error lines, as one problem.
func (d *benchDaemon) problems(which string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.warnings) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("the %s daemon logged:\n%s", which, strings.Join(d.warnings, "\n"))}
}

func (d *benchDaemon) logTail() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.tail, "\n")
}

// stop sends SIGTERM (the daemon closes its sessions and upstreams and
// writes its CPU profile), then SIGKILL to the group after 10 seconds.
func (d *benchDaemon) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-d.pid, syscall.SIGKILL)
		<-d.exited
	}
	<-d.logs
}

// benchHTTPUpstream is the test server served over Streamable HTTP by a
// process of its own (see benchEnvUpstream).
type benchHTTPUpstream struct {
	cmd   *exec.Cmd
	pid   int
	url   string
	stdin io.Closer
	done  chan struct{}
}

func startBenchHTTPUpstream(ctx context.Context, exe string) (*benchHTTPUpstream, error) {
	u := &benchHTTPUpstream{done: make(chan struct{})}
	u.cmd = exec.Command(exe, "proxy")
	u.cmd.Env = benchEnv(map[string]string{benchEnvUpstream: "http"})
	u.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := u.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	u.stdin = stdin
	stdout, err := u.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := u.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the HTTP test server: %w", err)
	}
	u.pid = u.cmd.Process.Pid
	lines := make(chan string, 1)
	go func() {
		defer close(u.done)
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- strings.TrimSpace(line)
		_ = u.cmd.Wait() // after stdout is read: Wait closes it
	}()
	select {
	case u.url = <-lines:
		if strings.HasPrefix(u.url, "http://") {
			return u, nil
		}
		u.stop()
		return nil, fmt.Errorf("the HTTP test server printed %q, want its URL", u.url)
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	u.stop()
	return nil, errors.New("the HTTP test server did not start within 30s")
}

func (u *benchHTTPUpstream) stop() {
	u.stdin.Close()
	select {
	case <-u.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-u.pid, syscall.SIGKILL)
		<-u.done
	}
}

// benchServeUpstream serves the test server over HTTP on a free loopback
// port, prints its base URL and serves until stdin closes.
func benchServeUpstream(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Not waited for: it blocks in Read until stdin closes, which ends
	// this process anyway.
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		cancel()
	}()
	return upstreamtest.ServeHTTP(ctx, "127.0.0.1:0", nil, func(base string) { fmt.Fprintln(stdout, base) })
}

// benchEnv is this process's environment for a child, without variables
// that would change what the daemon does (a token it would demand, direct
// tools, a service manager to notify), plus set.
func benchEnv(set map[string]string) []string {
	drop := []string{"MCPGW_TOKEN", "MCP_DIRECT_TOOLS", "NOTIFY_SOCKET", benchEnvUpstream}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(drop, k) || set[k] != "" {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

// benchToolList returns the test server's tools as a client lists them.
func benchToolList(ctx context.Context) ([]*mcp.Tool, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := upstreamtest.NewServer(nil).Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpgw-bench", Version: version}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing the test server's tools: %w", err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

func benchServerName(prefix string, i int) string { return fmt.Sprintf("%s%02d", prefix, i) }

// benchWriteServers writes a config of n test servers named prefix00...,
// each with a distinct identity, plus env.
func benchWriteServers(dir, exe, prefix string, n int, env map[string]string) (string, error) {
	servers := make(map[string]any, n)
	for i := range n {
		name := benchServerName(prefix, i)
		e := map[string]string{benchEnvServer: name}
		for k, v := range env {
			e[k] = v
		}
		servers[name] = map[string]any{"command": exe, "args": []string{"testserver"}, "env": e}
	}
	return benchWriteConfig(dir, servers)
}

func benchWriteConfig(dir string, servers map[string]any) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "mcp.json")
	return path, os.WriteFile(path, data, 0o600)
}

// benchWriteCache writes a metadata cache entry with tools for every server
// of the config, under the identity hash the daemon will compute.
func benchWriteCache(path, config string, tools []*mcp.Tool) error {
	cfg, err := registry.Load(config, &registry.LoadOptions{Home: filepath.Dir(config)})
	if err != nil {
		return err
	}
	entries := make(map[string]*cachefile.Entry, len(cfg.Servers))
	now := time.Now()
	for name, srv := range cfg.Servers {
		entries[name] = &cachefile.Entry{ConfigHash: srv.Hash, Tools: tools, Resources: []*mcp.Resource{}, CachedAt: now}
	}
	return cachefile.Open(path, nil).Put(entries)
}

// benchProcCPU returns utime+stime of pid in clock ticks.
func benchProcCPU(pid int) (int64, error) {
	f, err := benchProcStat(pid)
	if err != nil {
		return 0, err
	}
	// Fields after the command name start at field 3 (state); utime and
	// stime are fields 14 and 15.
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("parsing /proc/%d/stat: %w", pid, err)
	}
	return u + s, nil
}

// benchProcStat returns the fields of /proc/<pid>/stat after the command
// name (which may hold spaces and parentheses).
func benchProcStat(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return f, nil
}

// benchMemory is a process's memory from /proc/<pid>/status, in KiB.
type benchMemory struct {
	RSS  int64 // VmRSS: resident, anonymous and file-backed (the binary's pages, shared)
	HWM  int64 // VmHWM: the largest RSS so far
	Anon int64 // RssAnon: the part no other process shares (heap, stacks)
}

// benchProcMemory reads the memory figures of pid.
func benchProcMemory(pid int) (benchMemory, error) {
	var m benchMemory
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, err
	}
	fields := map[string]*int64{"VmRSS": &m.RSS, "VmHWM": &m.HWM, "RssAnon": &m.Anon}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		dst := fields[k]
		if !ok || dst == nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return m, fmt.Errorf("parsing %s in /proc/%d/status: %w", k, pid, err)
		}
		*dst = n
	}
	if m.RSS == 0 {
		return m, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
	}
	return m, nil
}

// benchUpstreams returns the daemon's children that run the test server,
// and its other children (the upstream reaper, a re-executed mcpgw).
func benchUpstreams(daemon int) (upstreams, others []int, err error) {
	kids, err := benchChildren(daemon)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range kids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", k))
		if args := strings.Split(string(cmdline), "\x00"); len(args) > 1 && args[1] == "testserver" {
			upstreams = append(upstreams, k)
		} else {
			others = append(others, k)
		}
	}
	return upstreams, others, nil
}

// benchChildren returns the PIDs whose parent is ppid.
func benchChildren(ppid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := benchProcStat(pid)
		if err != nil {
			continue // exited meanwhile
		}
		if f[1] == strconv.Itoa(ppid) {
			out = append(out, pid)
		}
	}
	return out, nil
}

func benchMachineInfo() benchMachine {
	m := benchMachine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadBefore: benchLoadAverage()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

func benchLoadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func benchSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// benchClosers runs cleanups in reverse order.
type benchClosers []func()

func (c *benchClosers) add(f func()) { *c = append(*c, f) }

func (c *benchClosers) close() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
	*c = nil
}

// findMcpgw resolves the mcpgw binary to measure: flag, else an mcpgw
// beside this binary, else mcpgw on PATH.
func findMcpgw(flagValue, self string) (string, error) {
	if flagValue != "" {
		return filepath.Abs(flagValue)
	}
	beside := filepath.Join(filepath.Dir(self), "mcpgw")
	if fi, err := os.Stat(beside); err == nil && !fi.IsDir() {
		return beside, nil
	}
	p, err := exec.LookPath("mcpgw")
	if err != nil {
		return "", errors.New("no mcpgw binary: pass --mcpgw PATH (go build -o /tmp/mcpgw ./cmd/mcpgw)")
	}
	return filepath.Abs(p)
}
