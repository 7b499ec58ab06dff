//go:build unix

package main

// End-to-end test harness: real processes on loopback, driven by the official
// TypeScript SDK client (testdata/e2e/client.mjs) against the mcpgw binary and
// against @modelcontextprotocol/server-everything as an upstream.
//
// The node packages are pinned in testdata/e2e/package-lock.json; install them with
//
//	(cd cmd/mcpgw/testdata/e2e && npm ci --no-audit --no-fund)
//
// server-everything's transports, from testdata/e2e (the first argument of
// dist/index.js picks the transport; PORT defaults to 3001):
//
//	stdio:           node node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio
//	Streamable HTTP: PORT=P node node_modules/@modelcontextprotocol/server-everything/dist/index.js streamableHttp
//	                 endpoint http://127.0.0.1:P/mcp (POST, GET stream, DELETE)
//	legacy SSE:      PORT=P node node_modules/@modelcontextprotocol/server-everything/dist/index.js sse
//	                 stream GET http://127.0.0.1:P/sse, messages POST /message?sessionId=ID
//
// Both HTTP modes listen on every interface (express app.listen(PORT)); tests
// only dial 127.0.0.1. Any other path answers 404, which waitHTTP takes as ready.
// Its echo tool answers {"message":"hi"} with the text "Echo: hi". Right after
// initialization it registers more tools and sends
// notifications/tools/list_changed: over stdio and SSE the client receives it;
// over Streamable HTTP it is lost, because it is sent before the client's GET
// stream is open.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
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
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/proctest"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// waitLimit bounds every wait for something a working daemon does (a
// process up, a call answered, a notification sent, a file reloaded): the
// waits end on the event, so only a broken daemon reaches the limit. It is
// long because with every CPU busy, and the package's tests running at
// once, starting a process under -race alone can take tens of seconds.
const WaitLimit = 2 * time.Minute

// e2eDir holds the node package of the end-to-end tests, relative to this
// package's directory (the working directory of its tests).
const e2eDir = "testdata/e2e"

const NPMInstallHint = "(cd cmd/mcpgw/testdata/e2e && npm ci --no-audit --no-fund)"

const everythingPkg = "node_modules/@modelcontextprotocol/server-everything"

// e2ePath returns the absolute path of rel inside e2eDir.
func Path(rel string) string {
	dir, err := filepath.Abs(e2eDir)
	if err != nil {
		panic(err) // only when the working directory is gone
	}
	return filepath.Join(dir, rel)
}

// NeedNode returns the path of node after checking that the e2e node
// packages are installed. When either is missing it fails the test if the
// environment variable CI is set, and skips it otherwise.
func NeedNode(t testing.TB) string {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") != "" {
			t.Fatalf("%s; install with: %s", msg, NPMInstallHint)
		}
		t.Skipf("%s; install with: %s", msg, NPMInstallHint)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found on PATH (Node.js 20 or later)")
	}
	for _, f := range []string{
		"node_modules/@modelcontextprotocol/sdk/package.json",
		everythingPkg + "/dist/index.js",
	} {
		if _, err := os.Stat(Path(f)); err != nil {
			missing("e2e node packages not installed: %v", err)
		}
	}
	return node
}

// everythingStdioCommand returns the command line that runs server-everything
// over stdio, with absolute paths, for an upstream's "command" and "args".
// Call needNode first.
func EverythingStdio() (cmd string, args []string) {
	node, err := exec.LookPath("node")
	if err != nil {
		node = "node"
	}
	return node, []string{Path(everythingPkg + "/dist/index.js"), "stdio"}
}

// startEverything starts server-everything on a free loopback port in mode
// "streamableHttp" or "sse", waits until it answers HTTP and returns its MCP
// endpoint: http://127.0.0.1:P/mcp or http://127.0.0.1:P/sse. The process
// group is ended when the test finishes.
func StartEverything(t testing.TB, mode string) (url string) {
	t.Helper()
	node := NeedNode(t)
	var path string
	switch mode {
	case "streamableHttp":
		path = "/mcp"
	case "sse":
		path = "/sse"
	default:
		t.Fatalf("startEverything: unknown mode %q (want streamableHttp or sse)", mode)
	}
	// freePort's port can be taken again before node binds it; a process that
	// exits before it is ready is retried on another port.
	var lastErr error
	for range 3 {
		port := FreePort(t)
		cmd := exec.Command(node, Path(everythingPkg+"/dist/index.js"), mode)
		cmd.Dir = Path(".")
		cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
		p := StartProcess(t, cmd)
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		if lastErr = WaitHTTPOrExit(base+"/", p.Exited, WaitLimit); lastErr == nil {
			return base + path
		}
		p.Stop()
		t.Logf("server-everything %s on port %d: %v; output:\n%s", mode, port, lastErr, p.Output.String())
	}
	t.Fatalf("starting server-everything %s: %v", mode, lastErr)
	return ""
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitHTTP waits up to waitLimit until url answers any HTTP response (a 404
// or 400 counts: the server accepts connections and speaks HTTP).
func WaitHTTP(t testing.TB, url string) {
	t.Helper()
	if err := WaitHTTPOrExit(url, nil, WaitLimit); err != nil {
		t.Fatal(err)
	}
}

// waitHTTPOrExit polls url until it answers, exited is closed, or timeout passes.
func WaitHTTPOrExit(url string, exited <-chan struct{}, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	delay := 5 * time.Millisecond
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for %s: no answer after %v: %w", url, timeout, err)
		}
		select {
		case <-exited:
			return fmt.Errorf("waiting for %s: process exited", url)
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// process is a child process in its own process group, started by startProcess.
type Process struct {
	Cmd    *exec.Cmd
	Output *proctest.Buffer // stdout and stderr, interleaved
	Exited chan struct{}    // closed once the process has exited
	Err    error            // Wait's result; read only after exited is closed

	stopOnce sync.Once
}

// startProcess starts cmd in a new process group with stdout and stderr
// captured (unless already set), and ends the group when the test finishes,
// logging the output if the test failed.
func StartProcess(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Cmd: cmd, Output: new(proctest.Buffer), Exited: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = p.Output
	}
	if cmd.Stderr == nil {
		cmd.Stderr = p.Output
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd, err)
	}
	go func() {
		p.Err = cmd.Wait()
		close(p.Exited)
	}()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("output of %s:\n%s", cmd, p.Output.String())
		}
	})
	return p
}

// stop ends the process group: SIGTERM, up to 5 seconds to exit, then SIGKILL
// (which also reaches any child left in the group). Safe to call twice.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		pgid := p.Cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.Exited:
		case <-time.After(5 * time.Second):
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.Exited
	})
}

// buildMcpgw returns this package's binary, built once per test process,
// with -race when the test binary was (proctest.Build).
func BuildMcpgw(t testing.TB) string {
	t.Helper()
	path, err := proctest.Build(".", proctest.RaceEnabled())
	if err != nil {
		t.Fatalf("building mcpgw: %v", err)
	}
	return path
}

// Target says how client.mjs reaches the MCP server under test: a URL or a
// stdio command.
type Target struct {
	// URL is the Streamable HTTP endpoint (http://127.0.0.1:P/mcp), or with
	// SSE set the legacy SSE endpoint (http://127.0.0.1:P/sse).
	URL     string
	SSE     bool
	Headers map[string]string // sent with every HTTP request
	// Command is the stdio server's command line; it excludes URL. The
	// server inherits client.mjs's whole environment and working directory.
	Command []string
	Dir     string   // working directory of client.mjs; "" means the test's
	Env     []string // added to the test's environment for client.mjs
	// Elicit, if set, makes the client declare elicitation and answer
	// every request so: "accept:DECISION", "decline" or "cancel".
	Elicit string
	// ElicitDefaults: the client fills in a form's defaults (the SDK's
	// applyDefaults) for what its answer leaves out.
	ElicitDefaults bool
	// Driver is the client script in testdata/e2e: "" is client.mjs
	// (SDK 1.x, the 2025 handshake), client2026.mjs the SDK 2.x client
	// pinned to protocol 2026-07-28 (which knows fewer ops).
	Driver string
	// Sample, for client2026.mjs: the client declares sampling and
	// answers every sampling request with this text.
	Sample string
}

func (tg Target) args() ([]string, error) {
	if tg.Sample != "" {
		rest := tg
		rest.Sample = ""
		args, err := rest.args()
		return append([]string{"--sample", tg.Sample}, args...), err
	}
	switch {
	case tg.URL != "" && len(tg.Command) > 0:
		return nil, errors.New("target has both URL and Command")
	case len(tg.Command) > 0:
		if tg.Elicit != "" {
			return append([]string{"--elicit", tg.Elicit, "--stdio", "--"}, tg.Command...), nil
		}
		return append([]string{"--stdio", "--"}, tg.Command...), nil
	case tg.URL == "":
		return nil, errors.New("target has neither URL nor Command")
	}
	args := []string{"--url", tg.URL}
	if tg.Elicit != "" {
		args = append(args, "--elicit", tg.Elicit)
	}
	if tg.ElicitDefaults {
		args = append(args, "--elicit-defaults")
	}
	if tg.SSE {
		args = append(args, "--sse")
	}
	for k, v := range tg.Headers {
		args = append(args, "--header", k+": "+v)
	}
	return args, nil
}

// Step is one step of a client.mjs script; see client.mjs for the ops.
type Step struct {
	Op        string `json:"op"`
	Name      string `json:"name,omitempty"`      // callTool, getPrompt
	Arguments any    `json:"arguments,omitempty"` // callTool, getPrompt; map[string]any{} is sent as {}
	Progress  bool   `json:"progress,omitempty"`  // callTool: record progress notifications
	Method    string `json:"method,omitempty"`    // waitNotification
	TimeoutMs int    `json:"timeoutMs,omitempty"` // request or wait timeout
	Ms        int    `json:"ms,omitempty"`        // sleep
	URI       string `json:"uri,omitempty"`       // readResource, subscribe
	Ref       any    `json:"ref,omitempty"`       // complete
	Argument  any    `json:"argument,omitempty"`  // complete
	Level     string `json:"level,omitempty"`     // setLoggingLevel
	Steps     []Step `json:"steps,omitempty"`     // parallel
}

// StepResult is client.mjs's line for one step.
type StepResult struct {
	Step   int             `json:"step"` // -1 for a failed connect
	Op     string          `json:"op"`
	OK     bool            `json:"ok"`
	Error  string          `json:"error,omitempty"`
	Code   int             `json:"code,omitempty"` // JSON-RPC error code, if any
	Result json.RawMessage `json:"result,omitempty"`
}

// String returns the step's line as client.mjs printed it.
func (r StepResult) String() string {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprintf("step %d (%s): %v", r.Step, r.Op, err)
	}
	return string(b)
}

// callToolResult is the part of a CallToolResult the helpers read.
type callToolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

// Text returns the text contents of a callTool result, joined by newlines.
func (r StepResult) Text() string {
	var res callToolResult
	if json.Unmarshal(r.Result, &res) != nil {
		return ""
	}
	var texts []string
	for _, c := range res.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// IsError reports whether a callTool result has isError set.
func (r StepResult) IsError() bool {
	var res callToolResult
	return json.Unmarshal(r.Result, &res) == nil && res.IsError
}

// Decode unmarshals the step's result into v.
func (r StepResult) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Result, v); err != nil {
		t.Fatalf("decoding step %d (%s) result %s: %v", r.Step, r.Op, r.Result, err)
	}
}

// runClient runs steps through client.mjs against target, with a 2 minute
// limit, and fails the test on a transport failure. A failed step is not a
// test failure: check StepResult.OK.
func RunClient(t testing.TB, target Target, steps []Step) []StepResult {
	t.Helper()
	NeedNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	results, stderr, err := TryClient(ctx, target, steps)
	if stderr != "" {
		t.Logf("client.mjs stderr:\n%s", stderr)
	}
	if err != nil {
		t.Fatalf("client.mjs: %v\nresults: %v", err, results)
	}
	return results
}

// clientRun is what a client.mjs run started by goClient printed.
type ClientRun struct {
	Results []StepResult
	Stderr  string
	Err     error
}

// goClient runs steps through client.mjs in a goroutine, for a test that
// acts while the client waits (approves its call, restarts the daemon).
// Receive the run on the test's goroutine and call its results method
// there: only that goroutine may fail the test. The run is ended, and
// waited for, when the test ends.
func GoClient(t testing.TB, target Target, steps []Step) <-chan ClientRun {
	t.Helper()
	NeedNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	ch := make(chan ClientRun, 1)
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		results, stderr, err := TryClient(ctx, target, steps)
		ch <- ClientRun{results, stderr, err}
	}()
	t.Cleanup(func() {
		cancel()
		<-ended
	})
	return ch
}

// check returns the run's results, failing the test as runClient does on
// a transport failure. Call it on the test's goroutine.
func (r ClientRun) Check(t testing.TB) []StepResult {
	t.Helper()
	if r.Stderr != "" {
		t.Logf("client.mjs stderr:\n%s", r.Stderr)
	}
	if r.Err != nil {
		t.Fatalf("client.mjs: %v\nresults: %v", r.Err, r.Results)
	}
	return r.Results
}

// tryClient runs steps through client.mjs against target and returns the
// results it printed and its stderr. err is non-nil when client.mjs exits
// non-zero (a transport failure or a bad script) or prints a line per step
// less than it was given. Call needNode first.
func TryClient(ctx context.Context, target Target, steps []Step) (results []StepResult, stderr string, err error) {
	targetArgs, err := target.args()
	if err != nil {
		return nil, "", err
	}
	if steps == nil {
		steps = []Step{}
	}
	script, err := json.Marshal(steps)
	if err != nil {
		return nil, "", err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "", err
	}
	driver := "client.mjs"
	if target.Driver != "" {
		driver = target.Driver
	}
	cmd := exec.CommandContext(ctx, node, append([]string{Path(driver)}, targetArgs...)...)
	cmd.Dir = target.Dir
	cmd.Env = append(os.Environ(), target.Env...)
	cmd.Stdin = bytes.NewReader(script)
	var stdout, errBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &errBuf
	// Its own group, so that a stdio server it started dies with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()

	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r StepResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return results, errBuf.String(), fmt.Errorf("parsing client.mjs output line %q: %w", sc.Text(), err)
		}
		results = append(results, r)
	}
	if err := sc.Err(); err != nil {
		return results, errBuf.String(), fmt.Errorf("reading client.mjs output: %w", err)
	}
	if runErr != nil {
		return results, errBuf.String(), fmt.Errorf("%s: %w", cmd, runErr)
	}
	if len(results) != len(steps) {
		return results, errBuf.String(), fmt.Errorf("client.mjs printed %d results for %d steps", len(results), len(steps))
	}
	return results, errBuf.String(), nil
}

// TestE2EHarness checks the harness itself: server-everything over each
// transport, driven through client.mjs.
func TestE2EHarness(t *testing.T) {
	t.Parallel()
	NeedNode(t)
	echo := func(msg string) Step {
		return Step{Op: "callTool", Name: "echo", Arguments: map[string]any{"message": msg}}
	}
	listChanged := Step{Op: "waitNotification", Method: "notifications/tools/list_changed", TimeoutMs: 10000}
	check := func(t *testing.T, target Target, steps []Step, msg string) []StepResult {
		t.Helper()
		results := RunClient(t, target, steps)
		var tools struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		results[0].Decode(t, &tools)
		if !slices.ContainsFunc(tools.Tools, func(tool struct{ Name string }) bool { return tool.Name == "echo" }) {
			t.Errorf("listTools: no echo tool in %s", results[0].Result)
		}
		if r := results[1]; !r.OK || r.IsError() || r.Text() != "Echo: "+msg {
			t.Errorf("callTool echo = %v, want text %q", r, "Echo: "+msg)
		}
		return results
	}

	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		name, args := EverythingStdio()
		steps := []Step{{Op: "listTools"}, echo("over stdio"), listChanged, {Op: "callTool", Name: "no-such-tool"}}
		results := check(t, Target{Command: append([]string{name}, args...)}, steps, "over stdio")
		if r := results[2]; !r.OK {
			t.Errorf("waitNotification tools/list_changed: %s", r.Error)
		}
		if r := results[3]; !r.OK || !r.IsError() {
			t.Errorf("callTool no-such-tool = %v, want a result with isError", r)
		}
	})
	t.Run("streamableHttp", func(t *testing.T) {
		t.Parallel()
		url := StartEverything(t, "streamableHttp")
		check(t, Target{URL: url}, []Step{{Op: "listTools"}, echo("over streamable http"), {Op: "terminateSession"}}, "over streamable http")
	})
	t.Run("sse", func(t *testing.T) {
		t.Parallel()
		url := StartEverything(t, "sse")
		results := check(t, Target{URL: url, SSE: true}, []Step{{Op: "listTools"}, echo("over sse"), listChanged}, "over sse")
		if r := results[2]; !r.OK {
			t.Errorf("waitNotification tools/list_changed: %s", r.Error)
		}
	})
	t.Run("transport failure", func(t *testing.T) {
		t.Parallel()
		url := fmt.Sprintf("http://127.0.0.1:%d/mcp", FreePort(t))
		results, _, err := TryClient(t.Context(), Target{URL: url}, []Step{{Op: "ping"}})
		if err == nil {
			t.Fatalf("client.mjs against %s with nothing listening: no error, results %v", url, results)
		}
		if len(results) != 1 || results[0].Op != "connect" || results[0].OK {
			t.Errorf("results = %v, want one failed connect", results)
		}
	})
}

// testServerBin is this test binary: run with the single argument
// "testserver" it serves fakeupstream's server on stdin/stdout (see
// TestMain), so the test server never ships in mcpgw itself.
var TestServerBin = func() string {
	p, err := filepath.Abs(os.Args[0])
	if err != nil {
		panic(err)
	}
	return p
}()

func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && os.Args[1] == "conformance-upstream" {
		if err := fakeupstream.ConformanceServer(os.Args[2:]...).Run(context.Background(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "conformance-upstream:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) == 3 && os.Args[1] == "conformance-upstream-http" {
		// The first line of output is the server's MCP URL.
		ready := func(url string) { fmt.Println(url) }
		if err := fakeupstream.ServeConformance(context.Background(), os.Args[2], ready); err != nil {
			fmt.Fprintln(os.Stderr, "conformance-upstream-http:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) == 3 && os.Args[1] == "conformance-client" {
		if err := conformanceClientMain(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "conformance-client:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) == 3 && os.Args[1] == "conformance-cli" {
		if err := conformanceCLIMain(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "conformance-cli:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) == 3 && os.Args[1] == "browse" {
		if err := browseMain(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "browse:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) == 2 && os.Args[1] == "testserver" {
		if err := fakeupstream.ServeStdio(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	flag.Parse()
	parallelByDefault()
	os.Exit(m.Run())
}

// heavySlots bounds how many of the heaviest peers — a Pi process, a
// Chromium — run at once, one per CPU, while the lighter end-to-end tests
// fill the rest of -parallel. Pi gives its MCP servers a fixed 10 s to
// connect before its first prompt: with every test's node and browser
// starting at once on a busy machine, that was spent before mcpgw's first
// answer.
var heavySlots = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))

// heavy takes a heavy slot and returns its release.
func Heavy() (release func()) {
	heavySlots <- struct{}{}
	return func() { <-heavySlots }
}

// parallelByDefault lets four tests per CPU run at once unless -parallel
// was given. The end-to-end tests spend most of their time waiting on the
// processes they start (node, daemons, browsers), so go test's default of
// one per CPU leaves the machine idle while the package runs past its
// time limit; each test has its own ports, directories and daemons.
func parallelByDefault() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}

// waitCached waits until the daemon's cache file holds entries for names.
func WaitCached(t *testing.T, path string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var f struct {
			Servers map[string]json.RawMessage `json:"servers"`
		}
		data, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(data, &f) == nil {
			all := true
			for _, n := range names {
				if _, ok := f.Servers[n]; !ok {
					all = false
				}
			}
			if all {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache %s never got entries for %v (have %s)", path, names, data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ToolNames(t *testing.T, r StepResult) []string {
	t.Helper()
	var res struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	r.Decode(t, &res)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}
