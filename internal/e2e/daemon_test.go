//go:build unix

package e2e

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestStartDaemonPortTaken: when the port StartDaemon picked is taken
// before the daemon binds it, by a program that answers HTTP, the daemon
// is started again on another port, and the Daemon's URL is the daemon's,
// not that program's.
func TestStartDaemonPortTaken(t *testing.T) {
	other, picks := takeFirstPick(t)

	dir := t.TempDir()
	d := StartDaemon(t, dir, WriteConfig(t, dir, map[string]any{}, nil))
	if *picks != 2 {
		t.Errorf("StartDaemon picked %d ports, want 2", *picks)
	}
	if d.URL == other.URL {
		t.Fatalf("the Daemon's URL is the other program's, %s", d.URL)
	}
	resp, err := http.Get(d.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcpgw-Version") == "" {
		t.Errorf("GET %s/healthz: %s, Mcpgw-Version %q; want mcpgw's 200", d.URL, resp.Status, resp.Header.Get("Mcpgw-Version"))
	}
	if out := d.Proc.Output.String(); !strings.Contains(out, "mcpgw serving") {
		t.Errorf("the daemon's log has no \"mcpgw serving\":\n%s", out)
	}
}

// TestStartEverythingPortTaken: when the port picked for server-everything
// is taken before it binds it, by a program that answers HTTP (here an
// mcpgw-like 404), it is started again on another port, and the URL
// returned is its own: an MCP client finds its echo tool there.
func TestStartEverythingPortTaken(t *testing.T) {
	NeedNode(t)
	other, picks := takeFirstPick(t)

	mcpURL := StartEverything(t, "streamableHttp")
	if *picks != 2 || strings.HasPrefix(mcpURL, other.URL) {
		t.Fatalf("picked %d ports, URL %s (the other program's is %s)", *picks, mcpURL, other.URL)
	}
	r := RunClient(t, Target{URL: mcpURL}, []Step{{Op: "listTools"}})
	if !strings.Contains(string(r[0].Result), `"echo"`) {
		t.Errorf("listTools at %s: %s", mcpURL, r[0].Result)
	}
}

// takeFirstPick makes the harness's first port pick one already held by
// another program answering HTTP (404), and counts the picks. The test
// must not be parallel: pickPort is the package's.
func takeFirstPick(t *testing.T) (other *httptest.Server, picks *int) {
	other = httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	u, _ := url.Parse(other.URL)
	taken, _ := strconv.Atoi(u.Port())
	picks = new(int)
	pickPort = func(t testing.TB) int {
		*picks++
		if *picks == 1 {
			return taken
		}
		return FreePort(t)
	}
	t.Cleanup(func() { pickPort = FreePort })
	return other, picks
}
