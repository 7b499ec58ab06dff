//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/internal/proctest"
)

// lineClient speaks newline-delimited JSON-RPC to `mcpgw stdio`.
type lineClient struct {
	t      *testing.T
	stdin  io.WriteCloser
	lines  chan map[string]any
	nextID int
}

// newLineClient writes requests to w and reads the JSON lines r answers
// with, until r ends.
func newLineClient(t *testing.T, w io.WriteCloser, r io.Reader) *lineClient {
	c := &lineClient{t: t, stdin: w, lines: make(chan map[string]any, 64)}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.lines <- m
			}
		}
		close(c.lines)
	}()
	return c
}

func startShim(t *testing.T, bin string, args ...string) *lineClient {
	t.Helper()
	return startShimCmd(t, exec.Command(bin, append([]string{"stdio"}, args...)...))
}

// startShimCmd starts cmd, an `mcpgw stdio`, and talks to it.
func startShimCmd(t *testing.T, cmd *exec.Cmd) *lineClient {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr proctest.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := newLineClient(t, stdin, stdout)
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("shim stderr:\n%s", stderr.String())
		}
	})
	return c
}

func (c *lineClient) send(method string, params any) int {
	c.nextID++
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	if _, err := c.stdin.Write(append(msg, '\n')); err != nil {
		c.t.Fatal(err)
	}
	return c.nextID
}

func (c *lineClient) notify(method string) {
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	if _, err := c.stdin.Write(append(msg, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// answer waits for the answer to request id, skipping notifications.
func (c *lineClient) answer(id int) map[string]any {
	c.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("the shim closed stdout before answering request %d", id)
			}
			if got, ok := m["id"].(float64); ok && int(got) == id {
				return m
			}
		case <-timeout:
			c.t.Fatalf("no answer to request %d", id)
		}
	}
}

func (c *lineClient) callText(name string, args any) (string, bool) {
	c.t.Helper()
	m := c.answer(c.send("tools/call", map[string]any{"name": name, "arguments": args}))
	res, _ := m["result"].(map[string]any)
	if res == nil {
		c.t.Fatalf("tools/call %s: %v", name, m)
	}
	var texts []string
	content, _ := res["content"].([]any)
	for _, ct := range content {
		if m, ok := ct.(map[string]any); ok && m["type"] == "text" {
			texts = append(texts, m["text"].(string))
		}
	}
	isErr, _ := res["isError"].(bool)
	return strings.Join(texts, "\n"), isErr
}

// initialize opens the MCP session as client name.
func (c *lineClient) initialize(name string) {
	c.t.Helper()
	init := c.answer(c.send("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": "1"},
	}))
	if init["result"] == nil {
		c.t.Fatalf("initialize: %v", init)
	}
	c.notify("notifications/initialized")
}

// TestSessionSurvivesDaemonRestart: a shim session in toolsearch mode
// activates a tool; the daemon is stopped and another started on the same
// socket; a call in flight at that moment fails with a clear error, and
// the next call of the activated tool works, in the same session.
func TestSessionSurvivesDaemonRestart(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"go": pidServerEntry(bin, dir, "go")}, map[string]any{"mode": "toolsearch"})
	d1 := e2e.StartDaemon(t, dir, config)
	c := startShim(t, bin, "--socket", d1.Socket, "--no-start")

	c.initialize("pi-mcp-mcpgw")
	text, isErr := c.callText("ToolSearch", map[string]any{"query": "select:go_echo,go_sleep"})
	if isErr || !strings.Contains(text, "- mcpgw_go_echo - ") {
		t.Fatalf("ToolSearch: %q", text)
	}
	if text, isErr := c.callText("go_echo", map[string]any{"message": "before"}); isErr || text != "before" {
		t.Fatalf("go_echo before the restart = %q", text)
	}

	// A slow call in flight when the daemon goes away.
	slow := c.send("tools/call", map[string]any{"name": "go_sleep", "arguments": map[string]any{"ms": 20000}})
	time.Sleep(300 * time.Millisecond) // let it reach the upstream
	stopped := time.Now()
	_ = syscall.Kill(-d1.Proc.Cmd.Process.Pid, syscall.SIGTERM)
	<-d1.Proc.Exited
	t.Logf("the first daemon took %v to stop", time.Since(stopped).Round(time.Millisecond))
	ans := c.answer(slow)
	if e, _ := ans["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "restarted while this request was in flight") {
		t.Errorf("in-flight call across the restart: %v", ans)
	}

	d2 := e2e.StartDaemon(t, dir, config)
	if d2.Socket != d1.Socket {
		t.Fatalf("sockets differ: %s, %s", d1.Socket, d2.Socket)
	}
	text, isErr = c.callText("go_echo", map[string]any{"message": "after"})
	back := time.Since(stopped)
	if isErr || text != "after" {
		t.Fatalf("go_echo after the restart = %q (error %v)", text, isErr)
	}
	t.Logf("session without a daemon for %v (includes starting the second daemon)", back.Round(time.Millisecond))
	if r := d2.Report(t); r.Sessions != 1 {
		t.Errorf("the new daemon counts %d sessions, want the resumed one", r.Sessions)
	}
}

// TestShimAnswersWhenTheDaemonIsKilled: a daemon killed outright cannot
// answer the call in flight on the client's pipes it was serving; the shim
// does, from the daemon's in-flight table, and the session resumes on the
// next daemon.
func TestShimAnswersWhenTheDaemonIsKilled(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"go": pidServerEntry(bin, dir, "go")}, nil)
	d1 := e2e.StartDaemon(t, dir, config)
	c := startShim(t, bin, "--socket", d1.Socket, "--no-start")
	c.initialize("t")
	if text, isErr := c.callText("mcp", map[string]any{"tool": "go_echo", "args": map[string]any{"message": "before"}}); isErr || !strings.Contains(text, "before") {
		t.Fatalf("go_echo before the kill = %q", text)
	}
	slow := c.send("tools/call", map[string]any{"name": "mcp", "arguments": map[string]any{"tool": "go_sleep", "args": map[string]any{"ms": 20000}}})
	time.Sleep(300 * time.Millisecond)
	killed := time.Now()
	_ = syscall.Kill(d1.Proc.Cmd.Process.Pid, syscall.SIGKILL)
	<-d1.Proc.Exited
	ans := c.answer(slow)
	if e, _ := ans["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "restarted while this request was in flight") {
		t.Errorf("in-flight call across kill -9: %v", ans)
	}
	t.Logf("answered %v after the kill", time.Since(killed).Round(time.Millisecond))
	e2e.StartDaemon(t, dir, config)
	if text, isErr := c.callText("mcp", map[string]any{"tool": "go_echo", "args": map[string]any{"message": "after"}}); isErr || !strings.Contains(text, "after") {
		t.Fatalf("go_echo after the kill = %q", text)
	}
}

// TestMalformedLinesKeepTheSession: lines that are not JSON-RPC get a
// JSON-RPC error, and the session goes on.
func TestMalformedLinesKeepTheSession(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{}, nil)
	d := e2e.StartDaemon(t, dir, config)
	c := startShim(t, bin, "--socket", d.Socket, "--no-start")
	c.initialize("t")
	for _, bad := range []string{"{", "\xff\xfe not utf-8", `"a string"`, "42",
		// Valid JSON but for its bytes: not passed on with U+FFFD in it.
		`{"jsonrpc":"2.0","id":77,"method":"tools/list","params":{"cursor":"` + "\xff" + `"}}`} {
		if _, err := c.stdin.Write([]byte(bad + "\n")); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-c.lines:
			e, _ := m["error"].(map[string]any)
			if code, _ := e["code"].(float64); code != -32700 && code != -32600 {
				t.Errorf("answer to %q: %v, want a parse or invalid-request error", bad, m)
			}
		case <-time.After(e2e.WaitLimit):
			t.Fatalf("no answer to %q", bad)
		}
	}
	if m := c.answer(c.send("tools/list", map[string]any{})); m["result"] == nil {
		t.Errorf("tools/list after malformed lines: %v", m)
	}
}

// TestHTTPRefusesInvalidUTF8: a POST to /mcp whose JSON is not UTF-8 gets
// a parse error instead of reaching an upstream with U+FFFD in it.
func TestHTTPRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := e2e.StartDaemon(t, dir, e2e.WriteConfig(t, dir, map[string]any{}, nil))
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"` + "\xff" + `","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, d.MCPURL(), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(out), `"code":-32700`) {
		t.Errorf("invalid UTF-8: %s\n%s", resp.Status, out)
	}
}
