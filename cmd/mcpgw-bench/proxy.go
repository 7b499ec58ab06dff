//go:build linux

package main

import (
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
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
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
	// benchColdCallTimeout bounds a call that starts its server.
	benchColdCallTimeout = 2 * time.Minute
)

// Targets (see benchTargets).
const (
	benchMaxLatencyRatio    = 1.5 // p50 at concurrency 1, vs direct HTTP
	benchMaxCPUPerCallUS    = 400.0
	benchMaxCPULoadedUS     = 200.0 // at 64 sessions
	benchMinThroughputRatio = 0.9   // at 64 sessions, vs direct HTTP
	benchMaxAllocKB         = 32.0
	benchMaxShimCPUUS       = 30.0
	benchMaxIdleRSSKB       = 20 * 1024
	benchMaxLoadRSSKB       = 25 * 1024 // at benchModeSessions sessions of one mode
	benchIdleServers        = 100
	benchFanServers         = 10
	benchFanSessions        = 10
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
	Mcpgw string // the mcpgw binary: it runs serve and stdio
	// Baseline, if set, is another mcpgw binary whose daemon is measured
	// beside Mcpgw's on the daemon paths of the latency and throughput
	// phases, alternated with them in every round ("baseline: " paths).
	Baseline string
	Self     string        // this binary: it runs the test servers
	Duration time.Duration // measuring time of each path, split over Rounds
	Rounds   int
	// CallTimeout bounds each measured call; one that takes longer
	// counts as failed. 0 is benchCallTimeout.
	CallTimeout time.Duration
	Phases      []string // of benchAllPhases
	CPUProfile  string   // passed to the main daemon's serve --cpuprofile
	MemProfile  string   // passed to the main daemon's serve --memprofile
	// Keep, if set, is where the daemons' homes are made and left: each
	// daemon's log (daemon.log), config and audit log. By default they
	// are in a temporary directory, removed at the end.
	Keep string
	// Protocol, if set, is the one protocol version the test server
	// speaks, on every path; by default it speaks every version the SDK
	// does, so that the SDK's clients (the daemon's too) negotiate
	// 2026-07-28.
	Protocol string
	// ClientProtocol is the protocol version the measuring clients speak
	// ("": 2025-11-25, with sessions, as the figures so far were taken).
	ClientProtocol string
	// Settle is how long the daemon is left quiet before its memory is
	// read (0: benchSettle); the reading after the load waits 3 s more.
	Settle   time.Duration
	Progress io.Writer
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
	fs.StringVar(&o.Baseline, "baseline", "", "another mcpgw `binary` (an earlier build) measured in the same run on the daemon paths, alternated with --mcpgw's in every round, and judged against")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "measuring time of each path")
	fs.IntVar(&o.Rounds, "rounds", 5, "rounds the measuring time is split into; paths alternate within each")
	fs.DurationVar(&o.CallTimeout, "call-timeout", benchCallTimeout, "how long a measured call may take before it counts as failed")
	fs.DurationVar(&o.Settle, "settle", benchSettle, "how long the daemon is left quiet before its memory is read (it hands memory back 30-35 s after its last request)")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	phases := fs.String("phases", strings.Join(benchAllPhases, ","), "phases to run")
	fs.StringVar(&o.Protocol, "protocol", "", "the one protocol `VERSION` the test server speaks, e.g. 2025-11-25 as servers of the TypeScript SDK do (default: every version the SDK speaks)")
	fs.StringVar(&o.ClientProtocol, "client-protocol", "2025-11-25", "the protocol `VERSION` the measuring clients speak, to the test server and to mcpgw alike (2026-07-28 has no sessions)")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write the CPU profile of the daemon measured in the latency and throughput phases to `FILE`")
	fs.StringVar(&o.MemProfile, "memprofile", "", "write the allocation profile of the daemon measured in the latency and throughput phases to `FILE`")
	fs.StringVar(&o.Keep, "keep", "", "make the daemons' homes in `DIR`, which must not exist, and leave them: each daemon's whole log (daemon.log), config and audit log")
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

// runBenchProxy runs the phases of o and returns the report. An error means
// the benchmark could not run; failed calls are counted in the report.
func runBenchProxy(ctx context.Context, o benchProxyOptions) (*benchReport, error) {
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	if len(o.Phases) == 0 {
		o.Phases = benchAllPhases
	}
	if o.ClientProtocol == "" {
		o.ClientProtocol = "2025-11-25"
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	rep := &benchReport{
		Machine:  benchMachineInfo(o.Mcpgw),
		Baseline: o.Baseline,
		Call:     fmt.Sprintf("echo {%q:%q}", "message", benchMessage),
		Protocol: o.Protocol,
		Duration: o.Duration.Seconds(),
		Rounds:   o.Rounds,
	}
	dir := o.Keep
	if dir != "" {
		var err error
		if dir, err = filepath.Abs(dir); err != nil {
			return nil, err
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, fmt.Errorf("bench proxy: --keep: %w", err)
		}
	} else {
		var err error
		if dir, err = os.MkdirTemp("", "mcpgw-bench-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
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

// serverEnv is the environment the test server gets on the measured
// paths, beyond the bench's own.
func (b *benchRun) serverEnv() map[string]string {
	if b.o.Protocol == "" {
		return map[string]string{}
	}
	return map[string]string{fakeupstream.EnvProtocols: b.o.Protocol}
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
	c, err := b.startCallBench(ctx, &closers)
	if err != nil {
		return err
	}
	// The daemon with its one server, before any session: start-up
	// settled (its garbage and the code it ran are handed back).
	if err := benchSleep(ctx, b.settle()); err != nil {
		return err
	}
	if m, err := benchProcMemory(c.d.pid); err == nil {
		b.rep.StartRSSKB = m.RSS
	}
	var latency, throughput []*benchPath
	var groups [][]*benchPath
	if slices.Contains(b.o.Phases, benchPhaseLatency) {
		if latency, err = c.latencyPaths(); err != nil {
			return err
		}
	}
	if slices.Contains(b.o.Phases, benchPhaseThroughput) {
		if groups, err = c.throughputGroups(); err != nil {
			return err
		}
		throughput = slices.Concat(groups...)
	}
	if err := c.warmUp(ctx, slices.Concat(latency, throughput)); err != nil {
		return err
	}
	daemonSessions := 0
	for _, p := range slices.Concat(latency, throughput) {
		if p.procs["daemon"] == c.d.pid {
			daemonSessions += len(p.sessions)
		}
	}
	// What the sessions themselves hold, once the warm-up's garbage is
	// collected and returned (the daemon does so when it goes quiet).
	if err := benchSleep(ctx, b.settle()); err != nil {
		return err
	}
	if m, err := benchProcMemory(c.d.pid); err == nil && daemonSessions > 0 && b.rep.StartRSSKB > 0 {
		b.rep.Sessions, b.rep.SessionsRSSKB = daemonSessions, m.RSS
	}
	b.measure(ctx, c.d, latency, groups)
	if len(throughput) > 0 && ctx.Err() == nil {
		// Memory handed back: every session closed, then half a minute.
		for _, p := range slices.Concat(latency, throughput) {
			for _, cs := range p.sessions {
				_ = cs.Close()
			}
		}
		b.progress("memory: %v after the sessions closed", b.afterLoad())
		if err := benchSleep(ctx, b.afterLoad()); err != nil {
			return err
		}
		if m, err := benchProcMemory(c.d.pid); err == nil {
			b.rep.AfterRSSKB, b.rep.AfterLoadS = m.RSS, b.afterLoad().Seconds()
		}
		if err := c.modesPhase(ctx); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// benchSettle is how long the daemon is left quiet before its memory is
// read (--settle), with sessions open and between the memory phase's
// modes; the reading after the load waits 3 s more. The daemon looks every 5 s whether it has
// been quiet for 30 s, so it hands memory back 30 to 35 s after its last
// request (gateway/runloop/memory.go); reading too early catches it
// before or during the settle: at 7 s after, when it settled after 5 s,
// the figure with 147 sessions open was 13.4 MB in one run and 28.4 MB in
// the next, of the same build.
const benchSettle = 37 * time.Second

func (b *benchRun) settle() time.Duration {
	if b.o.Settle > 0 {
		return b.o.Settle
	}
	return benchSettle
}

func (b *benchRun) afterLoad() time.Duration { return b.settle() + 3*time.Second }

// callBench is what the latency and throughput phases run against: the
// daemon with its one test upstream, the same test server over HTTP, and a
// client to open sessions with.
type callBench struct {
	b       *benchRun
	ctx     context.Context
	closers *benchClosers
	d       *benchDaemon
	sides   []benchSide // d's first, then the baseline's
	up      *benchHTTPUpstream
	client  *mcp.Client
	me      int
	// The calls each path makes: to the upstream itself, through the
	// daemon in direct mode, through the mcp tool.
	echo, viaDaemon, viaProxy benchCall
}

func (b *benchRun) startCallBench(ctx context.Context, closers *benchClosers) (*callBench, error) {
	cfg, err := benchWriteConfig(filepath.Join(b.dir, "main"), map[string]any{
		"bench": map[string]any{"command": b.o.Self, "args": []string{"testserver"}, "env": b.serverEnv()},
	})
	if err != nil {
		return nil, err
	}
	var extra []string
	if b.o.CPUProfile != "" {
		prof, err := filepath.Abs(b.o.CPUProfile)
		if err != nil {
			return nil, err
		}
		extra = append(extra, "--cpuprofile", prof)
	}
	if b.o.MemProfile != "" {
		prof, err := filepath.Abs(b.o.MemProfile)
		if err != nil {
			return nil, err
		}
		extra = append(extra, "--memprofile", prof)
	}
	b.progress("starting the daemon")
	d, err := startBenchDaemon(ctx, b.o.Mcpgw, filepath.Join(b.dir, "main"), cfg, extra...)
	if err != nil {
		return nil, err
	}
	closers.add(d.stop)
	up, err := startBenchHTTPUpstream(ctx, b.o.Self, b.serverEnv())
	if err != nil {
		return nil, err
	}
	closers.add(up.stop)
	sides := []benchSide{{bin: b.o.Mcpgw, d: d}}
	if b.o.Baseline != "" {
		dir := filepath.Join(b.dir, "baseline")
		cfg, err := benchWriteConfig(dir, map[string]any{
			"bench": map[string]any{"command": b.o.Self, "args": []string{"testserver"}, "env": b.serverEnv()},
		})
		if err != nil {
			return nil, err
		}
		b.progress("starting the baseline's daemon")
		bd, err := startBenchDaemon(ctx, b.o.Baseline, dir, cfg)
		if err != nil {
			return nil, fmt.Errorf("the baseline: %w", err)
		}
		closers.add(bd.stop)
		sides = append(sides, benchSide{bin: b.o.Baseline, d: bd, prefix: benchBaselinePrefix})
	}
	return &callBench{
		b: b, ctx: ctx, closers: closers, d: d, sides: sides, up: up, me: os.Getpid(),
		client:    mcp.NewClient(&mcp.Implementation{Name: "mcpgw-bench", Version: version}, nil),
		echo:      benchCall{tool: "echo", args: map[string]any{"message": benchMessage}, timeout: b.o.CallTimeout},
		viaDaemon: benchCall{tool: "bench_echo", args: map[string]any{"message": benchMessage}, timeout: b.o.CallTimeout},
		viaProxy:  benchCall{tool: "mcp", args: map[string]any{"tool": "bench_echo", "args": map[string]any{"message": benchMessage}}, timeout: b.o.CallTimeout},
	}, nil
}

// httpSessions opens n sessions to url.
func (c *callBench) httpSessions(url string, n int) ([]*mcp.ClientSession, error) {
	var out []*mcp.ClientSession
	for range n {
		cs, err := c.client.Connect(c.ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: c.b.httpClient()}, &mcp.ClientSessionOptions{ProtocolVersion: c.b.o.ClientProtocol})
		if err != nil {
			return nil, fmt.Errorf("connecting to %s: %w", url, err)
		}
		c.closers.add(func() { _ = cs.Close() })
		out = append(out, cs)
	}
	return out, nil
}

// stdioSession starts bin with args and opens a session over its stdio.
func (c *callBench) stdioSession(bin string, args ...string) (*mcp.ClientSession, int, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = benchEnv(c.b.serverEnv())
	cs, err := c.client.Connect(c.ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: c.b.o.ClientProtocol})
	if err != nil {
		return nil, 0, fmt.Errorf("starting %s: %w", strings.Join(args, " "), err)
	}
	c.closers.add(func() { _ = cs.Close() })
	return cs, cmd.Process.Pid, nil
}

// shimSession starts a stdio shim of the daemon, in direct mode, and opens
// a session through it.
func (c *callBench) shimSession() (*mcp.ClientSession, int, error) {
	return c.sides[0].shimSession(c)
}

func (c *callBench) daemonURL(mode string) string { return c.sides[0].url(mode) }

// benchSide is one mcpgw build measured: its binary, its daemon, and what
// its paths' names start with.
type benchSide struct {
	bin    string
	d      *benchDaemon
	prefix string // "" for --mcpgw's, benchBaselinePrefix for --baseline's
}

// benchBaselinePrefix starts the names of the baseline's paths.
const benchBaselinePrefix = "baseline: "

func (s benchSide) url(mode string) string { return s.d.url + "/mcp?mode=" + mode }

func (s benchSide) shimSession(c *callBench) (*mcp.ClientSession, int, error) {
	return c.stdioSession(s.bin, "stdio", "--socket", s.d.socket, "--mode", "direct", "--no-start")
}

// daemonPaths are the side's paths through its daemon at n sessions: HTTP
// in direct mode, then (mcpTool) through the mcp tool, then (shim, n = 1)
// through its stdio shim.
func (s benchSide) daemonPaths(c *callBench, n int, mcpTool, shim bool) ([]*benchPath, error) {
	viaHTTP, err := c.httpSessions(s.url("direct"), n)
	if err != nil {
		return nil, err
	}
	procs := func() map[string]int { return map[string]int{"client": c.me, "daemon": s.d.pid} }
	paths := []*benchPath{newBenchPath(s.prefix+"daemon HTTP", c.viaDaemon, viaHTTP, procs())}
	if mcpTool {
		viaTool, err := c.httpSessions(s.url("proxy"), n)
		if err != nil {
			return nil, err
		}
		paths = append(paths, newBenchPath(s.prefix+"daemon HTTP, mcp tool", c.viaProxy, viaTool, procs()))
	}
	if shim {
		cs, shimPID, err := s.shimSession(c)
		if err != nil {
			return nil, err
		}
		ps := procs()
		ps["shim"] = shimPID
		paths = append(paths, newBenchPath(s.prefix+"daemon via shim", c.viaDaemon, []*mcp.ClientSession{cs}, ps))
	}
	return paths, nil
}

// latencyPaths are the concurrency-1 paths: the upstream over stdio and
// HTTP, the daemon over HTTP (direct and through the mcp tool) and
// through the shim.
func (c *callBench) latencyPaths() ([]*benchPath, error) {
	c.b.progress("connecting the concurrency-1 sessions")
	direct, directPID, err := c.stdioSession(c.b.o.Self, "testserver")
	if err != nil {
		return nil, err
	}
	directHTTP, err := c.httpSessions(c.up.url+"/mcp", 1)
	if err != nil {
		return nil, err
	}
	paths := []*benchPath{
		newBenchPath("direct stdio", c.echo, []*mcp.ClientSession{direct}, map[string]int{"client": c.me, "upstream": directPID}),
		newBenchPath("direct HTTP", c.echo, directHTTP, map[string]int{"client": c.me, "upstream": c.up.pid}),
	}
	for _, s := range c.sides {
		more, err := s.daemonPaths(c, 1, true, true)
		if err != nil {
			return nil, err
		}
		paths = append(paths, more...)
	}
	return paths, nil
}

// throughputGroups are groups of paths with the same number of sessions,
// alternated within the group; at 64, the mcp tool too.
func (c *callBench) throughputGroups() ([][]*benchPath, error) {
	var groups [][]*benchPath
	for _, n := range []int{16, 64} {
		c.b.progress("connecting %d sessions to each side", n)
		directHTTP, err := c.httpSessions(c.up.url+"/mcp", n)
		if err != nil {
			return nil, err
		}
		group := []*benchPath{newBenchPath("direct HTTP", c.echo, directHTTP, map[string]int{"client": c.me, "upstream": c.up.pid})}
		for _, s := range c.sides {
			more, err := s.daemonPaths(c, n, n == 64, false)
			if err != nil {
				return nil, err
			}
			group = append(group, more...)
		}
		groups = append(groups, group)
	}
	return groups, nil
}

// warmUp warms every session up. By then the daemon runs its one upstream
// (connected at start, having no cache entry), whose CPU time the daemon
// paths count as "upstream".
func (c *callBench) warmUp(ctx context.Context, paths []*benchPath) error {
	for _, p := range paths {
		p.warmUp(ctx, 20)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	for _, s := range c.sides {
		kids, _, err := benchUpstreams(s.d.pid)
		if err != nil {
			return err
		}
		if len(kids) != 1 {
			return fmt.Errorf("the daemon %s runs %d upstream processes after the warm-up, want 1:\n%s", s.bin, len(kids), s.d.logTail())
		}
		for _, p := range paths {
			if p.procs["daemon"] == s.d.pid {
				p.procs["upstream"] = kids[0]
				p.metrics = s.d.url + "/metrics"
			}
		}
	}
	return nil
}

// measure runs the paths in alternating rounds and records their figures.
func (b *benchRun) measure(ctx context.Context, d *benchDaemon, latency []*benchPath, groups [][]*benchPath) {
	rep := b.rep
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
		if dp, hp := rep.Latency[1].P50, rep.Latency[2].P50; dp > 0 {
			rep.LatencyRatio = hp / dp
		}
	}
	throughput := slices.Concat(groups...)
	if len(throughput) > 0 {
		b.progress("throughput at 16 and 64 sessions: %d paths × %v", len(throughput), b.o.Duration)
		for r := range b.o.Rounds {
			for _, g := range groups {
				for _, p := range benchRotate(g, r) {
					p.run(ctx, slice)
				}
			}
		}
		for _, p := range throughput {
			rep.Throughput = append(rep.Throughput, p.figure())
			if p.procs["daemon"] == d.pid {
				rep.LoadRSSKB = max(rep.LoadRSSKB, p.rssPeakKB)
				rep.LoadAnonKB = max(rep.LoadAnonKB, p.anonPeakKB)
			}
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
}
