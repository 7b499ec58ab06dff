//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// elicitations returns the elicitation/create requests a client.mjs
// session recorded (its "notifications" step).
func elicitations(t *testing.T, r e2e.StepResult) []string {
	t.Helper()
	var ns []struct {
		Method string `json:"method"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	r.Decode(t, &ns)
	var out []string
	for _, n := range ns {
		if n.Method == "elicitation/create" {
			out = append(out, n.Params.Message)
		}
	}
	return out
}

// deleteCount asks the upstream how many delete_thing calls reached it.
func deleteCount(t *testing.T, d *e2e.Daemon) string {
	t.Helper()
	r := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{e2e.MCPCall(map[string]any{"tool": "p_delete_count"})})
	return r[0].Text()
}

// TestApprovalsE2E: approveTools "destructive" on a shared upstream,
// through the TypeScript SDK client. The calling session — and no other
// — is asked; accept runs the call, decline denies it; grants are per
// session; a session that cannot be asked is released by the status
// page and by `mcpgw approve`, or denied by `mcpgw approve --deny`. The
// upstream's own count proves a denied call never arrived; the audit log
// records every call and decision without the arguments' values.
func TestApprovalsE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"p": e2e.PolicyServer(map[string]any{"approveTools": "destructive"}),
	}, map[string]any{"approvalTimeoutMs": 120000})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")

	del := func(name string) e2e.Step {
		return e2e.MCPCall(map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": name}})
	}
	// Two sessions at once, each asked about its own call: A allows the
	// tool for its session (its second call is not asked), B declines.
	runA := e2e.GoClient(t, e2e.Target{URL: d.MCPURL(), Elicit: "accept:tool"}, []e2e.Step{
		e2e.MCPCall(map[string]any{"tool": "p_read_thing", "args": map[string]any{"name": "x"}}),
		del("alpha-one"), del("alpha-two"), {Op: "notifications"},
	})
	runB := e2e.GoClient(t, e2e.Target{URL: d.MCPURL(), Elicit: "decline"}, []e2e.Step{
		del("bravo-one"), {Op: "notifications"},
	})
	a, b := (<-runA).Check(t), (<-runB).Check(t)
	if got := a[0].Text(); got != "read x" || a[0].IsError() {
		t.Errorf("a read-only tool under \"destructive\": %q", got)
	}
	if got := a[1].Text(); !strings.Contains(got, "deleted alpha-one") {
		t.Errorf("allowed call: %q", got)
	}
	if got := a[2].Text(); !strings.Contains(got, "deleted alpha-two") {
		t.Errorf("call under the session's tool grant: %q", got)
	}
	askedA := elicitations(t, a[3])
	if len(askedA) != 1 || !strings.Contains(askedA[0], "alpha-one") || !strings.Contains(askedA[0], "delete_thing") {
		t.Errorf("session A was asked %d times, want once about alpha-one: %q", len(askedA), askedA)
	}
	if got := b[0].Text(); !b[0].IsError() || !strings.Contains(got, "denied") {
		t.Errorf("declined call: %q (isError %v)", got, b[0].IsError())
	}
	askedB := elicitations(t, b[1])
	if len(askedB) != 1 || !strings.Contains(askedB[0], "bravo-one") || strings.Contains(askedB[0], "alpha") {
		t.Errorf("session B was asked %q, want once about its own call (A's grant is not B's)", askedB)
	}

	// Sessions that cannot be asked wait for the page or the CLI.
	bin := e2e.BuildMcpgw(t)
	release := []struct {
		name, want string
		decide     func(p api.PendingApproval)
	}{
		{"page", "deleted charlie", func(p api.PendingApproval) {
			resp, err := http.PostForm(d.URL+"/-/approve", url.Values{"id": {p.ID}, "decision": {"once"}})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther && resp.StatusCode != http.StatusOK {
				t.Errorf("page POST: %s", resp.Status)
			}
		}},
		{"cli", "deleted charlie", func(p api.PendingApproval) {
			list, err := exec.Command(bin, "approve", "--list", "--url", d.URL).CombinedOutput()
			if err != nil || !strings.Contains(string(list), p.ID) || !strings.Contains(string(list), "delete_thing on p") {
				t.Errorf("mcpgw approve --list: %v\n%s", err, list)
			}
			out, err := exec.Command(bin, "approve", "--url", d.URL, p.ID).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "allowed delete_thing on p") {
				t.Errorf("mcpgw approve %s: %v\n%s", p.ID, err, out)
			}
		}},
		{"cli-deny", "denied", func(p api.PendingApproval) {
			out, err := exec.Command(bin, "approve", "--deny", "--url", d.URL, p.ID).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "denied delete_thing on p") {
				t.Errorf("mcpgw approve --deny %s: %v\n%s", p.ID, err, out)
			}
		}},
	}
	for _, rc := range release {
		t.Run(rc.name, func(t *testing.T) {
			done := e2e.GoClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{del("charlie")})
			p := e2e.WaitPending(t, d, "delete_thing")
			if p.Server != "p" || !strings.Contains(p.Args, `name: "charlie"`) || p.Rule != `mcpServers.p.approveTools = "destructive"` {
				t.Errorf("pending approval: %+v", p)
			}
			rc.decide(p)
			r := (<-done).Check(t)
			if got := r[0].Text(); !strings.Contains(got, rc.want) {
				t.Errorf("released call: %q, want %q", got, rc.want)
			}
		})
	}

	// alpha-one, alpha-two and two charlies arrived; bravo and the
	// denied charlie did not.
	if got := deleteCount(t, d); got != "4" {
		t.Errorf("delete_thing calls that reached the upstream: %s, want 4", got)
	}
	if got := d.MetricValue(t, `mcpgw_approvals_total{decision="denied",server="p"}`); got != "2" {
		t.Errorf("denied approvals metric: %q, want 2", got)
	}

	// The audit log: every call and decision, never an argument's value.
	// Lines reach the file within a tenth of a second.
	logPath := filepath.Join(dir, "state", "mcpgw", "audit.jsonl")
	var data []byte
	var decided []string
	calls := map[string]int{}
	e2e.PollUntil(t, "the audit log's lines", func() bool {
		data, _ = os.ReadFile(logPath)
		decided, calls = decided[:0], map[string]int{}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			var r audit.Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("audit line %q: %v", sc.Text(), err)
			}
			if r.Session == "" || r.Server != "p" || (r.Event == audit.EventCall && !strings.HasPrefix(r.Args, "hmac-sha256:")) {
				t.Errorf("audit record without session, server or digest: %s", sc.Text())
			}
			switch r.Event {
			case audit.EventApproval:
				decided = append(decided, r.Approval+" by "+r.DecidedBy)
			case audit.EventCall:
				calls[r.Tool+" "+r.Outcome]++
			}
		}
		return len(decided) >= 5 && calls["delete_count ok"] >= 1
	})
	if fi, _ := os.Stat(logPath); fi.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v, want 0600", fi.Mode().Perm())
	}
	for _, secret := range []string{"alpha-one", "bravo-one", "charlie"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the audit log holds the argument value %q", secret)
		}
	}
	slices.Sort(decided)
	want := []string{"allowed by cli", "allowed by page", "allowed_tool by elicitation", "denied by cli", "denied by elicitation"}
	if !slices.Equal(decided, want) {
		t.Errorf("approval decisions on the audit log:\n got %q\nwant %q", decided, want)
	}
	if calls["delete_thing ok"] != 4 || calls["delete_thing denied"] != 2 || calls["read_thing ok"] != 1 {
		t.Errorf("calls on the audit log: %v", calls)
	}
	out, err := exec.Command(bin, "audit", "--server", "p", "--file", logPath).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "p/delete_thing") || !strings.Contains(string(out), "approval denied by elicitation") {
		t.Errorf("mcpgw audit: %v\n%s", err, out)
	}
}

// TestApprovalTimeoutFailsClosed: a call nobody approves fails with
// approval_required after settings.approvalTimeoutMs, with progress while
// it waits; the upstream never sees it.
func TestApprovalTimeoutFailsClosed(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"p": e2e.PolicyServer(nil)},
		map[string]any{"approveTools": []string{"p_delete_thing"}, "approvalTimeoutMs": 1500})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	r := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{
		{Op: "callTool", Name: "mcp", Arguments: map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "x"}}, Progress: true, TimeoutMs: 60000},
		{Op: "notifications"},
	})
	if got := r[0].Text(); !r[0].IsError() || !strings.Contains(got, "approval_required") || !strings.Contains(got, "mcpgw approve") {
		t.Errorf("unanswered approval: %q", got)
	}
	type notification struct {
		Method string `json:"method"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	var ns []notification
	r[1].Decode(t, &ns)
	// The upstream's first connect may send list_changed notifications
	// before or after it: look for the progress among them.
	if !slices.ContainsFunc(ns, func(n notification) bool {
		return n.Method == "notifications/progress" && strings.Contains(n.Params.Message, "mcpgw approve ")
	}) {
		t.Errorf("no progress while the call waited: %+v", ns)
	}
	if got := deleteCount(t, d); got != "0" {
		t.Errorf("delete_thing calls that reached the upstream: %s, want 0", got)
	}
}

// TestUpstreamEnvironment: no upstream gets mcpgw's own variables (the
// token above all); with inheritEnv false a stdio server gets only the
// default list of the daemon's environment, plus its env.
func TestUpstreamEnvironment(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"inh":   e2e.PolicyServer(nil),
		"noinh": e2e.PolicyServer(map[string]any{"inheritEnv": false, "env": map[string]any{fakeupstream.EnvPolicy: "1", "OWN_VAR": "x"}}),
	}, nil)
	bin := e2e.BuildMcpgw(t)
	d := &e2e.Daemon{Dir: dir, Socket: filepath.Join(dir, "run", "mcpgw.sock")}
	d.Proc, d.URL = e2e.Serve(t, d.Socket, func(listen string) *exec.Cmd {
		cmd := exec.Command(bin, "serve", "--config", config, "--listen", listen,
			"--cache", filepath.Join(dir, "cache.json"), "--socket", d.Socket, "--no-bootstrap")
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "state"),
			"MCPGW_TOKEN=s3cret-token", "DAEMON_ONLY_VAR=1", "TERM=xterm")
		return cmd
	})
	target := e2e.Target{URL: d.MCPURL(), Headers: map[string]string{"Authorization": "Bearer s3cret-token"}}
	r := e2e.RunClient(t, target, []e2e.Step{
		e2e.MCPCall(map[string]any{"tool": "inh_environ"}),
		e2e.MCPCall(map[string]any{"tool": "noinh_environ"}),
	})
	inherited := strings.Split(r[0].Text(), "\n")
	if slices.Contains(inherited, "MCPGW_TOKEN") || !slices.Contains(inherited, "DAEMON_ONLY_VAR") {
		t.Errorf("an inheriting upstream's environment: %q (want DAEMON_ONLY_VAR, never MCPGW_TOKEN)", inherited)
	}
	for _, name := range inherited {
		if strings.HasPrefix(name, "MCPGW_") && name != fakeupstream.EnvPolicy {
			t.Errorf("an upstream got mcpgw's variable %s", name)
		}
	}
	got := strings.Split(r[1].Text(), "\n")
	want := []string{fakeupstream.EnvPolicy, "OWN_VAR"}
	for _, k := range []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"} {
		if _, ok := os.LookupEnv(k); ok || k == "HOME" || k == "TERM" {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("inheritEnv false: the upstream's environment is\n %q\nwant\n %q", got, want)
	}
}

// TestPiHiddenToolsE2E: a Pi mcp.json imported as it is, with a server
// hidden whole ("exposure": "hidden") and tools hidden by toolExposure:
// in every mode they are never listed, searched, described or callable.
func TestPiHiddenToolsE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	dir := t.TempDir()
	e2e.WriteJSON(t, filepath.Join(dir, ".pi", "agent", "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"hid": e2e.PolicyServer(map[string]any{"exposure": "hidden"}),
		"vis": e2e.PolicyServer(map[string]any{"toolExposure": map[string]any{"delete_*": "hidden", "read_*": "direct"}}),
	}})
	config := filepath.Join(dir, "mcp.json")
	e2e.WriteJSON(t, config, map[string]any{"imports": []string{"pi"}})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")

	hidden := func(text string) string {
		for _, name := range []string{"vis_delete_thing", "vis_delete_count", "hid_"} {
			if strings.Contains(text, name) {
				return name
			}
		}
		return ""
	}
	proxy := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{
		e2e.MCPCall(map[string]any{"tool": "vis_read_thing", "args": map[string]any{"name": "x"}}),
		e2e.MCPCall(map[string]any{"search": "delete thing"}),
		e2e.MCPCall(map[string]any{"search": "delete", "includeSchemas": true}),
		e2e.MCPCall(map[string]any{"server": "vis"}),
		e2e.MCPCall(map[string]any{"describe": "vis_delete_thing"}),
		e2e.MCPCall(map[string]any{"tool": "vis_delete_thing", "args": map[string]any{"name": "x"}}),
		e2e.MCPCall(map[string]any{"tool": "hid_echo", "args": map[string]any{"message": "x"}}),
		e2e.MCPCall(map[string]any{}),
	})
	if got := proxy[0].Text(); got != "read x" {
		t.Fatalf("the visible tool of vis: %q", got)
	}
	for i, r := range proxy[1:4] {
		if h := hidden(r.Text()); h != "" {
			t.Errorf("proxy step %d shows hidden %s:\n%s", i+1, h, r.Text())
		}
	}
	for _, r := range proxy[4:7] {
		if !r.IsError() {
			t.Errorf("a hidden tool was described or called: %s", r.Text())
		}
	}

	direct := e2e.RunClient(t, e2e.Target{URL: d.MCPURL() + "?mode=direct"}, []e2e.Step{
		{Op: "listTools"},
		e2e.Call("vis_delete_thing", map[string]any{"name": "x"}),
		e2e.Call("hid_echo", map[string]any{"message": "x"}),
	})
	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	direct[0].Decode(t, &tools)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "vis_read_thing") || hidden(strings.Join(names, " ")) != "" {
		t.Errorf("direct mode lists %q", names)
	}
	for _, r := range direct[1:] {
		if r.OK && !r.IsError() {
			t.Errorf("a hidden tool was callable in direct mode: %s", r.Text())
		}
	}

	ts := e2e.RunClient(t, e2e.Target{URL: d.MCPURL() + "?mode=toolsearch"}, []e2e.Step{
		e2e.Call("ToolSearch", map[string]any{"query": "delete thing"}),
		e2e.Call("ToolSearch", map[string]any{"query": "select:vis_delete_thing,hid_echo"}),
		{Op: "listTools"},
		e2e.Call("vis_delete_thing", map[string]any{"name": "x"}),
	})
	for i, r := range ts[:3] {
		text := r.Text()
		if r.Op == "listTools" {
			text = string(r.Result)
		}
		if h := hidden(text); h != "" && !strings.Contains(text, "Unknown") && !strings.Contains(text, "No tool") {
			t.Errorf("toolsearch step %d shows hidden %s:\n%s", i, h, text)
		}
	}
	if ts[3].OK && !ts[3].IsError() {
		t.Errorf("a hidden tool was callable in toolsearch mode: %s", ts[3].Text())
	}
	if got := e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{e2e.MCPCall(map[string]any{"tool": "vis_read_thing", "args": map[string]any{"name": "y"}})}); got[0].Text() != "read y" {
		t.Errorf("vis after the attempts: %q", got[0].Text())
	}
}

// TestCallWaitsForApprovalCLI: `mcpgw call` of a guarded tool says it
// waits for approval and how to give it; `mcpgw approve` from another
// terminal lets it through.
func TestCallWaitsForApprovalCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"p": e2e.PolicyServer(map[string]any{"approveTools": []string{"delete_*"}})},
		map[string]any{"approvalTimeoutMs": 120000})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	bin := e2e.BuildMcpgw(t)
	call := exec.Command(bin, "call", "--url", d.URL, "p_delete_thing", `{"name":"delta"}`)
	var stdout bytes.Buffer
	call.Stdout = &stdout
	stderr, err := call.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := call.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	sc := bufio.NewScanner(stderr)
	var said []string
	for sc.Scan() {
		said = append(said, sc.Text())
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "mcpgw approve "); ok {
			id, _, _ = strings.Cut(rest, " ")
			break
		}
	}
	if id == "" || !strings.Contains(strings.Join(said, "\n"), "delete_thing on p waits for your approval") {
		call.Process.Kill()
		call.Wait()
		t.Fatalf("mcpgw call said:\n%s", strings.Join(said, "\n"))
	}
	if out, err := exec.Command(bin, "approve", "--url", d.URL, id).CombinedOutput(); err != nil {
		t.Fatalf("mcpgw approve %s: %v\n%s", id, err, out)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	if err := call.Wait(); err != nil || !strings.Contains(stdout.String(), "deleted delta") {
		t.Errorf("mcpgw call after the approval: %v\n%s", err, stdout.String())
	}
}
