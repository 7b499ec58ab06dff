package gateway

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// coldGateway starts a gateway with an empty cache and discovery on: each
// server named in delays starts after that many milliseconds; failing
// servers exit at once with the given stderr line.
func coldGateway(t *testing.T, settings registry.Settings, delays map[string]int, failing map[string]string) *Hub {
	t.Helper()
	cfg := &registry.Config{Servers: map[string]*registry.Server{}, Settings: settings}
	if cfg.Settings.ToolPrefix == "" {
		cfg.Settings.ToolPrefix = registry.PrefixServer
	}
	if cfg.Settings.DiscoveryTimeout == 0 {
		cfg.Settings.DiscoveryTimeout = 10 * time.Second
	}
	for name, ms := range delays {
		cfg.Servers[name] = fakeupstream.Server(name, map[string]string{fakeupstream.EnvStartDelay: itoa(ms)})
	}
	for name, msg := range failing {
		cfg.Servers[name] = fakeupstream.Server(name, map[string]string{fakeupstream.EnvFailStart: msg})
	}
	gw := New(cfg, nil)
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	return gw
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestColdSearchWaitsForDiscovery(t *testing.T) {
	t.Parallel()
	gw := coldGateway(t, registry.Settings{}, map[string]int{"slow": 400, "fast": 0},
		map[string]string{"broken": "fatal: GITHUB_TOKEN is not set"})
	c := connect(t, gw, SessionOptions{})
	text, isErr := c.call(t, "mcp", map[string]any{"search": "echo"})
	if isErr {
		t.Fatalf("search failed: %s", text)
	}
	for _, want := range []string{"fast_echo - ", "slow_echo - ", "Not available: broken:", "GITHUB_TOKEN is not set"} {
		if !strings.Contains(text, want) {
			t.Errorf("cold search answer lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Still starting") {
		t.Errorf("cold search answered before the slow server was discovered:\n%s", text)
	}
}

func TestColdAnswerIsBounded(t *testing.T) {
	t.Parallel()
	gw := coldGateway(t, registry.Settings{DiscoveryTimeout: 300 * time.Millisecond}, map[string]int{"glacial": 30000, "fast": 0}, nil)
	connectNow(t, gw, "fast") // however slow the machine, only glacial is pending
	c := connect(t, gw, SessionOptions{})
	text, _ := c.call(t, "mcp", map[string]any{"search": "echo"})
	if !strings.Contains(text, "fast_echo") || !strings.Contains(text, "Still starting, tools not known yet: glacial") {
		t.Errorf("bounded cold search:\n%s", text)
	}
}

func TestColdToolSearchActivates(t *testing.T) {
	t.Parallel()
	gw := coldGateway(t, registry.Settings{Mode: ModeToolSearch}, map[string]int{"everything": 300}, nil)
	c := connect(t, gw, SessionOptions{})
	// The description built before discovery names the server without a
	// count; once discovered it is rebuilt with the count.
	text, isErr := c.call(t, "ToolSearch", map[string]any{"query": "select:everything_echo"})
	if isErr || !strings.Contains(text, "Activated 1 tool") {
		t.Fatalf("cold ToolSearch: %q (error %v)", text, isErr)
	}
	if got := c.tools(t); !slices.Contains(got, "everything_echo") {
		t.Errorf("tools after activation: %v", got)
	}
	res, err := c.sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sv, _ := gw.Catalog().View().Server("everything")
	for _, tool := range res.Tools {
		if tool.Name == surface.ToolSearchName && !strings.Contains(tool.Description, "everything ("+itoa(len(sv.Tools))+")") {
			t.Errorf("ToolSearch description not rebuilt after discovery:\n%s", tool.Description)
		}
	}
}

// A ToolSearch session that has activated nothing lists ToolSearch at
// once, however long its servers take: there is nothing of theirs to
// list yet, and a client's connect timeout must not run out on it.
func TestColdToolSearchListAnswersAtOnce(t *testing.T) {
	t.Parallel()
	gw := coldGateway(t, registry.Settings{Mode: ModeToolSearch, DiscoveryTimeout: time.Hour}, map[string]int{"glacial": 3_600_000}, nil)
	c := connect(t, gw, SessionOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := c.sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list while glacial is being discovered: %v", err)
	}
	i := slices.IndexFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == surface.ToolSearchName })
	if i < 0 || !strings.Contains(res.Tools[i].Description, "glacial") || !slices.Equal(toolNames(res.Tools), []string{surface.ToolSearchName, surface.ScriptToolName}) {
		t.Errorf("first tools/list of a cold ToolSearch session: %v", toolNames(res.Tools))
	}
	if len(gw.pendingFor(gw.Catalog().View())) != 1 {
		t.Errorf("glacial is no longer being discovered: the list cannot have answered before it")
	}
}

// A client that lists tools once, right after initialize, sees them.
func TestColdDirectListWaits(t *testing.T) {
	t.Parallel()
	gw := coldGateway(t, registry.Settings{Mode: ModeDirect}, map[string]int{"a": 300, "b": 0}, nil)
	c := connect(t, gw, SessionOptions{})
	got := c.tools(t)
	sa, _ := gw.Catalog().View().Server("a")
	// Its tools, not its resources (those are resources, in direct mode).
	if len(sa.Tools) < len(fakeupstream.ToolNames) || len(got) != 2*len(fakeupstream.ToolNames) || !slices.Contains(got, "a_echo") || !slices.Contains(got, "b_echo") {
		t.Errorf("first tools/list of a cold direct session: %v", got)
	}
}

// A tools/list answers with the catalogue as it is when the list is asked
// for, also when a listing reached the catalogue but not yet the session's
// tools: the discovery that published it had already ended, so nothing
// was pending to wait for (the real Pi 1.5 listed no tools this way
// under load, once in a few starts).
func TestDirectListHasWhatTheCatalogueHas(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeDirect}, "alpha")
	c := connect(t, gw, SessionOptions{})
	if got := c.tools(t); len(got) != 0 {
		t.Fatalf("tools before alpha is known: %v", got)
	}
	// The listing reaches the catalogue the way a connection's does, but
	// the sessions are not told of it (as when it lands between a
	// session's creation and its joining the daemon's list).
	srv := gw.Catalog().View().Config.Servers["alpha"]
	if _, err := gw.Catalog().Publish(srv, &registry.Listing{Source: registry.SourceLive, Tools: []*mcp.Tool{
		{Name: "echo", InputSchema: map[string]any{"type": "object"}},
	}}); err != nil {
		t.Fatal(err)
	}
	if got := c.tools(t); !slices.Equal(got, []string{"alpha_echo"}) {
		t.Errorf("tools/list after the listing was published: %v, want [alpha_echo]", got)
	}
}

// A call of a tool whose server is still being discovered waits for it.
func TestColdCallOfUnknownNameWaits(t *testing.T) {
	t.Parallel()
	gw := coldGateway(t, registry.Settings{Mode: ModeDirect}, map[string]int{"late": 400}, nil)
	c := connect(t, gw, SessionOptions{})
	res, err := c.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "late_echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) == 0 || res.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Errorf("late_echo = %+v", res.Content)
	}
}

// The call-duration metric counts what the caller waited for: here the
// discovery of the server before the call itself. The server answers
// only once the test opens its gate, which it does a while after the call
// is in the hub; the call waited at least from when it was seen there to
// the gate's opening, whatever the machine's load.
func TestCallDurationCountsTheWait(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	cfg := &registry.Config{
		Servers:  map[string]*registry.Server{"a": fakeupstream.Server("a", map[string]string{fakeupstream.EnvStartGate: gate})},
		Settings: registry.Settings{Mode: ModeProxy, ToolPrefix: registry.PrefixServer, DiscoveryTimeout: 2 * waitBound},
	}
	gw := New(cfg, nil)
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	c := connect(t, gw, SessionOptions{})
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := c.sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp",
			Arguments: map[string]any{"tool": "a_echo", "args": map[string]any{"message": "hi"}}})
		done <- answer{res, err}
	}()
	inHub := func() bool {
		for _, ss := range gw.sessionList() {
			if ss.inFlight.Load() > 0 {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(waitBound)
	for !inHub() {
		if time.Now().After(deadline) {
			t.Fatal("the call never reached the hub")
		}
		time.Sleep(5 * time.Millisecond)
	}
	seen := time.Now()
	time.Sleep(300 * time.Millisecond) // a wait the call cannot have skipped: the server has not answered
	opened := time.Now()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var ans answer
	select {
	case ans = <-done:
	case <-time.After(2 * waitBound):
		t.Fatal("the call never ended")
	}
	if ans.err != nil || ans.res.IsError || len(ans.res.Content) == 0 || ans.res.Content[0].(*mcp.TextContent).Text != "hi" {
		t.Fatalf("call = %+v, %v", ans.res, ans.err)
	}
	var m dto.Metric
	if err := gw.metrics.callSeconds.WithLabelValues("a").(prometheus.Histogram).Write(&m); err != nil {
		t.Fatal(err)
	}
	waited := opened.Sub(seen).Seconds()
	if n, sum := m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum(); n != 1 || sum < waited {
		t.Errorf("call duration: %d observations, %.3fs; want 1 of at least the %.3fs the call waited", n, sum, waited)
	}
}

func toolNames(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}
