//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; a gateway forwards it.

package gateway

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestHiddenServerSaysNothing: a hidden server, eager or not, is never
// started, and a log message under its identity reaches no session; the
// session's instructions, prompts and resources are the visible
// server's alone, whose log messages do arrive.
func TestHiddenServerSaysNothing(t *testing.T) {
	t.Parallel()
	env := func(instructions string) map[string]string {
		// At 2025-11-25 an upstream logs at the level setLevel gave it; at
		// 2026-07-28 only where a request's _meta asks (tool calls).
		return map[string]string{fakeupstream.EnvInstructions: instructions, fakeupstream.EnvLogRequests: "1", fakeupstream.EnvProtocols: "2025-11-25"}
	}
	alpha := fakeupstream.Server("alpha", env("ALPHA-INSTRUCTIONS"))
	hush := fakeupstream.Server("hush", env("HUSH-INSTRUCTIONS"))
	hush.ExcludeTools, hush.Lifecycle = []string{"*"}, registry.LifecycleEager
	cfg := &registry.Config{Servers: map[string]*registry.Server{"alpha": alpha, "hush": hush},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect}}
	gw := New(cfg, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "alpha")

	lc := connectLogClient(t, gw)
	ctx := context.Background()
	if got := lc.sess.InitializeResult().Instructions; strings.Contains(got, "HUSH") || !strings.Contains(got, "ALPHA-INSTRUCTIONS") {
		t.Errorf("instructions: %q", got)
	}
	if err := lc.sess.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	// A message under the hidden server's identity (as a shared or eager
	// upstream would send it) goes nowhere.
	gw.onLog(hush, "", &mcp.LoggingMessageParams{Level: "error", Data: "from hush"})
	if _, err := lc.sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha_greet", Arguments: map[string]string{"name": "Ada"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := lc.sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "hush_greet", Arguments: map[string]string{"name": "Ada"}}); err == nil {
		t.Error("the hidden server's prompt was got")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(lc.messages()) < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := lc.messages(); !slices.Equal(got, []string{"info alpha: served prompts/get"}) {
		t.Errorf("log messages: %q", got)
	}
	prompts, err := lc.sess.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts.Prompts {
		if strings.Contains(p.Name, "hush") {
			t.Errorf("prompt %s listed", p.Name)
		}
	}
	for _, st := range gw.pool.Status() {
		if st.Hash == hush.Hash {
			t.Errorf("the hidden eager server is in the pool: %+v", st)
		}
	}
}
