package dispatch

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// fakeCaller is a session as the dispatcher sees it. A test that lets a
// call reach Upstream fails: these calls must end before the upstream.
type fakeCaller struct {
	t         *testing.T
	v         *registry.View
	canElicit bool
	answer    string // the elicitation form's decision; "" declines
	id        string // the session's ID; "" is sess1
	user      string // User's
	mu        sync.Mutex
	grants    map[string]bool
	asked     int
	reach     bool // the test lets requests reach Upstream (nil)
}

func (f *fakeCaller) View() *registry.View                          { return f.v }
func (f *fakeCaller) ResolveName(_ *registry.View, n string) string { return n }
func (f *fakeCaller) Identity() (string, string) {
	if f.id != "" {
		return f.id, "test-client"
	}
	return "sess1", "test-client"
}
func (f *fakeCaller) User() string        { return f.user }
func (f *fakeCaller) Used(string)         {}
func (f *fakeCaller) CanElicitForm() bool { return f.canElicit }
func (f *fakeCaller) Upstream(srv *registry.Server) *upstream.Upstream {
	if f.reach {
		return nil
	}
	f.t.Errorf("the call reached the upstream of %s", srv.Name)
	return nil
}
func (f *fakeCaller) Granted(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.grants[key]
}
func (f *fakeCaller) Grant(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.grants[key] = true
}
func (f *fakeCaller) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	f.mu.Lock()
	f.asked++
	f.mu.Unlock()
	if f.answer == "" {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": f.answer}}, nil
}

// observed records what the dispatcher reports.
type observed struct {
	mu        sync.Mutex
	calls     []string
	decisions []string
}

func (o *observed) Called(server, user, outcome string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if user != "" {
		outcome += " by " + user
	}
	o.calls = append(o.calls, server+":"+outcome)
}

func (o *observed) Decided(server, approval string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.decisions = append(o.decisions, server+":"+approval)
}

// testView is a catalogue of server a with tools read_thing (read-only)
// and delete_thing, under settings (a JSON object).
func testView(t *testing.T, settings string) *registry.View {
	t.Helper()
	cfg, err := registry.Parse([]byte(`{"settings": `+settings+`, "mcpServers": {"a": {"command": "x"}}}`), "mcp.json", &registry.LoadOptions{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
	v, err := registry.NewCatalog(cfg).Publish(cfg.Servers["a"], &registry.Listing{Source: registry.SourceLive, Tools: []*mcp.Tool{
		{Name: "read_thing", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "delete_thing", InputSchema: obj},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func newDispatcher(o *observed) *Dispatcher {
	return New(Options{Observer: o, Resolve: func(_ context.Context, v *registry.View, name string) (*registry.Tool, *registry.View, *mcp.CallToolResult) {
		if t, ok := v.Lookup(name); ok {
			return t, v, nil
		}
		res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no " + name}}}
		return nil, v, res
	}})
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Calls that end before the upstream: each outcome, the answer the model
// reads, what the observer and the session's grants saw.
func TestDispatchRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, settings, tool, args string
		canElicit                  bool
		answer                     string
		outcome, text              string
		decisions                  []string
		asked                      int
	}{
		{name: "unknown tool", settings: `{}`, tool: "a_nope", outcome: "unknown_tool", text: "no a_nope"},
		{name: "args not an object", settings: `{}`, tool: "a_read_thing", args: `[1]`, outcome: "invalid_args", text: "Invalid args for a_read_thing"},
		{name: "the mcp tool's arguments nested", settings: `{}`, tool: "a_delete_thing", args: `{"tool":"x","args":{}}`, outcome: "invalid_args", text: "arguments of the mcp tool itself"},
		{name: "denied in the form", settings: `{"approveTools": "destructive"}`, tool: "a_delete_thing", canElicit: true, answer: "deny",
			outcome: "denied", text: "The user denied the call of delete_thing on server a", decisions: []string{"a:denied"}, asked: 1},
		{name: "declined", settings: `{"approveTools": true}`, tool: "a_read_thing", canElicit: true,
			outcome: "denied", text: "denied", decisions: []string{"a:denied"}, asked: 1},
		{name: "no answer in time", settings: `{"approveTools": true, "approvalTimeoutMs": 50}`, tool: "a_read_thing",
			outcome: "approval_required", text: "approval_required: calling read_thing on server a", decisions: []string{"a:timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &observed{}
			d := newDispatcher(o)
			caller := &fakeCaller{t: t, v: testView(t, tc.settings), canElicit: tc.canElicit, answer: tc.answer, grants: map[string]bool{}}
			c := &Call{Caller: caller, Name: tc.tool, Args: json.RawMessage(tc.args), Route: ViaProxy}
			res := d.Result(context.Background(), c)
			if c.Outcome != tc.outcome || !res.IsError || !strings.Contains(resultText(res), tc.text) {
				t.Errorf("outcome %q, result %q (error %v); want %q containing %q", c.Outcome, resultText(res), res.IsError, tc.outcome, tc.text)
			}
			if strings.Join(o.decisions, ",") != strings.Join(tc.decisions, ",") || caller.asked != tc.asked {
				t.Errorf("decisions %v, form asked %d times; want %v, %d", o.decisions, caller.asked, tc.decisions, tc.asked)
			}
			if len(caller.grants) != 0 || len(d.Approvals()) != 0 {
				t.Errorf("grants %v, approvals still pending %v", caller.grants, d.Approvals())
			}
		})
	}
}

// A call that waits for the page or the CLI is listed as pending, with
// its arguments' summary, until Decide answers it; a second decision on
// it is ErrNoApproval.
func TestDispatchDecidedFromOutside(t *testing.T) {
	o := &observed{}
	d := newDispatcher(o)
	caller := &fakeCaller{t: t, v: testView(t, `{"approveTools": ["*delete*"], "approvalTimeoutMs": 60000}`), grants: map[string]bool{}}
	c := &Call{Caller: caller, Name: "a_delete_thing", Args: json.RawMessage(`{"name":"x","apiToken":"s3cret"}`), Route: ViaProxy}
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- d.Result(context.Background(), c) }()
	var pending []string
	for deadline := time.Now().Add(10 * time.Second); len(pending) == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, p := range d.Approvals() {
			pending = append(pending, p.ID)
			if p.Server != "a" || p.Tool != "delete_thing" || p.Session != "sess1" || p.Client != "test-client" || !strings.Contains(p.Args, `apiToken: "••••"`) {
				t.Errorf("pending approval %+v", p)
			}
		}
	}
	if len(pending) != 1 {
		t.Fatalf("pending approvals: %v", pending)
	}
	if _, err := d.Decide(pending[0], "deny", "cli"); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if c.Outcome != "denied" || !strings.Contains(resultText(res), "decided by cli") {
		t.Errorf("outcome %q, result %q", c.Outcome, resultText(res))
	}
	if _, err := d.Decide(pending[0], "once", "cli"); err != ErrNoApproval {
		t.Errorf("a second decision: %v, want ErrNoApproval", err)
	}
	if _, err := d.Decide("x", "maybe", "cli"); err == nil || !strings.Contains(err.Error(), "not one of once, tool, server, deny") {
		t.Errorf("an unknown decision: %v", err)
	}
}

// Calls waiting for approval are bounded per session and in all: one past
// a limit is refused at once, naming the setting, and never listed.
func TestPendingApprovalLimits(t *testing.T) {
	d := newDispatcher(&observed{})
	v := testView(t, `{"approveTools": ["*delete*"], "approvalTimeoutMs": 60000, "approvalsPerSession": 1, "approvalsPerDaemon": 2}`)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	call := func(session string) *Call {
		return &Call{Caller: &fakeCaller{t: t, v: v, id: session, grants: map[string]bool{}}, Name: "a_delete_thing", Args: json.RawMessage(`{"name":"x"}`), Route: ViaProxy}
	}
	wait := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); len(d.Approvals()) < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("pending approvals %v, want %d", d.Approvals(), n)
			}
		}
	}
	for i, s := range []string{"s1", "s2"} {
		wg.Add(1)
		go func() { defer wg.Done(); d.Result(ctx, call(s)) }()
		wait(i + 1)
	}
	for _, tc := range []struct{ session, want string }{
		{"s1", "too many calls of this session wait for approval (limit 1, settings.approvalsPerSession)"},
		{"s3", "too many calls wait for approval in mcpgw (limit 2, settings.approvalsPerDaemon)"},
	} {
		c := call(tc.session)
		res := d.Result(ctx, c)
		if c.Outcome != "approval_limit" || !strings.Contains(resultText(res), tc.want) {
			t.Errorf("a call of %s past the limit: %s %q, want %q", tc.session, c.Outcome, resultText(res), tc.want)
		}
	}
	if n := len(d.Approvals()); n != 2 {
		t.Errorf("pending approvals: %d, want 2", n)
	}
}
