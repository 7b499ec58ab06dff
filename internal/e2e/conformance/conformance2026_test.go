//go:build linux

package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// conformanceNext is the suite's release with the requirement sets of
// protocol 2026-07-28 (installed beside 0.1.16 as conformance-next).
const conformanceNext = "node_modules/conformance-next/dist/index.js"

// notYetThrough are, for each revision's server requirements, the
// scenarios our conformance server passes directly and mcpgw does not yet
// pass in front of it, each with why; none today. The test fails when one
// of them passes: take it off the list.
var notYetThrough = map[string]map[string]string{
	"2026-07-28": {},
	"2025-11-25": {},
}

// notDirectly are, for each revision's server requirements, the
// scenarios our conformance server fails itself, each with why. The test
// fails when another one fails directly, or one of them passes.
var notDirectly = map[string]map[string]string{
	"2026-07-28": func() map[string]string {
		why := "the tasks extension (io.modelcontextprotocol/tasks, not scored): the go-sdk has no tasks"
		out := map[string]string{}
		for _, sc := range []string{"tasks-lifecycle", "tasks-capability-negotiation", "tasks-wire-fields",
			"tasks-request-state-removal", "tasks-mrtr-input", "tasks-request-headers",
			"tasks-dispatch-and-envelope", "tasks-required-task-error", "tasks-mrtr-composition"} {
			out[sc] = why
		}
		return out
	}(),
}

// conformanceRevisions are the revisions whose server requirements run.
var conformanceRevisions = []string{"2026-07-28", "2025-11-25"}

// TestConformanceRequirements runs the conformance suite's server
// requirements of protocols 2026-07-28 and 2025-11-25 against our own
// conformance server (fakeupstream.ConformanceServer) directly, over
// Streamable HTTP in both eras, and through a daemon in direct mode with
// the same server as its only upstream, over stdio (its tools under their
// own names). Every scenario that passes directly passes through mcpgw,
// but for notYetThrough.
//
// Scenarios passed (checks passed / failed), suite 0.2.0-alpha.12:
//
//	              directly             through mcpgw
//	2026-07-28    41 of 50 (165 / 30)  41 of 50 (170 / 25)
//	2025-11-25    33 of 33 (82 / 0)    33 of 33 (80 / 0)
//
// At 2026-07-28 the nine scenarios of the tasks extension (not scored)
// fail both ways (notDirectly); through mcpgw a few more of their checks
// pass, as mcpgw answers a call of a tool it does not have (the tasks
// fixtures) with an error result where the go-sdk answers with a JSON-RPC
// error. At 2025-11-25 two of the SSE scenarios make fewer checks through
// mcpgw: it answers a 2025-era POST as application/json, where the suite
// has no stream to look at. On a loaded machine a check with a time limit
// may warn rather than pass, one fewer passed; a scenario that fails
// where it should pass runs again (passOnRetry).
func TestConformanceRequirements(t *testing.T) {
	t.Parallel()
	node22, cli := needConformanceNext(t)
	direct := startConformanceServer(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"conformance": map[string]any{"command": e2e.TestServerBin, "args": []string{"conformance-upstream"}},
	}, map[string]any{"toolPrefix": "none", "mode": "direct"})
	d := e2e.StartDaemon(t, dir, config)

	// Each server takes one revision after the other; the two run at once.
	directRuns := map[string]requirementsRun{}
	gwRuns := map[string]requirementsRun{}
	var wg sync.WaitGroup
	wg.Go(func() {
		for _, rev := range conformanceRevisions {
			directRuns[rev] = runRequirements(t, node22, cli, direct, rev)
		}
	})
	wg.Go(func() {
		for _, rev := range conformanceRevisions {
			gwRuns[rev] = runRequirements(t, node22, cli, d.MCPURL(), rev)
		}
	})
	wg.Wait()
	for _, rev := range conformanceRevisions {
		t.Run(rev, func(t *testing.T) {
			checkThrough(t, directRuns[rev], gwRuns[rev], notDirectly[rev], notYetThrough[rev])
		})
	}
}

// needConformanceNext returns Node 22 and the CLI of the suite's release
// conformanceNext, skipping (or failing under CI) when they are not
// installed.
func needConformanceNext(t *testing.T) (node22, cli string) {
	t.Helper()
	node22, _ = needConformance(t)
	cli = e2e.Path(conformanceNext)
	if _, err := os.Stat(cli); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("conformance suite %s not installed (%v); install with: %s", conformanceNext, err, e2e.NPMInstallHint)
		}
		t.Skipf("conformance suite %s not installed (%v); install with: %s", conformanceNext, err, e2e.NPMInstallHint)
	}
	return node22, cli
}

// checkThrough holds the run directly to failsDirectly, and the run
// through mcpgw to the run directly, but for notThrough.
func checkThrough(t *testing.T, directRun, gwRun requirementsRun, failsDirectly, notThrough map[string]string) {
	if len(directRun.results) == 0 || len(gwRun.results) == 0 {
		t.Fatalf("the suite printed no summary:\ndirectly:\n%s\nthrough mcpgw:\n%s", directRun.out, gwRun.out)
	}
	t.Logf("directly: %s; through mcpgw: %s", directRun.counts(), gwRun.counts())
	for _, sc := range slices.Sorted(maps.Keys(directRun.results)) {
		dr := directRun.results[sc]
		gr, ran := gwRun.results[sc]
		whyDirect, failsDirect := failsDirectly[sc]
		why, isKnown := notThrough[sc]
		if dr.failed > 0 && !failsDirect {
			dr = passOnRetry(t, directRun, sc, dr)
		}
		if ran && dr.failed == 0 && gr.failed > 0 && !isKnown {
			gr = passOnRetry(t, gwRun, sc, gr)
		}
		switch {
		case dr.failed > 0 && !failsDirect:
			t.Errorf("scenario %s fails directly (%d passed, %d failed):\n%s", sc, dr.passed, dr.failed, directRun.failures(sc))
		case dr.failed == 0 && failsDirect:
			t.Errorf("scenario %s passes directly, but is listed as failing there (%s): take it off the list", sc, whyDirect)
		case !ran:
			t.Errorf("scenario %s ran directly but not through mcpgw", sc)
		case dr.failed > 0:
			// Our server fails it itself: nothing to hold mcpgw to.
		case gr.failed > 0 && !isKnown:
			t.Errorf("scenario %s passes directly (%d checks) but not through mcpgw (%d passed, %d failed):\n%s", sc, dr.passed, gr.passed, gr.failed, gwRun.failures(sc))
		case gr.failed == 0 && isKnown:
			t.Errorf("scenario %s passes through mcpgw, but is listed as not yet (%s): take it off the list", sc, why)
		}
	}
	for _, sc := range slices.Sorted(maps.Keys(failsDirectly)) {
		if _, ran := directRun.results[sc]; !ran {
			t.Errorf("scenario %s, listed as failing directly, did not run", sc)
		}
	}
}

// startConformanceServer runs our conformance server over Streamable
// HTTP (this binary with arg conformance-upstream-http, see TestMain) on
// a port of its own, and returns its MCP URL, the first line it prints.
func startConformanceServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(e2e.TestServerBin, "conformance-upstream-http", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := e2e.StartProcess(t, cmd)
	line := make(chan string, 1)
	go func() { // ends with the first line, or when the process is stopped
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case url := <-line:
		if url == "" {
			<-p.Exited
			t.Fatalf("starting the conformance server: it printed no URL: %v\n%s", p.Err, p.Output)
		}
		return url
	case <-time.After(e2e.WaitLimit):
		t.Fatalf("starting the conformance server: no URL after %v", e2e.WaitLimit)
	}
	return ""
}

// requirementsRun is one run of a requirement set: each scenario's
// counts, the output, and the directory of its checks.
type requirementsRun struct {
	results map[string]conformanceResult
	out     string
	dir     string

	node22, cli, url, revision string // what ran, for rerun
}

// runRequirements runs the server requirements of revision against url.
func runRequirements(t *testing.T, node22, cli, url, revision string) requirementsRun {
	ctx, cancel := context.WithTimeout(context.Background(), 3*e2e.WaitLimit)
	defer cancel()
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, node22, cli, "server", "--url", url, "--requirements", revision, "-o", filepath.Join(dir, "checks"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, _ := cmd.CombinedOutput() // non-zero when a scenario fails
	results, _ := parseConformanceSummary(string(out))
	return requirementsRun{results: results, out: string(out), dir: filepath.Join(dir, "checks"),
		node22: node22, cli: cli, url: url, revision: revision}
}

// conformanceRetries is how many times more a scenario that fails where it
// should pass runs, alone: a few of the suite's checks allow an answer
// well under a second (server-stateless reads a call's stream for 500 ms,
// a subscription's for 800), which a machine running every test of the
// package at once can miss. A scenario that fails every time fails the
// test.
const conformanceRetries = 2

// passOnRetry runs scenario sc of r again, alone, until it passes, at
// most conformanceRetries times, and returns its last result (res if it
// did not run again).
func passOnRetry(t *testing.T, r requirementsRun, sc string, res conformanceResult) conformanceResult {
	t.Helper()
	counts := regexp.MustCompile(`Passed: (\d+)/\d+, (\d+) failed`)
	for i := range conformanceRetries {
		ctx, cancel := context.WithTimeout(context.Background(), e2e.WaitLimit)
		cmd := exec.CommandContext(ctx, r.node22, r.cli, "server", "--url", r.url, "--scenario", sc, "--spec-version", r.revision)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		out, _ := cmd.CombinedOutput()
		cancel()
		m := counts.FindSubmatch(out)
		if m == nil {
			continue
		}
		passed, _ := strconv.Atoi(string(m[1]))
		failed, _ := strconv.Atoi(string(m[2]))
		if failed == 0 {
			t.Logf("scenario %s passed at %s on its retry %d at %s (first %d passed, %d failed):\n%s", sc, r.url, i+1, r.revision, res.passed, res.failed, r.failures(sc))
			return conformanceResult{passed, failed}
		}
	}
	return res
}

// counts is "N of M scenarios, P checks passed, F failed".
func (r requirementsRun) counts() string {
	var scenarios, passed, failed int
	for _, res := range r.results {
		if res.failed == 0 {
			scenarios++
		}
		passed += res.passed
		failed += res.failed
	}
	return fmt.Sprintf("%d of %d scenarios, %d checks passed, %d failed", scenarios, len(r.results), passed, failed)
}

// failures are the failed checks of scenario sc, as the suite wrote them.
func (r requirementsRun) failures(sc string) string {
	files, _ := filepath.Glob(filepath.Join(r.dir, "server-"+sc+"-2*", "checks.json"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var checks []map[string]any
		if json.Unmarshal(data, &checks) != nil {
			continue
		}
		for _, c := range checks {
			if c["status"] == "FAILURE" {
				line, _ := json.Marshal(c)
				b.Write(line)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}
