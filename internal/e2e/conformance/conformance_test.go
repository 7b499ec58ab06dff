//go:build linux

package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// conformanceScenarios are the server scenarios of the MCP conformance suite
// (@modelcontextprotocol/conformance) that test the gateway itself: the
// protocol, the transport and the tool surface. The others test particular
// tools (test_image_content, test_sampling, ...) of the suite's reference
// server, which a gateway only forwards.
var conformanceScenarios = []string{
	"server-initialize",
	"ping",
	"logging-set-level",
	"tools-list",
	"tools-call-simple-text",
	"tools-call-error",
	"server-sse-multiple-streams",
	"resources-list",
	"prompts-list",
	"dns-rebinding-protection",
}

// conformanceAll are all the server scenarios of the suite (0.1.16).
var conformanceAll = []string{
	"server-initialize", "logging-set-level", "ping", "completion-complete",
	"tools-list", "tools-call-simple-text", "tools-call-image", "tools-call-audio",
	"tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-with-logging",
	"tools-call-error", "tools-call-with-progress", "tools-call-sampling",
	"tools-call-elicitation", "json-schema-2020-12", "elicitation-sep1034-defaults",
	"server-sse-polling", "server-sse-multiple-streams", "elicitation-sep1330-enums",
	"resources-list", "resources-read-text", "resources-read-binary",
	"resources-templates-read", "resources-subscribe", "resources-unsubscribe",
	"prompts-list", "prompts-get-simple", "prompts-get-with-args",
	"prompts-get-embedded-resource", "prompts-get-with-image", "dns-rebinding-protection",
}

// TestConformance runs the official MCP conformance suite's server
// scenarios against a real daemon in direct mode, with server-everything
// behind it (its tools under their own names). The suite needs Node 22,
// which the e2e package installs (npm package node@22).
func TestConformance(t *testing.T) {
	t.Parallel()
	node22, cli := needConformance(t)
	node, args := e2e.EverythingStdio()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"everything": map[string]any{"command": node, "args": args},
	}, map[string]any{"toolPrefix": "none", "mode": "direct"})
	d := e2e.StartDaemon(t, dir, config)
	runConformance(t, node22, cli, d, conformanceScenarios, nil)
}

// needConformance returns Node 22 and the suite's CLI, skipping (or
// failing under CI) when they are not installed.
func needConformance(t *testing.T) (node22, cli string) {
	t.Helper()
	e2e.NeedNode(t)
	node22 = e2e.Path("node_modules/node/bin/node")
	cli = e2e.Path("node_modules/@modelcontextprotocol/conformance/dist/index.js")
	for _, f := range []string{node22, cli} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("conformance suite not installed (%v); install with: %s", err, e2e.NPMInstallHint)
			}
			t.Skipf("conformance suite not installed (%v); install with: %s", err, e2e.NPMInstallHint)
		}
	}
	return node22, cli
}

// TestConformanceSuite runs every server scenario of the suite through
// the daemon, with an upstream that serves the suite's fixtures
// (fakeupstream.ConformanceServer), in each mode. Direct mode passes all
// of them. In the other modes the upstream's tools are reached through the
// `mcp` tool or ToolSearch instead of under their own names, so the
// scenarios that call or list a fixture tool by name fail there by design;
// the test checks that exactly those fail, so the list stays true.
func TestConformanceSuite(t *testing.T) {
	t.Parallel()
	node22, cli := needConformance(t)
	byTool := "by design: the scenario calls a fixture tool by its own name, which this mode reaches through %s"
	for _, mode := range []struct {
		name    string
		failing map[string]string // scenario → why
	}{
		{"direct", nil},
		{"proxy", conformanceByDesign(fmt.Sprintf(byTool, "the mcp tool"), "json-schema-2020-12")},
		{"toolsearch", conformanceByDesign(fmt.Sprintf(byTool, "ToolSearch activation"), "json-schema-2020-12")},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			config := e2e.WriteConfig(t, dir, map[string]any{
				"fixtures": map[string]any{"command": e2e.TestServerBin, "args": []string{"conformance-upstream"}},
			}, map[string]any{"toolPrefix": "none", "mode": mode.name})
			d := e2e.StartDaemon(t, dir, config)
			runConformance(t, node22, cli, d, conformanceAll, mode.failing)
		})
	}
}

// conformanceByDesign lists the scenarios that call fixture tools by name
// (and extra ones), each with why. tools-call-simple-text and
// tools-call-error are not among them: they pass in every mode, if only
// because the answer to a call of an unlisted tool is an error result whose
// text explains how to reach it, which is all they check.
func conformanceByDesign(why string, extra ...string) map[string]string {
	out := map[string]string{}
	for _, sc := range conformanceAll {
		if (strings.HasPrefix(sc, "tools-call-") || strings.HasPrefix(sc, "elicitation-")) &&
			sc != "tools-call-simple-text" && sc != "tools-call-error" {
			out[sc] = why
		}
	}
	for _, sc := range extra {
		out[sc] = why
	}
	return out
}

// conformanceClientRequests are the scenarios of requests an upstream makes
// of the client while it serves a call.
var conformanceClientRequests = []string{
	"tools-call-sampling",
	"tools-call-elicitation",
	"elicitation-sep1034-defaults",
	"elicitation-sep1330-enums",
}

// TestConformanceClientRequestsOlderUpstream runs the sampling and
// elicitation scenarios with an upstream on protocol 2025-11-25, which
// sends those requests over the wire while the call is in flight (a newer
// one asks for them in the call's result, as TestConformanceSuite
// shows).
func TestConformanceClientRequestsOlderUpstream(t *testing.T) {
	t.Parallel()
	node22, cli := needConformance(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"fixtures": map[string]any{"command": e2e.TestServerBin, "args": []string{"conformance-upstream", "2025-11-25"}},
	}, map[string]any{"toolPrefix": "none", "mode": "direct"})
	d := e2e.StartDaemon(t, dir, config)
	runConformance(t, node22, cli, d, conformanceClientRequests, nil)
}

// runConformance runs the suite's server scenarios against the daemon d
// in one run of the suite (--suite all: one node process, the scenarios
// one after the other, each as a client of its own), and checks each of
// scenarios in a subtest: it passes, or, when failing names it, fails
// (by design, for the reason given).
func runConformance(t *testing.T, node22, cli string, d *e2e.Daemon, scenarios []string, failing map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*e2e.WaitLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node22, cli, "server", "--url", d.MCPURL(), "--suite", "all")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	results, sections := parseConformanceSummary(string(out))
	if len(results) == 0 {
		t.Fatalf("the suite printed no summary (%v):\n%s", err, out)
	}
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			r, ok := results[sc]
			why, byDesign := failing[sc]
			switch {
			case !ok:
				t.Errorf("the suite did not run scenario %s", sc)
			case !byDesign && r.failed > 0:
				t.Errorf("scenario %s: %d passed, %d failed\n%s", sc, r.passed, r.failed, sections[sc])
			case byDesign && r.failed == 0:
				t.Errorf("scenario %s passes, but is listed as failing %s: take it off the list\n%s", sc, why, sections[sc])
			}
		})
	}
}

// conformanceResult is one scenario's line of the suite's summary.
type conformanceResult struct{ passed, failed int }

// parseConformanceSummary reads the summary of a run of several scenarios
// ("✓ ping: 1 passed, 0 failed") and each scenario's part of the output
// (from its "=== Running scenario: NAME ===" on).
func parseConformanceSummary(out string) (map[string]conformanceResult, map[string]string) {
	results := map[string]conformanceResult{}
	sections := map[string]string{}
	summary := out
	if i := strings.LastIndex(out, "=== SUMMARY ==="); i >= 0 {
		summary, out = out[i:], out[:i]
	}
	line := regexp.MustCompile(`(?m)^\S+ ([\w.-]+): (\d+) passed, (\d+) failed`)
	for _, m := range line.FindAllStringSubmatch(summary, -1) {
		p, _ := strconv.Atoi(m[2])
		f, _ := strconv.Atoi(m[3])
		results[m[1]] = conformanceResult{p, f}
	}
	const marker = "=== Running scenario: "
	parts := strings.Split(out, marker)
	for _, part := range parts[1:] {
		name, _, _ := strings.Cut(part, " ")
		sections[name] = marker + part
	}
	return results, sections
}

// conformanceRun says how runConformanceScenarios runs the suite's command.
type conformanceRun struct {
	env []string // added to the test's environment
}

// conformanceClientTimeout is the suite's limit for one client scenario
// (its default is 30 s): the client here starts a daemon and runs the CLI,
// which on a busy machine under -race takes longer than that.
const conformanceClientTimeout = "120000"

// runConformanceScenarios runs the suite's client command for each
// scenario in a parallel subtest, in a directory of its own; a subtest
// passes when every check of its scenario passed. Each scenario's server
// is the suite's own, on a port of its own, so they share nothing.
func runConformanceScenarios(t *testing.T, run conformanceRun, scenarios []string, command func(scenario string) []string) {
	passed := regexp.MustCompile(`Passed: (\d+)/(\d+), 0 failed`)
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := command(sc)
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(append(os.Environ(), "NO_COLOR=1"), run.env...)
			out, err := cmd.CombinedOutput()
			m := passed.FindSubmatch(out)
			ok := err == nil && m != nil && string(m[1]) == string(m[2])
			if !ok {
				t.Errorf("scenario %s: %v\n%s", sc, err, out)
			}
		})
	}
}
