//go:build unix

package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/api"
)

// TestAliasCountsAndLogsItsOwn: two names for one server (the same
// command, so one process): calls made by one name are counted on its row
// of `mcpgw status` only, and `mcpgw logs` of either name shows the shared
// process's lines (logged under the first name).
func TestAliasCountsAndLogsItsOwn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := map[string]any{"command": testServerBin, "args": []string{"testserver"}}
	config := writeConfig(t, dir, map[string]any{"a": srv, "b": srv}, nil)
	d := startDaemonProc(t, dir, config)
	bin := buildMcpgw(t)
	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append(args[:1:1], append([]string{"--url", d.url}, args[1:]...)...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("mcpgw %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, msg := range []string{"one", "two"} {
		if out := cli("call", "b_echo", `{"message":"`+msg+`"}`); !strings.Contains(out, msg) {
			t.Fatalf("mcpgw call b_echo: %s", out)
		}
	}
	var r api.Report
	if err := json.Unmarshal([]byte(cli("status", "--json")), &r); err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	for _, s := range r.Servers {
		calls[s.Name] = s.Calls
		if s.Name == "b" && s.Upstream != "a" {
			t.Errorf("b runs as upstream %q, want a (the test assumes b is the alias)", s.Upstream)
		}
	}
	if calls["a"] != 0 || calls["b"] != 2 {
		t.Errorf("status counts calls a=%d b=%d, want a=0 b=2", calls["a"], calls["b"])
	}
	for _, name := range []string{"a", "b"} {
		if out := cli("logs", name); !strings.Contains(out, "upstream connected") {
			t.Errorf("mcpgw logs %s lacks the shared process's connect line:\n%s", name, out)
		}
	}
}
