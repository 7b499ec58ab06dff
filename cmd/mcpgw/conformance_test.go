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

// TestConformance runs the official MCP conformance suite's server
// scenarios against a real daemon in direct mode, with server-everything
// behind it (its tools under their own names). The suite needs Node 22,
// which the e2e package installs (npm package node@22).
func TestConformance(t *testing.T) {
	needNode(t)
	node22 := e2ePath("node_modules/node/bin/node")
	cli := e2ePath("node_modules/@modelcontextprotocol/conformance/dist/index.js")
	for _, f := range []string{node22, cli} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("conformance suite not installed (%v); install with: %s", err, npmInstallHint)
			}
			t.Skipf("conformance suite not installed (%v); install with: %s", err, npmInstallHint)
		}
	}
	node, args := everythingStdioCommand()
	dir := t.TempDir()
	config := writeConfig(t, dir, map[string]any{
		"everything": map[string]any{"command": node, "args": args},
	}, map[string]any{"toolPrefix": "none", "mode": "direct"})
	d := startDaemonProc(t, dir, config)

	passed := regexp.MustCompile(`Passed: (\d+)/(\d+), 0 failed`)
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node22, cli, "server", "--url", d.mcpURL(), "--scenario", sc)
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
