//go:build unix

package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestFailedStartSaysWhy: a server that exits at start, saying why on
// stderr, is started once per connect (not again with the protocol
// version pinned: it never read what it was sent), and `mcpgw status`
// and the mcp tool's listing say its own words first, not the wrapping
// around them nor a header with nothing under it.
func TestFailedStartSaysWhy(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	const why = "boom: GITHUB_TOKEN is not set"
	config := e2e.WriteConfig(t, dir, map[string]any{
		"gh": pidServerEntry(bin, dir, "gh", fakeupstream.EnvFailStart, why),
	}, nil)
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	c := connectGateway(t, d)

	text, isErr := c.mcp(map[string]any{"connect": "gh"})
	if !isErr || !strings.Contains(text, why) {
		t.Errorf("connect gh: %q (isError %v), want an error saying %q", text, isErr, why)
	}
	if pids := pidsStarted(t, dir, "gh"); len(pids) != 1 {
		t.Errorf("one failed connect started %d processes (%v), want 1", len(pids), pids)
	}

	out, err := exec.Command(bin, "status", "--url", d.URL).CombinedOutput()
	if err != nil {
		t.Fatalf("mcpgw status: %v\n%s", err, out)
	}
	t.Logf("mcpgw status:\n%s", out)
	var row string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "gh ") {
			row = line
		}
	}
	if !strings.Contains(row, why) {
		t.Errorf("status row of gh: %q, want its LAST ERROR to be %q\n%s", row, why, out)
	}

	list, _ := c.mcp(map[string]any{})
	t.Logf("mcp({}):\n%s", list)
	var line string
	for _, l := range strings.Split(list, "\n") {
		if strings.HasPrefix(l, "- gh: failed") {
			line = l
		}
	}
	if !strings.Contains(line, ": "+why) || strings.Contains(list, "last stderr lines:") {
		t.Errorf("mcp({}) about gh: %q, want it to say %q, and no dangling header\n%s", line, why, list)
	}
}
