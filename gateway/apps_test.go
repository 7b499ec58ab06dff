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

// connectUI connects a client that declares MCP Apps.
func connectUI(t *testing.T, gw *Hub, opts SessionOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gw.ServeTransport(ctx, st, opts)
	}()
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(registry.UIExtension, map[string]any{"mimeTypes": []string{registry.UIMimeType}})
	before := len(gw.sessionList())
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "apphost", Version: "1"}, &mcp.ClientOptions{Capabilities: caps}).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(); cancel(); <-done })
	for deadline := time.Now().Add(5 * time.Second); len(gw.sessionList()) <= before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return sess
}

// TestMCPApps: two servers offer an app under the same ui:// URI. A host
// that declares the extension lists both servers' tools with each tool's
// resourceUri pointing at its own server's UI, reads both UIs by those
// URIs though neither server lists them, and may call the app-only tool;
// a client without the extension, and every model-facing surface, never
// see the app-only tool.
func TestMCPApps(t *testing.T) {
	t.Parallel()
	cfg := &registry.Config{Servers: map[string]*registry.Server{
		"alpha": fakeupstream.Server("alpha", map[string]string{fakeupstream.EnvApps: "alpha"}),
		"beta":  fakeupstream.Server("beta", map[string]string{fakeupstream.EnvApps: "beta"}),
	}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer}}
	gw := New(cfg, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	connectNow(t, gw, "alpha")
	connectNow(t, gw, "beta")
	ctx := context.Background()

	host := connectUI(t, gw, SessionOptions{Mode: ModeDirect})
	res, err := host.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	uis := map[string]string{}
	for _, tool := range res.Tools {
		if ui, ok := tool.Meta["ui"].(map[string]any); ok {
			uis[tool.Name], _ = ui["resourceUri"].(string)
		}
	}
	want := map[string]string{
		"alpha_show_chart": "ui://chart/app.html", "alpha_chart_points": "ui://chart/app.html",
		"beta_show_chart": "mcpgw://beta/ui://chart/app.html", "beta_chart_points": "mcpgw://beta/ui://chart/app.html",
	}
	for name, uri := range want {
		if uis[name] != uri {
			t.Errorf("%s's resourceUri = %q, want %q", name, uis[name], uri)
		}
	}
	for server, uri := range map[string]string{"alpha": want["alpha_show_chart"], "beta": want["beta_show_chart"]} {
		rr, err := host.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "chart of "+server) || rr.Contents[0].URI != uri {
			t.Errorf("reading %s: %v %+v", uri, err, rr)
		}
	}
	lr, err := host.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lr.Resources {
		if strings.Contains(r.URI, "ui://") {
			t.Errorf("an unlisted UI resource is listed: %s", r.URI)
		}
	}
	if r, err := host.CallTool(ctx, &mcp.CallToolParams{Name: "beta_chart_points"}); err != nil || r.IsError {
		t.Errorf("the app calls its tool: %v %+v", err, r)
	}

	plain := connect(t, gw, SessionOptions{Mode: ModeDirect})
	if names := plain.tools(t); slices.Contains(names, "alpha_chart_points") || !slices.Contains(names, "alpha_show_chart") {
		t.Errorf("a client without the extension lists %v", names)
	}
	proxy := connect(t, gw, SessionOptions{})
	for _, args := range []map[string]any{{"search": "chart points"}, {"server": "alpha"}, {"describe": "alpha_chart_points"}} {
		if text, _ := proxy.call(t, "mcp", args); strings.Contains(text, "alpha_chart_points -") || strings.Contains(text, "(server alpha, tool chart_points)") {
			t.Errorf("mcp(%v) shows the app-only tool:\n%s", args, text)
		}
	}
	if text, isErr := proxy.call(t, "mcp", map[string]any{"tool": "alpha_chart_points"}); !isErr || !strings.Contains(text, "Unknown tool") {
		t.Errorf("the model calls an app-only tool: %q", text)
	}
}
