//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/internal/shim/wire"
)

// welcome is the daemon's answer to a handshake (wire.Welcome).
type welcome struct {
	OK      bool   `json:"ok"`
	Session string `json:"session"`
	Secret  string `json:"secret"`
}

// dialSession opens a session on the daemon's socket as any client of the
// socket can: its own handshake line (wire.Hello), the daemon's welcome,
// then MCP lines.
func dialSession(t *testing.T, socket, session, secret string) (*lineClient, welcome) {
	t.Helper()
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	data, _ := json.Marshal(map[string]any{"mcpgw": wire.HandshakeProtocol, "session": session, "resume": true, "secret": secret})
	if _, err := conn.Write(append(data, '\n')); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	line, err := br.ReadBytes('\n')
	var wel welcome
	if err != nil || json.Unmarshal(line, &wel) != nil || !wel.OK {
		t.Fatalf("the daemon's welcome: %q, %v", line, err)
	}
	return newLineClient(t, conn, br), wel
}

// mustBeAsked: c's call of delete_thing with name waits for approval (no
// grant of c's covers it); it is denied from the CLI, so the upstream
// never sees it.
func mustBeAsked(t *testing.T, bin string, d *e2e.Daemon, c *lineClient, name string) {
	t.Helper()
	id := c.send("tools/call", map[string]any{"name": "mcp", "arguments": map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": name}}})
	answered := make(chan map[string]any, 1)
	go func() {
		for m := range c.lines {
			if got, ok := m["id"].(float64); ok && int(got) == id {
				answered <- m
				return
			}
		}
	}()
	var pending string
	e2e.PollUntil(t, "the call of "+name+" to wait for approval", func() bool {
		select {
		case m := <-answered:
			t.Fatalf("the call of %s was not asked about: %v", name, m)
		default:
		}
		for _, p := range d.Report(t).Approvals {
			if p.Tool == "delete_thing" && strings.Contains(p.Args, name) {
				pending = p.ID
			}
		}
		return pending != ""
	})
	if out, err := exec.Command(bin, "approve", "--deny", "--url", d.URL, pending).CombinedOutput(); err != nil {
		t.Fatalf("mcpgw approve --deny: %v\n%s", err, out)
	}
	select {
	case m := <-answered:
		if res, _ := m["result"].(map[string]any); res == nil || res["isError"] != true || !strings.Contains(answerText(m), "denied") {
			t.Errorf("the denied call of %s: %v", name, m)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no answer to the denied call of %s", name)
	}
}

// answerText is the text of a tools/call answer.
func answerText(m map[string]any) string {
	res, _ := m["result"].(map[string]any)
	var texts []string
	content, _ := res["content"].([]any)
	for _, ct := range content {
		if c, ok := ct.(map[string]any); ok && c["type"] == "text" {
			texts = append(texts, c["text"].(string))
		}
	}
	return strings.Join(texts, "\n")
}

// TestResumeNeedsTheSessionsSecret: a shim session allowed a guarded
// server for the session. Another client of the socket that names that
// session's ID (the approvals list shows it) with resume, while it is
// connected, gets a session of its own and is asked; so is one resuming
// a state file written by hand with a grant in it. The session's own
// shim, after the daemon restarts, resumes with its grant.
func TestResumeNeedsTheSessionsSecret(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{"p": e2e.PolicyServer(map[string]any{"approveTools": "destructive"})}, nil)
	d1 := e2e.StartDaemon(t, dir, config)
	victim := startShim(t, bin, "--socket", d1.Socket, "--no-start")
	victim.initialize("victim")
	id := victim.send("tools/call", map[string]any{"name": "mcp", "arguments": map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "v1"}}})
	p := e2e.WaitPending(t, d1, "delete_thing")
	if out, err := exec.Command(bin, "approve", "--server", "--url", d1.URL, p.ID).CombinedOutput(); err != nil {
		t.Fatalf("mcpgw approve --server: %v\n%s", err, out)
	}
	if text := answerText(victim.answer(id)); !strings.Contains(text, "deleted v1") {
		t.Fatalf("the approved call: %q", text)
	}

	// Another client of the socket names the connected session.
	forger, wel := dialSession(t, d1.Socket, p.Session, "")
	if wel.Session == p.Session || wel.Secret == "" {
		t.Errorf("a resume of a connected session is welcomed as %q (secret %q), want an ID of its own", wel.Session, wel.Secret)
	}
	forger.initialize("forger")
	mustBeAsked(t, bin, d1, forger, "forged-resume")

	// A state file written by hand.
	const handID = "0123456789abcdef0123456789abcdef"
	sessions := filepath.Join(dir, "state", "mcpgw", "sessions")
	if err := os.WriteFile(filepath.Join(sessions, handID+".json"), []byte(`{"mode":"proxy","grants":["server:p"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	hand, _ := dialSession(t, d1.Socket, handID, "a-guess")
	hand.initialize("hand")
	mustBeAsked(t, bin, d1, hand, "hand-written")
	if n := strings.Count(d1.Proc.Output.String(), "a shim session named a session that is not its own"); n != 2 {
		t.Errorf("the daemon warned of %d foreign resumes, want 2", n)
	}

	if text, _ := victim.callText("mcp", map[string]any{"tool": "p_delete_count"}); text != "1" {
		t.Errorf("delete_thing calls that reached the upstream: %s, want 1 (the victim's)", text)
	}

	// The session's own shim resumes it, grant and all, on the next daemon.
	_ = syscall.Kill(-d1.Proc.Cmd.Process.Pid, syscall.SIGTERM)
	<-d1.Proc.Exited
	e2e.StartDaemon(t, dir, config)
	if text, isErr := victim.callText("mcp", map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": "v2"}}); isErr || !strings.Contains(text, "deleted v2") {
		t.Errorf("the resumed session's call under its grant: %q", text)
	}
}
