package gateway

import (
	"slices"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// teamConfig is a team-mode configuration of alpha, visible to everyone,
// and beta, visible to visibleTo.
func teamConfig(alpha, beta *registry.Server, visibleTo ...string) *registry.Config {
	b := *beta
	b.VisibleTo = visibleTo
	return &registry.Config{
		Servers:  map[string]*registry.Server{"alpha": alpha, "beta": &b},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect},
		Team:     &registry.Team{Issuer: "https://login.example.com", Audience: "mcpgw"},
		Hash:     "team-" + visibleTo[0],
	}
}

// TestVisibleToFollowsReloads: each user's sessions list what the
// configuration in force lets them see, and a reload that changes
// visibleTo changes what their open sessions list (with list_changed),
// for the users it concerns only.
func TestVisibleToFollowsReloads(t *testing.T) {
	t.Parallel()
	alpha, beta := fakeupstream.Server("alpha", nil), fakeupstream.Server("beta", nil)
	gw := New(teamConfig(alpha, beta, "group:eng"), &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "alpha")
	connectNow(t, gw, "beta")

	alice := connect(t, gw, SessionOptions{User: &identity.User{Name: "alice", Groups: []string{"eng"}}})
	bob := connect(t, gw, SessionOptions{User: &identity.User{Name: "bob"}})
	has := func(server string) func([]string) bool {
		return func(names []string) bool { return slices.Contains(names, server+"_echo") }
	}
	not := func(f func([]string) bool) func([]string) bool { return func(n []string) bool { return !f(n) } }
	alice.waitTools(t, func(n []string) bool { return has("alpha")(n) && has("beta")(n) })
	if got := bob.tools(t); !has("alpha")(got) || has("beta")(got) {
		t.Fatalf("bob lists %v, want alpha's tools alone", got)
	}
	if _, isErr := bob.call(t, "beta_echo", map[string]any{"message": "x"}); !isErr {
		t.Error("bob called beta_echo")
	}

	gw.Reload(teamConfig(alpha, beta, "user:bob"))
	bob.waitTools(t, has("beta"))
	alice.waitTools(t, not(has("beta")))
	if got, isErr := bob.call(t, "beta_echo", map[string]any{"message": "now bob"}); isErr || got != "now bob" {
		t.Errorf("bob's call of beta_echo after the reload: %q (error %v)", got, isErr)
	}
	if _, isErr := alice.call(t, "beta_echo", map[string]any{"message": "x"}); !isErr {
		t.Error("alice called beta_echo after the reload")
	}
}
