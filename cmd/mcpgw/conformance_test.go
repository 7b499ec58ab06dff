//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"
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

// conformanceForwarded are the server scenarios of prompts, resources and
// completion: they test that the gateway forwards them, with an upstream
// serving the suite's fixtures (upstreamtest.ConformanceServer).
var conformanceForwarded = []string{
	"prompts-list",
	"prompts-get-simple",
	"prompts-get-with-args",
	"prompts-get-embedded-resource",
	"prompts-get-with-image",
	"resources-list",
	"resources-read-text",
	"resources-read-binary",
	"resources-templates-read",
	"completion-complete",
	"tools-call-image",
	"tools-call-audio",
	"tools-call-embedded-resource",
	"tools-call-mixed-content",
	"tools-call-with-progress",
	"tools-call-with-logging",
	"resources-subscribe",
	"resources-unsubscribe",
	"tools-call-sampling",
	"tools-call-elicitation",
	"elicitation-sep1034-defaults",
	"elicitation-sep1330-enums",
	"json-schema-2020-12",
	"server-sse-polling",
}

// TestConformance runs the official MCP conformance suite's server
// scenarios against a real daemon in direct mode, with server-everything
// behind it (its tools under their own names). The suite needs Node 22,
// which the e2e package installs (npm package node@22).
func TestConformance(t *testing.T) {
	node22, cli := needConformance(t)
	node, args := everythingStdioCommand()
	dir := t.TempDir()
	config := writeConfig(t, dir, map[string]any{
		"everything": map[string]any{"command": node, "args": args},
	}, map[string]any{"toolPrefix": "none", "mode": "direct"})
	d := startDaemonProc(t, dir, config)
	runConformance(t, node22, cli, d, dir, conformanceScenarios)
}

// needConformance returns Node 22 and the suite's CLI, skipping (or
// failing under CI) when they are not installed.
func needConformance(t *testing.T) (node22, cli string) {
	t.Helper()
	needNode(t)
	node22 = e2ePath("node_modules/node/bin/node")
	cli = e2ePath("node_modules/@modelcontextprotocol/conformance/dist/index.js")
	for _, f := range []string{node22, cli} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("conformance suite not installed (%v); install with: %s", err, npmInstallHint)
			}
			t.Skipf("conformance suite not installed (%v); install with: %s", err, npmInstallHint)
		}
	}
	return node22, cli
}

// TestConformanceForwarding runs the prompt, resource and completion
// scenarios through the daemon, in direct mode, with an upstream that
// serves the suite's fixtures.
func TestConformanceForwarding(t *testing.T) {
	node22, cli := needConformance(t)
	dir := t.TempDir()
	config := writeConfig(t, dir, map[string]any{
		"fixtures": map[string]any{"command": testServerBin, "args": []string{"conformance-upstream"}},
	}, map[string]any{"toolPrefix": "none", "mode": "direct"})
	d := startDaemonProc(t, dir, config)
	runConformance(t, node22, cli, d, dir, conformanceForwarded)
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
// one asks for them in the call's result, as TestConformanceForwarding
// shows).
func TestConformanceClientRequestsOlderUpstream(t *testing.T) {
	node22, cli := needConformance(t)
	dir := t.TempDir()
	config := writeConfig(t, dir, map[string]any{
		"fixtures": map[string]any{"command": testServerBin, "args": []string{"conformance-upstream", "2025-11-25"}},
	}, map[string]any{"toolPrefix": "none", "mode": "direct"})
	d := startDaemonProc(t, dir, config)
	runConformance(t, node22, cli, d, dir, conformanceClientRequests)
}

func runConformance(t *testing.T, node22, cli string, d *daemon, dir string, scenarios []string) {
	runConformanceCmd(t, dir, scenarios, func(sc string) []string {
		return []string{node22, cli, "server", "--url", d.mcpURL(), "--scenario", sc}
	})
}

// runConformanceCmd runs the suite's command for each scenario in a
// subtest, which passes when every check of the scenario passed.
func runConformanceCmd(t *testing.T, dir string, scenarios []string, command func(scenario string) []string) {
	passed := regexp.MustCompile(`Passed: (\d+)/(\d+), 0 failed`)
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := command(sc)
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			m := passed.FindSubmatch(out)
			if err != nil || m == nil || string(m[1]) != string(m[2]) {
				t.Errorf("scenario %s: %v\n%s", sc, err, out)
			}
		})
	}
}
