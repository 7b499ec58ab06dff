package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

type scriptAnswer struct {
	ID      string            `json:"id"`
	Result  json.RawMessage   `json:"result"`
	Emitted []json.RawMessage `json:"emitted"`
	Console []string          `json:"console"`
	Error   *struct{ Code, Message string }
	Calls   []struct {
		Tool  string
		OK    bool
		Error string
	}
}

func decodeScript(t *testing.T, text string) scriptAnswer {
	t.Helper()
	var a scriptAnswer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		t.Fatalf("script answer is not JSON: %v\n%s", err, text)
	}
	return a
}

// TestScriptThroughTheMcpTool: a script finds tools, calls two in
// parallel and combines them, reading the structured result of one and
// the text of the other; a failed call does not stop it.
func TestScriptThroughTheMcpTool(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{}, "alpha")
	connectNow(t, gw, "alpha")
	c := connect(t, gw, SessionOptions{})
	text, isErr := c.call(t, "mcp", map[string]any{"script": `
		const found = tools.search("add two numbers", {limit: 3});
		const d = tools.describe("alpha_add");
		const [sum, echo, bad] = await Promise.all([
			tools.call("alpha_add", {a: 2, b: 40}),
			tools.call("alpha_echo", {message: "hi"}),
			tools.call("alpha_ehco", {}),
		]);
		emit(found.map(f => f.name).includes("alpha_add"));
		console.log("sig", d.signature);
		return {sum: sum.data.sum, echo: echo.data, bad: bad.error.code, hint: bad.error.message.includes("alpha_echo")};`})
	a := decodeScript(t, text)
	if isErr || a.Error != nil {
		t.Fatalf("script failed: %s", text)
	}
	if got := string(a.Result); got != `{"sum":42,"echo":"hi","bad":"unknown_tool","hint":true}` {
		t.Errorf("result = %s", got)
	}
	if len(a.Emitted) != 1 || string(a.Emitted[0]) != "true" {
		t.Errorf("emitted = %s", a.Emitted)
	}
	if len(a.Console) != 1 || !strings.HasPrefix(a.Console[0], "sig alpha_add(args: { a") {
		t.Errorf("console = %q", a.Console)
	}
	if len(a.Calls) != 3 {
		t.Errorf("trace = %+v", a.Calls)
	}
	// The status page's report keeps the script with its trace.
	rep := gw.Status()
	if len(rep.Scripts) != 1 || rep.Scripts[0].ID != a.ID || len(rep.Scripts[0].Calls) != 3 || rep.Scripts[0].Outcome != "ok" || !strings.Contains(rep.Scripts[0].Source, "Promise.all") {
		t.Errorf("status scripts = %+v", rep.Scripts)
	}
	h := gw.Handler(&HTTPOptions{Token: pageToken})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/", nil)
	req.Header.Set("Authorization", "Bearer "+pageToken)
	h.ServeHTTP(rec, req)
	page := rec.Body.String()
	for _, want := range []string{`id="script-` + a.ID + `"`, "<td>alpha_add</td><td>ok</td>", "<td>alpha_ehco</td><td>unknown_tool</td>", "Promise.all"} {
		if !strings.Contains(page, want) {
			t.Errorf("the status page lacks %s", want)
		}
	}
	// A script that never ends is stopped at the deadline the caller asked for.
	text, isErr = c.call(t, "mcp", map[string]any{"script": "while (true) {}", "timeoutMs": 200})
	if a := decodeScript(t, text); !isErr || a.Error == nil || a.Error.Code != "timeout" {
		t.Errorf("busy script: %s", text)
	}
}

// TestScriptCallsPassTheGate: a script's call of a guarded tool waits for
// approval like any other call, and the audit log names the script.
func TestScriptCallsPassTheGate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "audit.key"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &registry.Config{Servers: map[string]*registry.Server{
		"p": fakeupstream.Server("p", map[string]string{fakeupstream.EnvPolicy: "1"}),
	}, Settings: registry.Settings{ToolPrefix: registry.PrefixServer, ApproveTools: destructive, ApprovalTimeout: time.Minute}}
	gw := New(cfg, &Options{NoBootstrap: true, Audit: log})
	gw.Start()
	connectNow(t, gw, "p")
	c := connect(t, gw, SessionOptions{ID: "scripted"})
	res := callAsync(t, c, "mcp", map[string]any{"script": `
		const r = await tools.call("p_read_thing", {name: "x"});
		const d = await tools.call("p_delete_thing", {name: "y"});
		const e = await tools.call("p_delete_thing", {name: "z"});
		return [r.data, d.ok, e.ok || e.error.code];`})
	p := waitApproval(t, gw)
	if p.Tool != "delete_thing" {
		t.Fatalf("waiting approval = %+v", p)
	}
	if _, err := gw.Decide(p.ID, "once", "cli"); err != nil {
		t.Fatal(err)
	}
	p2 := waitApproval(t, gw)
	if _, err := gw.Decide(p2.ID, "deny", "cli"); err != nil {
		t.Fatal(err)
	}
	r := <-res
	a := decodeScript(t, r.text)
	if r.isErr || string(a.Result) != `["read x",true,"denied"]` {
		t.Fatalf("script: %+v", r)
	}
	if text, _ := c.call(t, "mcp", map[string]any{"tool": "p_delete_count"}); text != "1" {
		t.Errorf("delete_thing calls that reached the upstream: %s, want 1", text)
	}
	gw.Close()
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if n := strings.Count(string(data), `"script":"`+a.ID+`"`); n != 5 { // 3 calls and 2 decisions
		t.Errorf("audit lines naming the script: %d\n%s", n, data)
	}
}

// TestScriptToolInModes: toolsearch sessions list mcp_script, direct ones
// only when settings.scripts says so, and false turns the action off.
func TestScriptToolInModes(t *testing.T) {
	t.Parallel()
	on, off := true, false
	for _, tc := range []struct {
		settings registry.Settings
		mode     registry.Mode
		listed   bool
	}{
		{registry.Settings{}, ModeToolSearch, true},
		{registry.Settings{}, ModeDirect, false},
		{registry.Settings{Scripts: &on}, ModeDirect, true},
		{registry.Settings{Scripts: &off}, ModeToolSearch, false},
	} {
		gw, _ := newTestGateway(t, tc.settings, "alpha")
		connectNow(t, gw, "alpha")
		c := connect(t, gw, SessionOptions{Mode: tc.mode})
		names := c.tools(t)
		if got := slices.Contains(names, surface.ScriptToolName); got != tc.listed {
			t.Errorf("%s mode, scripts %v: lists %v", tc.mode, tc.settings.Scripts, names)
			continue
		}
		if !tc.listed {
			continue
		}
		text, isErr := c.call(t, surface.ScriptToolName, map[string]any{"script": `return (await tools.call("alpha_echo", {message: "m"})).data`})
		if a := decodeScript(t, text); isErr || string(a.Result) != `"m"` {
			t.Errorf("%s mode: mcp_script = %s", tc.mode, text)
		}
	}
	gw, _ := newTestGateway(t, registry.Settings{Scripts: &off}, "alpha")
	c := connect(t, gw, SessionOptions{})
	if text, isErr := c.call(t, "mcp", map[string]any{"script": "return 1"}); !isErr || !strings.Contains(text, "settings.scripts is false") {
		t.Errorf("script with scripts off: %q", text)
	}
}

// TestScriptProgress: a script's progress reaches the client that ran it,
// on its token, counting up: each upstream progress of its calls and
// each finished call.
func TestScriptProgress(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{}, "alpha")
	var mu sync.Mutex
	var progress []float64
	var messages []string
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = gw.ServeTransport(ctx, st, SessionOptions{}) }()
	mc := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if req.Params.ProgressToken != "tok" {
				t.Errorf("progress token %v", req.Params.ProgressToken)
			}
			progress = append(progress, req.Params.Progress)
			messages = append(messages, req.Params.Message)
		},
	})
	sess, err := mc.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	params := &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"script": `
		await tools.call("alpha_sleep", {ms: 200});
		return (await tools.call("alpha_echo", {message: "done"})).data;`}}
	params.SetProgressToken("tok")
	res, err := sess.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("script: %v %+v", err, res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		done := slices.Contains(messages, "alpha_echo: ok")
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	steps := 0
	for i, m := range messages {
		if strings.HasPrefix(m, "alpha_sleep: step ") {
			steps++
		}
		if i > 0 && progress[i] <= progress[i-1] {
			t.Errorf("progress does not count up: %v", progress)
		}
	}
	if steps < 3 || !slices.Contains(messages, "alpha_sleep: ok") || !slices.Contains(messages, "alpha_echo: ok") {
		t.Errorf("progress messages = %q", messages)
	}
}

// A script past the per-session or the daemon's limit is refused, naming
// the setting; one that ends frees its place.
func TestRunningScriptsLimits(t *testing.T) {
	t.Parallel()
	var r runningScripts
	a, b := &session{}, &session{}
	l := registry.Limits{ScriptsPerSession: 2, ScriptsPerDaemon: 3}
	var dones []func()
	for _, ss := range []*session{a, a, b} {
		done, refused := r.start(ss, l)
		if refused != nil {
			t.Fatalf("refused within the limits: %s", surface.ResultText(refused))
		}
		dones = append(dones, done)
	}
	if _, refused := r.start(a, l); !reflect.DeepEqual(refused, surface.TooManyScripts(true, 2)) {
		t.Errorf("a third script of a session: %q", surface.ResultText(refused))
	}
	if _, refused := r.start(b, l); !reflect.DeepEqual(refused, surface.TooManyScripts(false, 3)) {
		t.Errorf("a fourth script in all: %q", surface.ResultText(refused))
	}
	dones[0]()
	done, refused := r.start(a, l)
	if refused != nil {
		t.Errorf("a script after one ended: %q", surface.ResultText(refused))
	}
	done()
	dones[1]()
	dones[2]()
	if r.total != 0 || len(r.bySession) != 0 {
		t.Errorf("after every script ended: total %d, by session %v", r.total, r.bySession)
	}
}
