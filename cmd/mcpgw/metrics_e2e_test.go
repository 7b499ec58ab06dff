//go:build unix

package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestMetricsFromTheFirstScrape: a daemon that has done nothing yet shows
// every series whose labels are known in advance at zero — approvals for
// each server that has approveTools, discovery waits, client requests —
// and spells needs_auth one way in states and connect outcomes.
func TestMetricsFromTheFirstScrape(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"guarded": e2e.PolicyServer(map[string]any{"approveTools": []string{"delete_*"}}),
		"plain":   map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
	}, nil)
	d := e2e.StartDaemon(t, dir, config)
	resp, err := http.Get(d.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	var want []string
	for _, decision := range []string{"allowed", "allowed_tool", "allowed_server", "denied", "timeout", "refused"} {
		want = append(want, `mcpgw_approvals_total{decision="`+decision+`",server="guarded"} 0`)
	}
	want = append(want,
		`mcpgw_discovery_wait_seconds_count{outcome="complete"} 0`,
		`mcpgw_discovery_wait_seconds_count{outcome="timeout"} 0`,
		`mcpgw_client_requests_total{kind="elicitation"} 0`,
		`mcpgw_client_requests_total{kind="sampling"} 0`,
		`mcpgw_upstream_state{server="plain",state="needs_auth"} 0`,
		`mcpgw_upstream_connects_total{outcome="needs_auth",server="plain"} 0`,
	)
	for _, line := range want {
		if !strings.Contains(text, "\n"+line+"\n") {
			t.Errorf("/metrics lacks %s", line)
		}
	}
	if strings.Contains(text, `server="plain",decision`) || strings.Contains(text, `mcpgw_approvals_total{decision="allowed",server="plain"}`) {
		t.Errorf("/metrics has approval series for plain, which has no approveTools")
	}
	if strings.Contains(text, "needs-auth") {
		t.Errorf("/metrics spells needs-auth beside needs_auth")
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", text)
	}
}
