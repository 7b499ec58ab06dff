//go:build unix

package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// hidingArgs are arguments built to hide what they do from a form that
// shows the first 20 names, cuts values at 120 characters and masks only
// top-level names: 25 names before the one that matters, a value whose
// end is pushed out of view by spaces, secrets one level down.
func hidingArgs() map[string]any {
	args := map[string]any{
		"id":        "PRODUCTION-DB",
		"q":         "harmless" + strings.Repeat(" ", 300) + "; and-also-PRODUCTION",
		"nested":    map[string]any{"token": "NESTED-SECRET", "deep": []any{map[string]any{"where": "DEEP-VALUE"}}},
		"x-api-key": "KEY-SECRET",
	}
	for i := range 25 {
		args[fmt.Sprintf("a%02d", i)] = i
	}
	return args
}

// TestApprovalFormShowsWhatItApproves: through the TypeScript SDK client,
// the approval form of a call whose arguments hide what it does shows
// every value (the 26th name, the tail behind 300 spaces, nested values)
// with secrets masked at any depth, and has no default but Deny — a
// client that fills in the form's defaults denies. A session that cannot
// be asked waits on the page and in `mcpgw approve --list`, which show
// the same, and --full the whole.
func TestApprovalFormShowsWhatItApproves(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"p": e2e.PolicyServer(map[string]any{"approveTools": "destructive"})},
		map[string]any{"approvalTimeoutMs": 120000})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	call := e2e.MCPCall(map[string]any{"tool": "p_delete_thing", "args": hidingArgs()})

	r := e2e.RunClient(t, e2e.Target{URL: d.MCPURL(), Elicit: "accept", ElicitDefaults: true}, []e2e.Step{call, {Op: "notifications"}})
	if got := r[0].Text(); !r[0].IsError() || !strings.Contains(got, "denied") {
		t.Errorf("a form accepted with its defaults filled in: %q, want denied", got)
	}
	type notification struct {
		Method string `json:"method"`
		Params struct {
			Message         string `json:"message"`
			RequestedSchema struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"requestedSchema"`
		} `json:"params"`
	}
	var ns []notification
	r[1].Decode(t, &ns)
	ns = slices.DeleteFunc(ns, func(n notification) bool { return n.Method != "elicitation/create" })
	if len(ns) != 1 {
		t.Fatalf("the session was asked %+v, want one form", ns)
	}
	form := ns[0].Params.Message
	if d, ok := ns[0].Params.RequestedSchema.Properties["decision"]["default"]; ok && d != "deny" {
		t.Errorf("the form's default answer is %v", d)
	}
	shows := func(what, text string) {
		t.Helper()
		for _, want := range []string{`id: "PRODUCTION-DB"`, "a24: 24", "; and-also-PRODUCTION", `q: "harmless`, `nested.token: "••••"`,
			`x-api-key: "••••"`, `nested.deep[0].where: "DEEP-VALUE"`} {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not show %q:\n%s", what, want, text)
			}
		}
		for _, secret := range []string{"NESTED-SECRET", "KEY-SECRET"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows the secret %s:\n%s", what, secret, text)
			}
		}
	}
	shows("the form", form)
	if !strings.Contains(form, "characters of long values are cut here: the whole call is on mcpgw's status page") {
		t.Errorf("the form cuts without saying where the call is whole:\n%s", form)
	}

	// A session that cannot be asked: the CLI lists the same, --full the
	// whole, then denies it.
	done := make(chan []e2e.StepResult, 1)
	go func() { done <- e2e.RunClient(t, e2e.Target{URL: d.MCPURL()}, []e2e.Step{call}) }()
	p := e2e.WaitPending(t, d, "delete_thing")
	bin := e2e.BuildMcpgw(t)
	list, err := exec.Command(bin, "approve", "--list", "--url", d.URL).CombinedOutput()
	if err != nil {
		t.Fatalf("mcpgw approve --list: %v\n%s", err, list)
	}
	shows("mcpgw approve --list", string(list))
	full, err := exec.Command(bin, "approve", "--list", "--full", "--url", d.URL).CombinedOutput()
	if err != nil || !strings.Contains(string(full), "harmless"+strings.Repeat(" ", 300)+"; and-also-PRODUCTION") &&
		!strings.Contains(string(full), "harmless⟨300 spaces⟩; and-also-PRODUCTION") {
		t.Errorf("mcpgw approve --list --full does not show the value whole: %v\n%s", err, full)
	}
	shows("mcpgw approve --list --full", string(full))
	if out, err := exec.Command(bin, "approve", "--deny", "--url", d.URL, p.ID).CombinedOutput(); err != nil {
		t.Fatalf("mcpgw approve --deny: %v\n%s", err, out)
	}
	if got := (<-done)[0].Text(); !strings.Contains(got, "denied") {
		t.Errorf("the denied call: %q", got)
	}
	if got := deleteCount(t, d); got != "0" {
		t.Errorf("delete_thing calls that reached the upstream: %s, want 0", got)
	}
}
