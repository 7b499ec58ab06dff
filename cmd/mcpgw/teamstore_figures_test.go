//go:build linux

package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/internal/redistest"
)

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestTeamReplicasFigures prints calls per second and the median call
// through two team-mode replicas sharing a redis-server behind a
// round-robin proxy, against one replica through the same proxy, one
// replica directly, and one without team.store: sessions of the go-sdk
// client, each calling go_echo through the mcp tool. A figure reporter,
// not a check: it runs only with MCPGW_FIGURES=1.
//
//	MCPGW_FIGURES=1 go test ./cmd/mcpgw -run TestTeamReplicasFigures -v
func TestTeamReplicasFigures(t *testing.T) {
	if os.Getenv("MCPGW_FIGURES") != "1" {
		t.Skip("set MCPGW_FIGURES=1 to print the figures")
	}
	rs := redistest.Start(t)
	iss := e2e.NewIssuer(t)
	writeTeam := func(store string) string {
		team := e2e.Team{Servers: map[string]any{"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}}}}
		if store != "" {
			team.Block = map[string]any{"store": store}
		}
		return e2e.WriteTeamConfig(t, t.TempDir(), iss, team)
	}
	shared, alone := writeTeam(rs.URL), writeTeam("")
	start := func(config string) *e2e.Daemon {
		return e2e.StartDaemon(t, t.TempDir(), config, "--allow-remote", "--log-level", "warn")
	}
	a, b, c := start(shared), start(shared), start(alone)
	two := newRoundRobin(t, a.URL, b.URL)
	one := newRoundRobin(t, a.URL)
	token := iss.Token("alice", "mcpgw")
	const calls = 2000
	for _, sessions := range []int{1, 8} {
		for _, tc := range []struct{ name, url string }{
			{"one replica, no team.store, direct", c.MCPURL()},
			{"one replica with team.store, direct", a.MCPURL()},
			{"one replica with team.store, through the proxy", one.URL + "/mcp"},
			{"two replicas with team.store, round-robin proxy", two.URL + "/mcp"},
		} {
			lat, took := measureCalls(t, tc.url, token, sessions, calls)
			slices.Sort(lat)
			t.Logf("%d session(s), %-48s %6.0f calls/s, p50 %v, p90 %v", sessions, tc.name+":",
				float64(len(lat))/took.Seconds(), lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)*9/10].Round(time.Microsecond))
		}
	}
}

// measureCalls makes n calls in all over sessions sessions at url, and
// returns each call's duration and the wall time.
func measureCalls(t *testing.T, url, token string, sessions, n int) ([]time.Duration, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var css []*mcp.ClientSession
	for range sessions {
		client := mcp.NewClient(&mcp.Implementation{Name: "figures", Version: "1"}, nil)
		tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
		cs, err := client.Connect(ctx, tr, nil)
		if err != nil {
			t.Fatalf("connecting to %s: %v", url, err)
		}
		defer cs.Close()
		css = append(css, cs)
	}
	call := func(cs *mcp.ClientSession, i int) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{
			"tool": "go_echo", "args": map[string]any{"message": fmt.Sprint("m", i)},
		}})
		if err != nil {
			return err
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); res.IsError || !ok || !strings.Contains(tc.Text, fmt.Sprint("m", i)) {
			return fmt.Errorf("call %d: %+v", i, res.Content)
		}
		return nil
	}
	for _, cs := range css { // warm: the upstream is connected, each session known to each replica
		for i := range 4 {
			if err := call(cs, i); err != nil {
				t.Fatal(err)
			}
		}
	}
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	begin := time.Now()
	for s, cs := range css {
		wg.Go(func() {
			for i := s; i < n; i += sessions {
				t0 := time.Now()
				if err := call(cs, i); err != nil {
					errs <- err
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	took := time.Since(begin)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return lat, took
}
