//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/e2e"
)

// Limits on what one session can make the daemon hold, each met with an
// error that names its setting before the memory, disk or place is taken.

// pendingNow polls the daemon until n calls wait for approval, and
// returns them.
func pendingNow(t *testing.T, d *e2e.Daemon, n int) []api.PendingApproval {
	t.Helper()
	var found []api.PendingApproval
	e2e.PollUntil(t, strconv.Itoa(n)+" pending approvals", func() bool {
		found = d.Report(t).Approvals
		return len(found) >= n
	})
	return found
}

// denyOnPage denies the pending approval id as the status page does.
func denyOnPage(t *testing.T, d *e2e.Daemon, id string) {
	t.Helper()
	resp, err := http.PostForm(d.URL+"/-/approve", url.Values{"id": {id}, "decision": {"deny"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// vmHWM is the peak resident memory of process pid, in MB.
func vmHWM(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	kb, _ := strconv.Atoi(string(m[1]))
	return kb >> 10
}

// TestScriptArgumentBudgetE2E: a script that passes a 1 MiB argument to
// 8 calls at once, each of which would wait (for an approval nobody
// gives), gets the argument budget's error (settings.scriptArgsBytes, 1.5
// MiB here) for every call past it: the daemon holds the arguments of the
// calls in flight, not 8 copies. (The budget's default, 16 MiB, with
// 8 MiB arguments is the same test, but each big argument costs the
// engine and the race detector seconds.)
func TestScriptArgumentBudgetE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	const calls, budget = 8, 3 << 19
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"p": e2e.PolicyServer(map[string]any{"approveTools": "destructive"})},
		map[string]any{"approvalTimeoutMs": 120000, "scriptArgsBytes": budget})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	src := fmt.Sprintf(`
		const big = "x".repeat(1 << 20);
		const calls = [];
		for (let i = 0; i < %d; i++) calls.push(tools.call("p_delete_thing", {name: big}));
		const first = await Promise.race(calls);
		return first.ok ? "no limit" : first.error.message;`, calls)
	step := e2e.MCPCall(map[string]any{"script": src, "timeoutMs": int(e2e.WaitLimit / time.Millisecond)})
	step.TimeoutMs = int(e2e.WaitLimit / time.Millisecond)
	r := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{step})
	out := decodeScriptOutput(t, r[0].Text())
	var msg string
	_ = json.Unmarshal(out.Result, &msg)
	if want := fmt.Sprintf("the arguments of the script's calls in flight would pass %d bytes (settings.scriptArgsBytes)", budget); !strings.Contains(msg, want) {
		t.Errorf("the script's first settled call: %q, want it to say %q (script %s)", msg, want, r[0].Text())
	}
	limited := 0
	for _, c := range out.Calls {
		if c.Error == "limit" {
			limited++
		}
	}
	if limited != calls-1 {
		t.Errorf("%d calls refused by the budget, want %d (one 1 MiB argument fits in 1.5 MiB)", limited, calls-1)
	}
	t.Logf("the daemon's peak RSS: %d MB", vmHWM(t, d.Proc.Cmd.Process.Pid))
}

// TestScriptsPerSessionE2E: three scripts at once in one session — each
// waits on a call that needs approval — and the third is refused at
// once with the limit's setting; the two others run until their calls
// are denied.
func TestScriptsPerSessionE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"p": e2e.PolicyServer(map[string]any{"approveTools": "destructive"})},
		map[string]any{"approvalTimeoutMs": 20000})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	script := func(name string) e2e.Step {
		return e2e.MCPCall(map[string]any{"script": `return (await tools.call("p_delete_thing", {name: "` + name + `"})).ok`})
	}
	done := make(chan []e2e.StepResult, 1)
	go func() {
		done <- e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{{Op: "parallel", Steps: []e2e.Step{script("one"), script("two"), script("three")}}})
	}()
	for _, p := range pendingNow(t, d, 2) {
		denyOnPage(t, d, p.ID)
	}
	r := <-done
	var results []struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
	}
	r[0].Decode(t, &results)
	refused := 0
	for _, res := range results {
		text := e2e.StepResult{Result: res.Result}.Text()
		if strings.Contains(text, "Too many scripts running in this session (limit 2, settings.scriptsPerSession)") {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("%d of three scripts at once refused, want 1: %s", refused, r[0].Result)
	}
}

// TestPendingApprovalsPerSessionE2E: a session with a call waiting for
// approval has its next one refused at once, naming the setting; the
// waiting one is decided as usual.
func TestPendingApprovalsPerSessionE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"p": e2e.PolicyServer(map[string]any{"approveTools": "destructive"})},
		map[string]any{"approvalTimeoutMs": 20000, "approvalsPerSession": 1})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	del := func(name string) e2e.Step {
		return e2e.MCPCall(map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": name}})
	}
	done := make(chan []e2e.StepResult, 1)
	go func() {
		done <- e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{{Op: "parallel", Steps: []e2e.Step{del("one"), del("two")}}})
	}()
	p := pendingNow(t, d, 1)
	denyOnPage(t, d, p[0].ID)
	r := <-done
	var results []struct {
		Result json.RawMessage `json:"result"`
	}
	r[0].Decode(t, &results)
	var texts []string
	for _, res := range results {
		texts = append(texts, e2e.StepResult{Result: res.Result}.Text())
	}
	joined := strings.Join(texts, "\n")
	if len(texts) != 2 || !strings.Contains(joined, "too many calls of this session wait for approval (limit 1, settings.approvalsPerSession)") ||
		!strings.Contains(joined, "denied") {
		t.Errorf("two calls waiting at once in a session limited to one: %q", texts)
	}
	if got := deleteCount(t, d); got != "0" {
		t.Errorf("delete_thing calls that reached the upstream: %s, want 0", got)
	}
}

// TestSavedResultsLimitE2E: twenty results of 100 kB, each cut and saved,
// leave at most settings.savedResultsMaxBytes on disk.
func TestSavedResultsLimitE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	dir := t.TempDir()
	const limit = 300_000
	config := e2e.WriteConfig(t, dir, map[string]any{"t": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}},
		map[string]any{"maxOutputBytes": 1000, "savedResultsMaxBytes": limit})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	var steps []e2e.Step
	for i := range 20 {
		steps = append(steps, e2e.MCPCall(map[string]any{"tool": "t_echo", "args": map[string]any{"message": strconv.Itoa(i) + strings.Repeat("r", 100_000)}}))
	}
	r := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, steps)
	if got := r[19].Text(); !strings.Contains(got, "The whole result is saved as") {
		t.Fatalf("the last big result was not saved: %.300s", got)
	}
	resultsDir := filepath.Join(dir, "state", "mcpgw", "results")
	entries, err := os.ReadDir(resultsDir)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		total += info.Size()
	}
	if total > limit || len(entries) == 0 {
		t.Errorf("%d saved results hold %d bytes, over settings.savedResultsMaxBytes %d", len(entries), total, limit)
	}
}
