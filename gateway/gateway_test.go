package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/gateway/transport"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream/testmain"
)

// The test binary doubles as a real stdio upstream (testmain.Run). Its
// children (upstreams, the pool's reaper) are this binary: under -race
// each would otherwise sleep a second at exit, and closing a gateway
// waits for its upstreams to exit.
func TestMain(m *testing.M) {
	if gorace := os.Getenv("GORACE"); !strings.Contains(gorace, "atexit_sleep_ms") {
		os.Setenv("GORACE", strings.TrimSpace(gorace+" atexit_sleep_ms=0"))
	}
	testmain.Run(m)
}

// newTestGateway starts a gateway whose servers run the test binary as the
// test server, each appending its PID to its own file.
func newTestGateway(t *testing.T, settings registry.Settings, names ...string) (*Hub, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	cfg := &registry.Config{Servers: map[string]*registry.Server{}, Settings: settings}
	if cfg.Settings.ToolPrefix == "" {
		cfg.Settings.ToolPrefix = registry.PrefixServer
	}
	pidfiles := map[string]string{}
	for _, name := range names {
		pidfiles[name] = filepath.Join(dir, name+".pids")
		srv := fakeupstream.Server(name, map[string]string{fakeupstream.EnvPIDFile: pidfiles[name]})
		cfg.Servers[name] = srv
	}
	gw := New(cfg, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	return gw, pidfiles
}

// client connects an in-memory client session to gw.
type client struct {
	sess    *mcp.ClientSession
	mu      sync.Mutex
	changed int
	notify  chan struct{}
	// id and secret are what the daemon told a shim of this session
	// (ShimIdentity).
	id, secret string
}

func connect(t *testing.T, gw *Hub, opts SessionOptions) *client {
	t.Helper()
	return connectAs(t, gw, opts, "test")
}

// connectAs is connect with the client's implementation name.
func connectAs(t *testing.T, gw *Hub, opts SessionOptions, clientName string) *client {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	c := &client{notify: make(chan struct{}, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gw.ServeSession(ctx, st, opts, func(ss transport.Session) error {
			c.id, c.secret = ss.ShimIdentity()
			return nil
		})
	}()
	mc := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.mu.Lock()
			c.changed++
			c.mu.Unlock()
			c.notify <- struct{}{}
		},
	})
	before := len(gw.sessionList())
	sess, err := mc.Connect(context.Background(), ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	c.sess = sess
	t.Cleanup(func() { sess.Close(); cancel(); <-done })
	// Connect returns once the client has sent notifications/initialized;
	// the gateway registers the session when it has read it.
	for deadline := time.Now().Add(5 * time.Second); len(gw.sessionList()) <= before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return c
}

func (c *client) tools(t *testing.T) []string {
	t.Helper()
	res, err := c.sess.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func (c *client) call(t *testing.T, name string, args any) (string, bool) {
	t.Helper()
	return callText(t, c.sess, name, args)
}

func (c *client) waitListChanged(t *testing.T) {
	t.Helper()
	select {
	case <-c.notify:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
}

// waitTools waits, through list_changed notifications, until the
// session's tools satisfy ok: the SDK announces changes 10 ms after they
// happen, so on a loaded machine one sync may reach the client in two
// goes.
func (c *client) waitTools(t *testing.T, ok func([]string) bool) {
	t.Helper()
	for got := c.tools(t); !ok(got); got = c.tools(t) {
		select {
		case <-c.notify:
		case <-time.After(10 * time.Second):
			t.Fatalf("the session lists %v", got)
		}
	}
}

func pidCount(t *testing.T, path string) int {
	t.Helper()
	pids, err := fakeupstream.ReadPIDs(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(pids)
}

func TestProxyMode(t *testing.T) {
	t.Parallel()
	gw, pids := newTestGateway(t, registry.Settings{}, "alpha", "beta")
	c := connect(t, gw, SessionOptions{})
	if got := c.tools(t); !slices.Equal(got, []string{"mcp"}) {
		t.Fatalf("proxy session lists %v, want [mcp]", got)
	}
	text, _ := c.call(t, "mcp", map[string]any{})
	if want := "MCP: 0/2 servers, 0 tools\n- alpha: not connected\n- beta: not connected"; text != want {
		t.Errorf("status =\n%s\nwant\n%s", text, want)
	}
	text, isErr := c.call(t, "mcp", map[string]any{"tool": "alpha_echo", "args": map[string]any{"message": "hello"}})
	if isErr || text != "hello" {
		t.Errorf("call alpha_echo = %q (error %v)", text, isErr)
	}
	text, isErr = c.call(t, "mcp", map[string]any{"tool": "alpha_add", "args": `{"a":2,"b":3}`})
	if isErr || !strings.Contains(text, "5") {
		t.Errorf("call alpha_add with string args = %q (error %v)", text, isErr)
	}
	text, _ = c.call(t, "mcp", map[string]any{})
	if !strings.HasPrefix(text, "MCP: 1/2 servers, ") || !strings.Contains(text, "- alpha: connected, ") {
		t.Errorf("status after call =\n%s", text)
	}
	if n := pidCount(t, pids["beta"]); n != 0 {
		t.Errorf("beta started %d times without being used", n)
	}
	text, _ = c.call(t, "mcp", map[string]any{"search": "add numbers"})
	if !strings.Contains(text, "alpha_add") {
		t.Errorf("search = %q", text)
	}
	text, isErr = c.call(t, "mcp", map[string]any{"tool": "alpha_read_hello"})
	if isErr || text == "" {
		t.Errorf("resource tool = %q (error %v)", text, isErr)
	}
	text, isErr = c.call(t, "mcp", map[string]any{"tool": "alpha_fail", "args": map[string]any{"message": "kaput"}})
	if !isErr || !strings.Contains(text, "kaput") || !strings.Contains(text, "Parameters of alpha_fail: {\n  message: string") {
		t.Errorf("tool error = %q (error %v)", text, isErr)
	}
	text, isErr = c.call(t, "mcp", map[string]any{"tool": "alpha_ehco"})
	if !isErr || !strings.Contains(text, "Did you mean: alpha_echo") {
		t.Errorf("unknown tool = %q", text)
	}
	text, isErr = c.call(t, "mcp", map[string]any{"connect": "beta"})
	if isErr || !strings.HasPrefix(text, "beta: connected, ") || !strings.Contains(text, "\nbeta_echo - ") {
		t.Errorf("connect beta = %q (error %v)", text, isErr)
	}
	text, isErr = c.call(t, "mcp", map[string]any{"name": "alpha_echo"})
	if !isErr || !strings.Contains(text, `Unknown argument(s) "name"`) {
		t.Errorf("unknown argument = %q", text)
	}
	// A tool the session does not list, called directly.
	text, isErr = c.call(t, "alpha_echo", map[string]any{"message": "x"})
	if !isErr || !strings.Contains(text, `mcp({tool:"alpha_echo"`) {
		t.Errorf("direct call in proxy mode = %q", text)
	}
}

func TestToolSearchSessionsAreIndependent(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeToolSearch}, "alpha")
	// Fill the catalogue first, as a warm cache would.
	if _, err := gw.Pool().Upstream(gw.Catalog().View().Config.Servers["alpha"]).Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := connect(t, gw, SessionOptions{})
	b := connect(t, gw, SessionOptions{})
	if got := a.tools(t); !slices.Equal(got, []string{"ToolSearch", "mcp_script"}) {
		t.Fatalf("new toolsearch session lists %v", got)
	}
	text, isErr := a.call(t, "ToolSearch", map[string]any{"query": "select:alpha_echo,alpha_ech0"})
	if isErr || !strings.Contains(text, "Activated 1 tool") || !strings.Contains(text, `Unknown tool "alpha_ech0". Did you mean: alpha_echo`) {
		t.Errorf("select = %q (error %v)", text, isErr)
	}
	a.waitListChanged(t)
	if got := a.tools(t); !slices.Equal(got, []string{"ToolSearch", "alpha_echo", "mcp_script"}) {
		t.Errorf("after select A lists %v", got)
	}
	text, isErr = a.call(t, "alpha_echo", map[string]any{"message": "activated"})
	if isErr || text != "activated" {
		t.Errorf("A calls alpha_echo = %q (error %v)", text, isErr)
	}
	text, _ = a.call(t, "ToolSearch", map[string]any{"query": "add two numbers", "max_results": 2})
	if !strings.Contains(text, "alpha_add") {
		t.Errorf("keyword search = %q", text)
	}
	a.waitListChanged(t)

	if got := b.tools(t); !slices.Equal(got, []string{"ToolSearch", "mcp_script"}) {
		t.Errorf("B lists %v, want only ToolSearch", got)
	}
	text, isErr = b.call(t, "alpha_echo", map[string]any{"message": "x"})
	if !isErr || !strings.Contains(text, "not active in this session") {
		t.Errorf("B calls A's tool = %q (error %v)", text, isErr)
	}
}

func TestDirectModeFromCacheWithoutConnecting(t *testing.T) {
	t.Parallel()
	gw, pids := newTestGateway(t, registry.Settings{Mode: ModeDirect}, "alpha")
	srv := gw.Catalog().View().Config.Servers["alpha"]
	gw.Catalog().SetListing(srv.Hash, &registry.Listing{Source: registry.SourceCache, Tools: []*mcp.Tool{
		{Name: "echo", Description: "Returns the message.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}}},
		{Name: "pid", Description: "Returns the PID.", InputSchema: map[string]any{}},
	}})
	c := connect(t, gw, SessionOptions{})
	if got := c.tools(t); !slices.Equal(got, []string{"alpha_echo", "alpha_pid"}) {
		t.Fatalf("direct session lists %v", got)
	}
	if n := pidCount(t, pids["alpha"]); n != 0 {
		t.Fatalf("listing tools started %d upstream processes, want 0", n)
	}
	text, isErr := c.call(t, "alpha_echo", map[string]any{"message": "lazy"})
	if isErr || text != "lazy" {
		t.Errorf("alpha_echo = %q (error %v)", text, isErr)
	}
	if n := pidCount(t, pids["alpha"]); n != 1 {
		t.Errorf("calling started %d upstream processes, want 1", n)
	}
	// The live listing replaced the cached two tools: the session hears of
	// it (perhaps more than once: the SDK sends list_changed 10 ms after a
	// change, and on a loaded machine the tools may arrive in two goes).
	c.waitListChanged(t)
	c.waitTools(t, func(got []string) bool { return len(got) > 2 && slices.Contains(got, "alpha_add") })
}

func TestDirectToolsInProxyMode(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{}, "alpha", "beta")
	for _, name := range []string{"alpha", "beta"} {
		srv := gw.Catalog().View().Config.Servers[name]
		gw.Catalog().SetListing(srv.Hash, &registry.Listing{Source: registry.SourceCache, Tools: []*mcp.Tool{
			{Name: "echo", InputSchema: map[string]any{"type": "object"}}, {Name: "add", InputSchema: map[string]any{"type": "object"}},
		}})
	}
	tests := []struct {
		spec string
		want []string
	}{
		{"", []string{"mcp"}},
		{"alpha", []string{"alpha_add", "alpha_echo", "mcp"}},
		{"beta/echo,alpha/add", []string{"alpha_add", "beta_echo", "mcp"}},
		{"*", []string{"alpha_add", "alpha_echo", "beta_add", "beta_echo", "mcp"}},
		{"__none__ *", []string{"mcp"}},
	}
	for _, tt := range tests {
		c := connect(t, gw, SessionOptions{DirectTools: tt.spec})
		if got := c.tools(t); !slices.Equal(got, tt.want) {
			t.Errorf("MCP_DIRECT_TOOLS=%q lists %v, want %v", tt.spec, got, tt.want)
		}
	}
}

func TestToolSearchDescription(t *testing.T) {
	t.Parallel()
	cfg := &registry.Config{Servers: map[string]*registry.Server{}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer}}
	c := registry.NewCatalog(cfg)
	for i := range 70 {
		name := fmt.Sprintf("server%02d", i)
		cfg.Servers[name] = &registry.Server{Name: name, Enabled: true, Hash: name}
	}
	c.SetConfig(cfg)
	for i := range 70 {
		name := fmt.Sprintf("server%02d", i)
		var tools []*mcp.Tool
		for j := range 30 {
			tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("tool_number_%d", j), Description: "x"})
		}
		c.SetListing(name, &registry.Listing{Tools: tools, Source: registry.SourceCache})
	}
	d1 := surface.ToolSearchDescription(c.View())
	d2 := surface.ToolSearchDescription(registry.NewCatalog(cfg).View())
	if len(d1) > surface.ToolSearchBudget {
		t.Errorf("ToolSearch description for 70 servers is %d bytes, want ≤ %d", len(d1), surface.ToolSearchBudget)
	}
	if !strings.Contains(d1, "server00 (30)") {
		t.Errorf("description lacks server counts:\n%s", d1)
	}
	t.Logf("ToolSearch description, 70 servers × 30 tools: %d bytes", len(d1))
	if d1 == d2 {
		t.Error("description does not reflect listings")
	}
	// Byte-identical for the same catalogue, whatever the order of updates.
	c2 := registry.NewCatalog(cfg)
	for i := 69; i >= 0; i-- {
		name := fmt.Sprintf("server%02d", i)
		var tools []*mcp.Tool
		for j := range 30 {
			tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("tool_number_%d", j), Description: "x"})
		}
		c2.SetListing(name, &registry.Listing{Tools: tools, Source: registry.SourceCache})
	}
	if d3 := surface.ToolSearchDescription(c2.View()); d3 != d1 {
		t.Errorf("description differs for the same catalogue:\n%s\n---\n%s", d1, d3)
	}
	data, _ := json.Marshal(surface.ToolSearchTool(c.View()))
	t.Logf("ToolSearch tool definition: %d bytes", len(data))
}

// TestProgressForwarded: an upstream's progress notifications for a call
// reach the client that asked for progress, under its own token, in proxy
// and direct mode.
func TestProgressForwarded(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{}, "alpha")
	for _, mode := range []Mode{ModeProxy, ModeDirect} {
		t.Run(string(mode), func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			ct, st := mcp.NewInMemoryTransports()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = gw.ServeTransport(ctx, st, SessionOptions{Mode: mode}) }()
			mc := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					got = append(got, fmt.Sprintf("%v %v/%v %s", req.Params.ProgressToken, req.Params.Progress, req.Params.Total, req.Params.Message))
					mu.Unlock()
				},
			})
			sess, err := mc.Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			params := &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": "alpha_sleep", "args": map[string]any{"ms": 400}}}
			if mode == ModeDirect {
				if _, err := sess.ListTools(ctx, nil); err != nil {
					t.Fatal(err)
				}
				params = &mcp.CallToolParams{Name: "alpha_sleep", Arguments: map[string]any{"ms": 400}}
			}
			params.SetProgressToken("tok-" + string(mode))
			res, err := sess.CallTool(ctx, params)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			want := []string{"tok-" + string(mode) + " 1/4 step 1", "tok-" + string(mode) + " 2/4 step 2", "tok-" + string(mode) + " 3/4 step 3", "tok-" + string(mode) + " 4/4 step 4"}
			deadline := time.Now().Add(5 * time.Second)
			for {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n >= len(want)-1 || time.Now().After(deadline) {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			// The last notification races the result, after which the
			// client may no longer be told of progress: it may be dropped.
			if len(got) < len(want)-1 || !slices.Equal(got, want[:len(got)]) {
				t.Errorf("progress = %q, want %q (the last may be missing)", got, want)
			}
		})
	}
}

// TestToolSearchDescriptionMetatool: the description for the MetaTool
// benchmark catalogue (199 tools on one server) stays within budget.
func TestToolSearchDescriptionMetatool(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "shared", "bench", "toolsearch", "metatool", "catalog.json"))
	if err != nil {
		t.Skipf("benchmark data not available: %v", err)
	}
	var f struct {
		Servers map[string]struct {
			Tools []*mcp.Tool `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	cfg := &registry.Config{Servers: map[string]*registry.Server{}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer}}
	listings := map[string]*registry.Listing{}
	for name, s := range f.Servers {
		cfg.Servers[name] = &registry.Server{Name: name, Enabled: true, Hash: name}
		listings[name] = &registry.Listing{Tools: s.Tools, Source: registry.SourceCache}
	}
	c := registry.NewCatalog(cfg)
	v := c.SetListings(listings)
	d := surface.ToolSearchDescription(v)
	if len(d) > surface.ToolSearchBudget || !strings.Contains(d, "metatool (199)") {
		t.Errorf("description (%d bytes):\n%s", len(d), d)
	}
	t.Logf("ToolSearch description for the MetaTool catalogue: %d bytes", len(d))
}

// A server whose configuration changes keeps its tools through the reload:
// sessions do not lose them while the new process starts, and a call in
// that window reaches the new process (it used to be "Unknown tool", with
// --no-bootstrap until something else connected the server).
func TestChangedServerKeepsToolsThroughReload(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{ModeDirect, ModeProxy} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			gw, _ := newTestGateway(t, registry.Settings{Mode: mode}, "alpha")
			connectNow(t, gw, "alpha")
			c := connect(t, gw, SessionOptions{})
			echo := "alpha_echo"
			call := func(msg string) (string, bool) {
				if mode == ModeProxy {
					return c.call(t, "mcp", map[string]any{"tool": echo, "args": map[string]any{"message": msg}})
				}
				return c.call(t, echo, map[string]any{"message": msg})
			}
			if text, isErr := call("before"); isErr || text != "before" {
				t.Fatalf("call before the reload = %q (error %v)", text, isErr)
			}
			old := gw.Catalog().View().Config
			next := &registry.Config{Servers: map[string]*registry.Server{}, Settings: old.Settings}
			dir := t.TempDir()
			srv := fakeupstream.Server("alpha", map[string]string{fakeupstream.EnvPIDFile: filepath.Join(dir, "pids"), "CHANGED": "1"})
			if srv.Hash == old.Servers["alpha"].Hash {
				t.Fatal("the changed server has the same identity")
			}
			next.Servers["alpha"] = srv
			gw.Reload(next)
			if mode == ModeDirect && !slices.Contains(c.tools(t), echo) {
				t.Fatalf("after the reload the session lists %v", c.tools(t))
			}
			if text, isErr := call("after"); isErr || text != "after" {
				t.Fatalf("call right after the reload = %q (error %v)", text, isErr)
			}
			if n := pidCount(t, filepath.Join(dir, "pids")); n != 1 {
				t.Errorf("the changed server ran %d times, want 1", n)
			}
			// The pool publishes the new listing on a goroutine of its own
			// (Options.OnUpdate), which may run just after the call returns.
			live := func() (*registry.ServerView, bool) {
				sv, _ := gw.Catalog().View().Server("alpha")
				return sv, sv != nil && sv.Listing != nil && sv.Listing.Source == registry.SourceLive
			}
			sv, ok := live()
			for deadline := time.Now().Add(5 * time.Second); !ok && time.Now().Before(deadline); sv, ok = live() {
				time.Sleep(5 * time.Millisecond)
			}
			if !ok {
				t.Errorf("listing after the call: %+v", sv)
			}
		})
	}
}
