//go:build linux

package main

// The processes the proxy bench runs and watches: the daemon, upstreams,
// their CPU time and memory.

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/cachefile"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
	// Its whole log, in its home: gone with the home at the end, unless
	// --keep keeps it.
	logFile, err := os.OpenFile(filepath.Join(dir, "daemon.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if err := d.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting the daemon: %w", err)
	}
	d.pid = d.cmd.Process.Pid
	go func() { _ = d.cmd.Wait(); close(d.exited) }()

	ready := make(chan string, 1)
	go func() {
		defer close(d.logs)
		defer logFile.Close()
		log := bufio.NewWriter(logFile)
		defer log.Flush()
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			_, _ = log.WriteString(line + "\n")
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

func startBenchHTTPUpstream(ctx context.Context, exe string, env map[string]string) (*benchHTTPUpstream, error) {
	u := &benchHTTPUpstream{done: make(chan struct{})}
	u.cmd = exec.Command(exe, "proxy")
	set := map[string]string{benchEnvUpstream: "http"}
	for k, v := range env {
		set[k] = v
	}
	u.cmd.Env = benchEnv(set)
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
	opts, err := fakeupstream.OptionsFromEnv()
	if err != nil {
		return err
	}
	return fakeupstream.ServeHTTP(ctx, "127.0.0.1:0", opts, func(base string) { fmt.Fprintln(stdout, base) })
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
	ss, err := fakeupstream.NewServer(nil).Connect(ctx, st, nil)
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

func benchMachineInfo(mcpgw string) benchMachine {
	m := benchMachine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadBefore: benchLoadAverage(), Build: benchBuild(mcpgw)}
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

// benchBuild says whether the mcpgw binary at path links libc (cgo), which
// costs about 2 MB of resident memory.
func benchBuild(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return "unknown build"
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" && s.Value == "1" {
			return "cgo"
		}
	}
	return "CGO_ENABLED=0"
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
