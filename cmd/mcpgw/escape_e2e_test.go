//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/audit"
	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestCLIEscapesWhatClientsWrite: a client whose name carries a newline,
// a forged audit line and terminal escapes (clear the screen, a C1 CSI, a
// right-to-left override) waits for approval; `mcpgw approve --list` and
// `mcpgw audit`, run as a user runs them against a real daemon, print it
// escaped on the one line it belongs to (an argument's key too), and `mcpgw audit --json` prints
// JSON that decodes to the name as the client sent it.
func TestCLIEscapesWhatClientsWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"p": e2e.PolicyServer(map[string]any{"approveTools": []string{"delete_thing"}}),
	}, map[string]any{"approvalTimeoutMs": 120000})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	bin := e2e.BuildMcpgw(t)
	const evil = "pi\n2026-01-01 00:00:00\tp/delete_thing\tapproval allowed by cli\x1b[2J\x1b[H\u009b31m\u202eok"

	c := mcp.NewClient(&mcp.Implementation{Name: evil, Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: d.MCPURL(), MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{
			"tool": "p_delete_thing", "args": map[string]any{"name": "x\x1b[2J\ny", "why\x1b[2J\u009b2J": "z"}}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	p := e2e.WaitPending(t, d, "delete_thing")

	// No raw control character, and each line what it says it is.
	clean := func(what, out string) {
		t.Helper()
		if i := strings.IndexFunc(out, func(r rune) bool {
			return (r < 0x20 && r != '\n') || (r >= 0x7f && r < 0xa0) || r == '\u202e'
		}); i >= 0 {
			t.Errorf("%s prints %q raw:\n%q", what, out[i:i+1], out)
		}
		if strings.Contains(out, "\n2026-01-01") {
			t.Errorf("%s prints the client's forged line as a line of its own:\n%s", what, out)
		}
	}
	escaped := `pi\n2026-01-01 00:00:00\tp/delete_thing\tapproval allowed by cli\u001b[2J\u001b[H\u009b31m\u202eok`
	list, err := exec.Command(bin, "approve", "--list", "--url", d.URL).CombinedOutput()
	if err != nil {
		t.Fatalf("mcpgw approve --list: %v\n%s", err, list)
	}
	clean("mcpgw approve --list", string(list))
	if !strings.Contains(string(list), p.ID+"  delete_thing on p  session ") || !strings.Contains(string(list), "("+escaped+")") {
		t.Errorf("mcpgw approve --list does not show the client escaped on its call's line:\n%s", list)
	}
	// The form quotes a key that is not a plain name, with its controls
	// escaped, so no key can pass for another line.
	if !strings.Contains(string(list), "\n      \"why\\x1b[2J\\u009b2J\": \"z\"\n") {
		t.Errorf("mcpgw approve --list does not show the argument's key escaped:\n%s", list)
	}
	if out, err := exec.Command(bin, "approve", "--deny", "--url", d.URL, p.ID).CombinedOutput(); err != nil {
		t.Fatalf("mcpgw approve --deny: %v\n%s", err, out)
	}
	if res := <-done; res == nil || !res.IsError {
		t.Fatalf("the denied call: %+v", res)
	}

	logPath := filepath.Join(dir, "state", "mcpgw", "audit.jsonl")
	var records []string
	e2e.PollUntil(t, "the denied call on the audit log", func() bool {
		data, _ := os.ReadFile(logPath)
		records = strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		return strings.Contains(string(data), `"outcome":"denied"`)
	})
	out, err := exec.Command(bin, "audit", "--file", logPath).CombinedOutput()
	if err != nil {
		t.Fatalf("mcpgw audit: %v\n%s", err, out)
	}
	clean("mcpgw audit", string(out))
	lineStart := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  p/delete_thing `)
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	n := 0
	for sc.Scan() {
		n++
		if !lineStart.MatchString(sc.Text()) || !strings.Contains(sc.Text(), "("+escaped+")") {
			t.Errorf("mcpgw audit line %q: want one record a line, the client escaped", sc.Text())
		}
	}
	if n != len(records) {
		t.Errorf("mcpgw audit printed %d lines for %d records:\n%s", n, len(records), out)
	}
	js, err := exec.Command(bin, "audit", "--json", "--file", logPath).CombinedOutput()
	if err != nil {
		t.Fatalf("mcpgw audit --json: %v\n%s", err, js)
	}
	clean("mcpgw audit --json", string(js))
	sc = bufio.NewScanner(strings.NewReader(string(js)))
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Client != evil {
			t.Errorf("mcpgw audit --json line %s: client %q, %v", sc.Text(), r.Client, err)
		}
	}
	total := 0
	for _, r := range records {
		total += len(r) + 1
	}
	t.Logf("%d audit records, %d bytes a record on average (this client's name is %d bytes)", len(records), total/len(records), len(evil))
}
