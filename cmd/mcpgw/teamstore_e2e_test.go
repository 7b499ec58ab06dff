//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/internal/redistest"
)

// roundRobin is a reverse proxy that sends each request to the next of
// its backends still up, and notes where each went.
type roundRobin struct {
	*httptest.Server
	proxies []*httputil.ReverseProxy

	mu       sync.Mutex
	next     int
	down     []bool
	requests []proxied
	steered  map[string]int // session → the backend of its next tools/call
}

// proxied is one request the proxy passed on.
type proxied struct {
	backend int
	session string // its Mcp-Session-Id, or the one its answer gave
	method  string // its JSON-RPC method; the HTTP method for a GET or DELETE
}

func newRoundRobin(t *testing.T, backends ...string) *roundRobin {
	p := &roundRobin{down: make([]bool, len(backends))}
	for i, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		rp := httputil.NewSingleHostReverseProxy(u)
		rp.ErrorLog = log.New(io.Discard, "", 0) // a killed replica's requests fail, as they should
		rp.ModifyResponse = func(resp *http.Response) error {
			if id := resp.Header.Get("Mcp-Session-Id"); id != "" && resp.Request.Header.Get("Mcp-Session-Id") == "" {
				p.note(proxied{backend: i, session: id, method: "initialize"})
			}
			return nil
		}
		p.proxies = append(p.proxies, rp)
	}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

func (p *roundRobin) note(r proxied) {
	p.mu.Lock()
	p.requests = append(p.requests, r)
	p.mu.Unlock()
}

func (p *roundRobin) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	method := r.Method
	var msg struct{ Method string }
	if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
		method = msg.Method
	}
	id := r.Header.Get("Mcp-Session-Id")
	p.mu.Lock()
	i, steered := p.steered[id]
	if steered && method == "tools/call" {
		delete(p.steered, id)
	} else {
		i = p.next
		for p.down[i] {
			i = (i + 1) % len(p.proxies)
		}
		p.next = (i + 1) % len(p.proxies)
	}
	p.mu.Unlock()
	if id != "" {
		p.note(proxied{backend: i, session: id, method: method})
	}
	p.proxies[i].ServeHTTP(w, r)
}

// steer sends the next tools/call of session to backend i, whatever the
// rotation: the client's other requests (its event stream, notifications)
// take turns too, so two calls in a row need not alternate.
func (p *roundRobin) steer(session string, i int) {
	p.mu.Lock()
	if p.steered == nil {
		p.steered = map[string]int{}
	}
	p.steered[session] = i
	p.mu.Unlock()
}

// setDown takes backend i out of the rotation.
func (p *roundRobin) setDown(i int) {
	p.mu.Lock()
	p.down[i] = true
	p.mu.Unlock()
}

// served returns the requests passed on for session, of method ("" for
// every one).
func (p *roundRobin) served(session, method string) []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []proxied
	for _, r := range p.requests {
		if r.session == session && (method == "" || r.method == method) {
			out = append(out, r)
		}
	}
	return out
}

// sessionsOpened returns the session IDs the backends gave, in order.
func (p *roundRobin) sessionsOpened() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.requests {
		if r.method == "initialize" {
			out = append(out, r.session)
		}
	}
	return out
}

// backends returns the backends that answered reqs, each once, sorted.
func backends(reqs []proxied) []int {
	var out []int
	for _, r := range reqs {
		if !slices.Contains(out, r.backend) {
			out = append(out, r.backend)
		}
	}
	slices.Sort(out)
	return out
}

// TestTeamReplicasE2E: two mcpgw replicas in team mode sharing one
// redis-server, behind a round-robin reverse proxy, and the TypeScript SDK
// client as alice and bob. Alice's session goes on whichever replica
// answers (what ToolSearch activated through one is listed and called
// through the other); her call waiting for approval through one replica
// is approved with `mcpgw approve` through the other and completes, and
// the grant it made holds on both; bob neither sees, approves nor resumes
// hers (her session ID with his token is 404, on a replica that has it
// and on one that would resume it); a session opened on one replica alone
// is resumed on the other; and a replica killed while alice's call waits
// leaves her approval listed on the survivor until it is decided.
func TestTeamReplicasE2E(t *testing.T) {
	t.Parallel()
	e2e.NeedNode(t)
	rs := redistest.Start(t)
	iss := e2e.NewIssuer(t)
	config := e2e.WriteTeamConfig(t, t.TempDir(), iss, e2e.Team{
		Block: map[string]any{"store": rs.URL},
		Servers: map[string]any{
			"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}, "approveTools": []string{"add"}},
		},
		Settings: map[string]any{"approvalTimeoutMs": 120000},
	})
	replicas := []*e2e.Daemon{
		e2e.StartDaemon(t, t.TempDir(), config, "--allow-remote"),
		e2e.StartDaemon(t, t.TempDir(), config, "--allow-remote"),
	}
	proxy := newRoundRobin(t, replicas[0].URL, replicas[1].URL)
	alice, bob := iss.Token("alice", "mcpgw"), iss.Token("bob", "mcpgw")
	as := func(token string, headers ...string) e2e.Target {
		h := map[string]string{"Authorization": "Bearer " + token}
		for i := 0; i+1 < len(headers); i += 2 {
			h[headers[i]] = headers[i+1]
		}
		return e2e.Target{URL: proxy.URL + "/mcp", Headers: h}
	}

	// A toolsearch session: what ToolSearch activates through one replica
	// is listed and called through both.
	r := e2e.RunClient(t, as(alice, "Mcp-Gateway-Mode", "toolsearch"), []e2e.Step{
		{Op: "listTools"},
		e2e.Call("ToolSearch", map[string]any{"query": "select:go_echo"}),
		{Op: "listTools"},
		{Op: "listTools"},
		e2e.Call("go_echo", map[string]any{"message": "one"}),
		e2e.Call("go_echo", map[string]any{"message": "two"}),
	})
	if names := e2e.ToolNames(t, r[0]); slices.Contains(names, "go_echo") || !slices.Contains(names, "ToolSearch") {
		t.Errorf("before ToolSearch, alice lists %v", names)
	}
	if r[1].IsError() || !strings.Contains(r[1].Text(), "go_echo") {
		t.Errorf("ToolSearch select:go_echo: %s", r[1])
	}
	for _, i := range []int{2, 3} {
		if names := e2e.ToolNames(t, r[i]); !slices.Contains(names, "go_echo") {
			t.Errorf("step %d: after ToolSearch, alice lists %v", i, names)
		}
	}
	for i, word := range map[int]string{4: "one", 5: "two"} {
		if r[i].IsError() || !strings.Contains(r[i].Text(), word) {
			t.Errorf("step %d: go_echo: %s", i, r[i])
		}
	}
	opened := proxy.sessionsOpened()
	if len(opened) != 1 {
		t.Fatalf("sessions opened: %v, want alice's one", opened)
	}
	first := opened[0]
	if got := backends(proxy.served(first, "tools/list")); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("alice's tools/list answered by replicas %v, want both", got)
	}
	if got := backends(proxy.served(first, "tools/call")); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("alice's tools/call answered by replicas %v, want both", got)
	}

	listed := func(d *e2e.Daemon, token string) []api.PendingApproval {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, d.URL+"/-/approvals", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var list []api.PendingApproval
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatalf("GET /-/approvals of %s: %d, %v", d.URL, resp.StatusCode, err)
		}
		return list
	}
	// waitPending waits for alice's one pending approval, and returns it
	// with the replica whose call waits.
	waitPending := func() (api.PendingApproval, int) {
		var p api.PendingApproval
		e2e.PollUntil(t, "alice's pending approval", func() bool {
			l := listed(replicas[0], alice)
			if len(l) == 1 {
				p = l[0]
			}
			return len(l) == 1
		})
		calls := proxy.served(p.Session, "tools/call")
		if len(calls) == 0 {
			t.Fatalf("no tools/call of session %s went through the proxy", p.Session)
		}
		return p, calls[len(calls)-1].backend
	}

	// Alice's call waits on one replica; approved (for the tool, the rest
	// of the session) through the other, it completes, and her next call
	// of the tool, on the other replica, needs no approval.
	waiting := e2e.GoClient(t, as(alice), []e2e.Step{
		e2e.MCPCall(map[string]any{"tool": "go_add", "args": map[string]any{"a": 2, "b": 3}, "timeoutMs": 120000}),
		e2e.MCPCall(map[string]any{"tool": "go_add", "args": map[string]any{"a": 4, "b": 5}, "timeoutMs": 120000}),
	})
	pending, holder := waitPending()
	other := replicas[1-holder]
	proxy.steer(pending.Session, 1-holder) // her next call
	if pending.User != "alice" || pending.Tool != "add" {
		t.Errorf("pending approval %+v, want alice's call of add", pending)
	}
	for i, d := range replicas {
		if l := listed(d, alice); len(l) != 1 || l[0].ID != pending.ID || l[0].Full == "" {
			t.Errorf("replica %d lists %+v for alice", i, l)
		}
		if out, err := d.CLIAs(t, bob, "approve", "--list"); err != nil || !strings.Contains(out, "No call waits for approval.") {
			t.Errorf("mcpgw approve --list as bob on replica %d: %v\n%s", i, err, out)
		}
		if out, err := d.CLIAs(t, bob, "approve", pending.ID); err == nil || !strings.Contains(out, "no such pending approval") {
			t.Errorf("mcpgw approve %s as bob on replica %d: %v\n%s", pending.ID, i, err, out)
		}
	}
	if out, err := other.CLIAs(t, alice, "approve", "--tool", pending.ID); err != nil || !strings.Contains(out, "allowed add on go ("+pending.ID+")") {
		t.Fatalf("mcpgw approve --tool %s as alice on the other replica: %v\n%s", pending.ID, err, out)
	}
	r = (<-waiting).Check(t)
	if r[0].IsError() || !strings.HasPrefix(r[0].Text(), "5") {
		t.Errorf("alice's approved call: %s", r[0])
	}
	if r[1].IsError() || !strings.HasPrefix(r[1].Text(), "9") {
		t.Errorf("alice's second call, under her grant: %s", r[1])
	}
	if got := backends(proxy.served(pending.Session, "tools/call")); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("alice's calls of add answered by replicas %v, want both", got)
	}
	for i, d := range replicas {
		if l := listed(d, alice); len(l) != 0 {
			t.Errorf("after the decision, replica %d lists %+v", i, l)
		}
	}

	// Her session ID with bob's token finds nothing, on either replica.
	post := func(d *e2e.Daemon, token, session, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, d.MCPURL(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if session == "" {
			return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
		}
		return resp.StatusCode, string(b)
	}
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for i, d := range replicas {
		if code, body := post(d, bob, first, list); code != http.StatusNotFound {
			t.Errorf("bob's tools/list in alice's session on replica %d: %d %s", i, code, body)
		}
	}
	// A session opened on replica 0 alone: bob cannot resume it on
	// replica 1, alice can.
	code, solo := post(replicas[0], alice, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if code != http.StatusOK || solo == "" {
		t.Fatalf("initialize on replica 0: %d, session %q", code, solo)
	}
	if code, body := post(replicas[1], bob, solo, list); code != http.StatusNotFound {
		t.Errorf("bob's tools/list in alice's session kept in the store, on replica 1: %d %s", code, body)
	}
	if code, body := post(replicas[1], alice, solo, list); code != http.StatusOK || !strings.Contains(body, `"name":"mcp"`) {
		t.Errorf("alice's tools/list in her session opened on replica 0, on replica 1: %d %s", code, body)
	}

	// A replica killed while alice's call waits on it: her approval stays
	// listed on the survivor until it is decided (the call itself died).
	dying := e2e.GoClient(t, as(alice), []e2e.Step{
		e2e.MCPCall(map[string]any{"tool": "go_add", "args": map[string]any{"a": 1, "b": 1}, "timeoutMs": 120000}),
	})
	pending, holder = waitPending()
	survivor := replicas[1-holder]
	proxy.setDown(holder)
	_ = syscall.Kill(-replicas[holder].Proc.Cmd.Process.Pid, syscall.SIGKILL)
	<-replicas[holder].Proc.Exited
	<-dying // its call failed with its replica
	if l := listed(survivor, alice); len(l) != 1 || l[0].ID != pending.ID {
		t.Fatalf("after its replica was killed, the survivor lists %+v, want %s", l, pending.ID)
	}
	if out, err := survivor.CLIAs(t, alice, "approve", "--deny", pending.ID); err != nil || !strings.Contains(out, "denied add on go ("+pending.ID+")") {
		t.Errorf("deciding the dead replica's approval on the survivor: %v\n%s", err, out)
	}
	if l := listed(survivor, alice); len(l) != 0 {
		t.Errorf("after the decision the survivor lists %+v", l)
	}

	// The store down: approvals cannot be listed, decided or asked for,
	// and say why; a session cannot be resumed, and says why; a session
	// the replica has goes on.
	rs.Stop()
	down := "the team store (" + rs.URL + ") cannot be reached"
	if out, err := survivor.CLIAs(t, alice, "approve", "--list"); err == nil || !strings.Contains(out, "pending approvals cannot be listed or decided: "+down) {
		t.Errorf("mcpgw approve --list with the store down: %v\n%s", err, out)
	}
	if code, body := post(survivor, alice, solo, list); code != http.StatusOK || !strings.Contains(body, `"name":"mcp"`) {
		t.Errorf("alice's tools/list in a session the survivor has, with the store down: %d %s", code, body)
	}
	if code, body := post(survivor, alice, solo, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"go_add","args":{"a":1,"b":2}}}}`); code != http.StatusOK ||
		!strings.Contains(body, "approval_limit") || !strings.Contains(body, "it cannot be listed for approval: "+down) {
		t.Errorf("a call that needs approval, with the store down: %d %s", code, body)
	}
	if code, body := post(survivor, alice, "00000000000000000000000000", list); code != http.StatusServiceUnavailable ||
		!strings.Contains(body, "cannot be resumed on this replica: "+down) {
		t.Errorf("a session the survivor does not have, with the store down: %d %s", code, body)
	}
}
