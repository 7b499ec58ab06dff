//go:build unix

package upstream

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgw/mcpgw/registry"
)

// Two names for one identity share one upstream, which keeps one name:
// looking it up under the other name makes that an alias, never a rename,
// so status and metric series stay put.
func TestSharedUpstreamKeepsItsName(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	p := newPool(t, &Options{Registerer: reg})
	user, _ := testServer(t, "github", nil)
	alias := *user
	alias.Name = "gh"

	p.Reconcile([]*registry.Server{user, &alias})
	u := p.Upstream(user)
	if p.Upstream(&alias) != u {
		t.Fatal("two names of one identity got two upstreams")
	}
	call(t, u, "echo", map[string]any{"message": "x"})
	for range 3 { // each name looked up in turn, as status and calls do
		p.Upstream(&alias)
		p.Upstream(user)
		p.Upstream(&alias)
	}
	st := u.Status()
	if st.Name != "github" || !slices.Equal(st.Aliases, []string{"gh"}) {
		t.Errorf("status name %q aliases %q, want github [gh]", st.Name, st.Aliases)
	}
	if v, ok := metricValue(t, reg, "mcpgw_upstream_state", map[string]string{"server": "github", "state": "connected"}); !ok || v != 1 {
		t.Errorf("state series for github = %v (present %v), want 1", v, ok)
	}
	if _, ok := metricValue(t, reg, "mcpgw_upstream_state", map[string]string{"server": "gh", "state": "connected"}); ok {
		t.Error("a state series exists under the alias")
	}

	// The first name leaves the configuration: the upstream, still
	// connected, takes the remaining name.
	p.Reconcile([]*registry.Server{&alias})
	st = u.Status()
	if st.Name != "gh" || len(st.Aliases) != 0 || st.State != StateConnected {
		t.Errorf("after the rename: %+v, want gh, no aliases, connected", st)
	}
	if _, ok := metricValue(t, reg, "mcpgw_upstream_state", map[string]string{"server": "github", "state": "connected"}); ok {
		t.Error("the old name's series was kept")
	}
	if v, _ := metricValue(t, reg, "mcpgw_upstream_state", map[string]string{"server": "gh", "state": "connected"}); v != 1 {
		t.Errorf("state series for gh = %v, want 1", v)
	}
}

// Each call counts under the name it came by: CallOptions.As, else the
// context's (WithName), else the upstream's own.
func TestCallsCountUnderTheirName(t *testing.T) {
	t.Parallel()
	srv, _ := testServer(t, "names", nil)
	u := newPool(t, nil).Upstream(srv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := json.RawMessage(`{"message":"hi"}`)
	for _, c := range []struct {
		ctx  context.Context
		opts *CallOptions
		tool string
	}{
		{ctx, &CallOptions{As: "alias"}, "echo"},
		{ctx, &CallOptions{As: "alias"}, "echo"},
		{WithName(ctx, "other"), &CallOptions{As: "alias"}, "echo"}, // As wins
		{WithName(ctx, "other"), nil, "echo"},
		{ctx, nil, "echo"},
		{ctx, &CallOptions{As: "alias"}, "no_such_tool"}, // counted, answered or not
	} {
		_, _ = u.CallRaw(c.ctx, c.tool, args, c.opts)
	}
	st := u.Status()
	want := map[string]int64{"alias": 4, "other": 1, srv.Name: 1}
	for name, w := range want {
		if got := st.ByName[name]; got.Calls != w {
			t.Errorf("ByName[%q] = %+v, want %d calls", name, got, w)
		}
	}
	if len(st.ByName) != len(want) {
		t.Errorf("ByName = %v, want the names %v", st.ByName, want)
	}
}
