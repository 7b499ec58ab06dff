package gateway

import (
	"slices"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// A reload that changes alpha's identity (an env var added, as a user
// editing mcp.json does) starts a new process under the new hash; the
// sessions' subscriptions move to it, subscribed once each before calls
// reach it, and its updates reach the session subscribed to each
// resource, and only it. At both protocols.
func TestSubscriptionsSurviveIdentityReload(t *testing.T) {
	t.Parallel()
	for _, protocol := range subscribeProtocols {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			gw, pidFile := alphaAt(t, protocol)
			hello := connectUpdates(t, gw, protocol, SessionOptions{})
			readme := connectUpdates(t, gw, protocol, SessionOptions{})
			hello.subscribe(t, "test://hello")
			readme.subscribe(t, "test://readme")
			hello.subscribe(t, "test://data.json")
			readme.subscribe(t, "test://data.json")
			touchAll := func() {
				t.Helper()
				for _, uri := range []string{"test://hello", "test://readme", "test://data.json"} {
					readme.touch(t, uri)
				}
			}
			touchAll()
			hello.waitN(t, 2)
			readme.waitN(t, 2)

			old := gw.Catalog().View().Config
			next := &registry.Config{Servers: map[string]*registry.Server{}, Settings: old.Settings}
			srv := fakeupstream.Server("alpha", map[string]string{fakeupstream.EnvPIDFile: pidFile, fakeupstream.EnvProtocols: protocol, "CHANGED": "1"})
			if srv.Hash == old.Servers["alpha"].Hash {
				t.Fatal("the changed server has the same identity")
			}
			next.Servers["alpha"] = srv
			gw.Reload(next)

			if got := readme.held(t); got != "test://data.json test://hello test://readme" {
				t.Errorf("the new process holds %q, want each resource once", got)
			}
			touchAll()
			if got, want := hello.waitN(t, 4), []string{"test://hello", "test://data.json", "test://hello", "test://data.json"}; !slices.Equal(got, want) {
				t.Errorf("the session subscribed to test://hello heard %v, want %v", got, want)
			}
			if got, want := readme.waitN(t, 4), []string{"test://readme", "test://data.json", "test://readme", "test://data.json"}; !slices.Equal(got, want) {
				t.Errorf("the session subscribed to test://readme heard %v, want %v", got, want)
			}
			if pids, err := fakeupstream.ReadPIDs(pidFile); err != nil || len(pids) != 2 {
				t.Errorf("processes %v, want the first and the reloaded one (%v)", pids, err)
			}
		})
	}
}

// A reload that removes alpha ends its sessions' subscriptions: an update
// its old upstream sends afterwards reaches nobody. The session hears
// only the update of beta's resource, which it subscribes to after.
func TestSubscriptionsEndWithRemovedServer(t *testing.T) {
	t.Parallel()
	alpha := fakeupstream.Server("alpha", nil)
	beta := fakeupstream.Server("beta", map[string]string{"BETA": "1"}) // its own identity: not alpha's upstream
	gw := New(&registry.Config{
		Servers:  map[string]*registry.Server{"alpha": alpha},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect},
	}, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "alpha")
	s := connectUpdates(t, gw, "2025-11-25", SessionOptions{})
	s.subscribe(t, "test://hello")
	s.touch(t, "test://hello")
	s.waitN(t, 1)

	gw.Reload(&registry.Config{
		Servers:  map[string]*registry.Server{"beta": beta},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect},
	})
	gw.subMu.Lock()
	left := len(gw.subs)
	gw.subMu.Unlock()
	if left != 0 {
		t.Errorf("%d resources still subscribed after alpha's removal, want none", left)
	}
	gw.onResourceUpdated(alpha, "", "test://hello") // alpha's old upstream, late
	connectNow(t, gw, "beta")
	s.subscribe(t, "test://readme")
	if text, isErr := callText(t, s.cs, "beta_touch", map[string]any{"uri": "test://readme"}); isErr {
		t.Fatalf("beta_touch: %s", text)
	}
	if got, want := s.waitFor(t, "test://readme"), []string{"test://hello", "test://readme"}; !slices.Equal(got, want) {
		t.Errorf("the session heard %v, want %v: nothing from alpha after its removal", got, want)
	}
}
