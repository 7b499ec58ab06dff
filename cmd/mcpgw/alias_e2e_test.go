//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestAliasCountsAndLogsItsOwn: two names for one server (the same
// command, so one process): calls made by one name are counted on its row
// of `mcpgw status` only, and `mcpgw logs` of either name shows the shared
// process's lines (logged under the first name).
func TestAliasCountsAndLogsItsOwn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}
	config := e2e.WriteConfig(t, dir, map[string]any{"a": srv, "b": srv}, nil)
	d := e2e.StartDaemon(t, dir, config)
	bin := e2e.BuildMcpgw(t)
	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append(args[:1:1], append([]string{"--url", d.URL}, args[1:]...)...)...).CombinedOutput()
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

// TestStatusCountsToolsAsTheConnectLog: a server that lists resources
// besides its tools: `mcpgw status` counts its tools as the daemon's
// connect line does, and its resources apart (the mcp tool's readers of
// them are not tools the server lists).
func TestStatusCountsToolsAsTheConnectLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}, nil)
	d := e2e.StartDaemon(t, dir, config)
	bin := e2e.BuildMcpgw(t)
	if out, err := exec.Command(bin, "connect", "--url", d.URL, "go").CombinedOutput(); err != nil {
		t.Fatalf("mcpgw connect go: %v\n%s", err, out)
	}
	var logged, loggedRes string
	e2e.PollUntil(t, "the connect line", func() bool {
		for _, l := range strings.Split(d.Proc.Output.String(), "\n") {
			if strings.Contains(l, `msg="upstream connected"`) && strings.Contains(l, "server=go") {
				_, after, _ := strings.Cut(l, " tools=")
				logged, _, _ = strings.Cut(after, " ")
				_, after, _ = strings.Cut(l, " resources=")
				loggedRes, _, _ = strings.Cut(after, " ")
				return true
			}
		}
		return false
	})
	out, err := exec.Command(bin, "status", "--json", "--url", d.URL).Output()
	if err != nil {
		t.Fatal(err)
	}
	var r api.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Servers) != 1 {
		t.Fatalf("status lists %d servers", len(r.Servers))
	}
	s := r.Servers[0]
	if got := fmt.Sprint(s.Tools); got != logged || fmt.Sprint(r.Tools) != logged {
		t.Errorf("status counts %d tools (%d in all), the connect line tools=%s", s.Tools, r.Tools, logged)
	}
	if got := fmt.Sprint(s.Resources); got != loggedRes || s.Resources != len(fakeupstream.ResourceURIs) {
		t.Errorf("status counts %d resources, the connect line resources=%s, the server lists %d", s.Resources, loggedRes, len(fakeupstream.ResourceURIs))
	}
	text, err := exec.Command(bin, "status", "--url", d.URL).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), ", "+logged+" tools\n") {
		t.Errorf("mcpgw status does not say %s tools:\n%s", logged, text)
	}
}
