package statuspage

import (
	"strings"
	"testing"
)

// A server with an upstream per user shows how many are connected (a
// process each for a stdio server, a connection for an HTTP one) and, to
// the user asking, their own process.
func TestPagePerUser(t *testing.T) {
	t.Parallel()
	d := &fakeHub{servers: []ServerFacts{
		{Name: "mine", Enabled: true, PerUser: true, UserUpstreams: 2, Yours: &UpstreamFacts{State: "connected", PID: 9},
			Upstream: &UpstreamFacts{Name: "mine", State: "connected", PID: 7}},
		{Name: "notyet", Enabled: true, PerUser: true, UserUpstreams: 1, Upstream: &UpstreamFacts{Name: "notyet", State: "idle"}},
		{Name: "tickets", Enabled: true, Remote: true, PerUser: true, UserUpstreams: 3, Upstream: &UpstreamFacts{Name: "tickets", State: "idle"}},
	}}
	w := serve(d, request("GET", "/", "", false))
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body.String())
	}
	body := w.Body.String()
	for _, want := range []string{
		"<small>a process per user: 2 connected; yours connected (pid 9)</small>",
		"<small>a process per user: 1 connected</small>",
		"<small>a connection per user: 3 connected</small>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page without %q", want)
		}
	}
}
