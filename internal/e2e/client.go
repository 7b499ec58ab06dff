//go:build unix

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
	URI       string `json:"uri,omitempty"`       // readResource, subscribe; waitNotification: only of this URI
	Path      string `json:"path,omitempty"`      // signal, waitSignal
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

func Call(name string, args any) Step {
	return Step{Op: "callTool", Name: name, Arguments: args, TimeoutMs: 60000}
}

func MCPCall(args map[string]any) Step { return Call("mcp", args) }
