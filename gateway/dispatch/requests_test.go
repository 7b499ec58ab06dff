package dispatch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// auditLines closes log and returns its records as "event method server
// tool outcome approval".
func auditLines(t *testing.T, log *audit.Log) []string {
	t.Helper()
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(log.Path())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if r.Session != "sess1" || !strings.HasPrefix(r.Args, "hmac-sha256:") {
			t.Errorf("audit line without its session or digest: %s", sc.Text())
		}
		out = append(out, strings.Join([]string{r.Event, r.Method, r.Server, r.Tool, r.Outcome, r.Approval}, " "))
	}
	if bytes.Contains(data, []byte("secret-value")) {
		t.Errorf("the audit log holds an argument's value:\n%s", data)
	}
	return out
}

// resourceView is server a with a resource and a prompt, under settings.
func resourceView(t *testing.T, settings string) *registry.View {
	t.Helper()
	cfg, err := registry.Parse([]byte(`{"settings": `+settings+`, "mcpServers": {"a": {"command": "x"}}}`), "mcp.json", &registry.LoadOptions{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	v, err := registry.NewCatalog(cfg).Publish(cfg.Servers["a"], &registry.Listing{Source: registry.SourceLive,
		Resources: []*mcp.Resource{{Name: "hello", URI: "test://hello"}},
		Prompts:   []*mcp.Prompt{{Name: "greet"}}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestForwardGatesAndAudits: a resource read and a prompt get pass the
// approval gate under approveTools true (not under "destructive": they
// change nothing), a completion never does; each is audited with its
// method, allowed or not, and what the dispatcher refuses before the
// upstream is audited too.
func TestForwardGatesAndAudits(t *testing.T) {
	for _, tc := range []struct {
		name, settings, answer string
		want                   []string // the audit log
		reached                int
	}{
		{name: "approveTools true, denied", settings: `{"approveTools": true}`, answer: "deny", want: []string{
			"approval resources/read a test://hello  denied", "call resources/read a test://hello denied denied",
			"approval prompts/get a greet  denied", "call prompts/get a greet denied denied",
			"call completion/complete a greet ok ",
		}, reached: 1},
		{name: "approveTools true, allowed", settings: `{"approveTools": true}`, answer: "once", want: []string{
			"approval resources/read a test://hello  allowed", "call resources/read a test://hello ok allowed",
			"approval prompts/get a greet  allowed", "call prompts/get a greet ok allowed",
			"call completion/complete a greet ok ",
		}, reached: 3},
		{name: "destructive", settings: `{"approveTools": "destructive"}`, want: []string{
			"call resources/read a test://hello ok ", "call prompts/get a greet ok ", "call completion/complete a greet ok ",
		}, reached: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "audit.key"), nil)
			if err != nil {
				t.Fatal(err)
			}
			d := New(Options{Observer: &observed{}, Audit: log})
			v := resourceView(t, tc.settings)
			caller := &fakeCaller{t: t, v: v, canElicit: true, answer: tc.answer, grants: map[string]bool{}, reach: true}
			reached := 0
			do := func(context.Context, *upstream.Upstream) error { reached++; return nil }
			res, _ := v.Resource("test://hello")
			p, _ := v.Prompt("a_greet")
			args := json.RawMessage(`{"name":"secret-value"}`)
			errs := []error{
				d.Forward(context.Background(), &Request{Caller: caller, Method: MethodReadResource, Server: "a", Name: res.Original,
					Args: json.RawMessage(`{"uri":"test://hello"}`), Gate: v.ResourceTool("a", res.Def.Name, res.Original)}, do),
				d.Forward(context.Background(), &Request{Caller: caller, Method: MethodGetPrompt, Server: "a", Name: p.Original,
					Args: args, Gate: v.PromptTool(p)}, do),
				d.Forward(context.Background(), &Request{Caller: caller, Method: MethodComplete, Server: "a", Name: p.Original, Args: args}, do),
			}
			if reached != tc.reached {
				t.Errorf("%d requests reached the upstream, want %d (errors %v)", reached, tc.reached, errs)
			}
			if tc.answer == "deny" && (errs[0] == nil || !strings.Contains(errs[0].Error(), "denied")) {
				t.Errorf("a denied read: %v", errs[0])
			}
			if got := auditLines(t, log); !slices.Equal(got, tc.want) {
				t.Errorf("audit log:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestRefusalsAudited: a call refused before the gate — an unknown (or
// hidden) tool, invalid arguments — and a request of a prompt no server
// offers are on the audit log, digests only.
func TestRefusalsAudited(t *testing.T) {
	dir := t.TempDir()
	log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "audit.key"), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := &observed{}
	d := newDispatcher(o)
	d.o.Audit = log
	caller := &fakeCaller{t: t, v: testView(t, `{}`), grants: map[string]bool{}}
	for _, c := range []*Call{
		{Caller: caller, Name: "a_hidden_tool", Args: json.RawMessage(`{"name":"secret-value"}`), Route: ViaProxy},
		{Caller: caller, Name: "a_read_thing", Args: json.RawMessage(`[1]`), Route: ViaProxy},
	} {
		d.Dispatch(context.Background(), c)
	}
	d.Refused(caller, MethodGetPrompt, "nope", json.RawMessage(`{"x":"secret-value"}`), "unknown")
	want := []string{"call   a_hidden_tool unknown_tool ", "call  a read_thing invalid_args ", "call prompts/get  nope unknown "}
	if got := auditLines(t, log); !slices.Equal(got, want) {
		t.Errorf("audit log:\n got %q\nwant %q", got, want)
	}
}
