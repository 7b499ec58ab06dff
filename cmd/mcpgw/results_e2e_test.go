//go:build unix

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSavedResultsAreTheSessionsOwn: a result too big to show is saved for
// the session it was given to. Another session naming its ID reads
// nothing, and a link planted in its place in the results directory is
// refused rather than followed, through mcp({read}) against a real
// daemon. (The client is the go-sdk's: the test acts between a session's
// calls.)
func TestSavedResultsAreTheSessionsOwn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"go": map[string]any{"command": e2e.TestServerBin, "args": []string{"testserver"}},
	}, map[string]any{"maxOutputBytes": 1000})
	d := e2e.StartDaemon(t, dir, config, "--no-bootstrap")
	ctx := t.Context()
	open := func(name string) *mcp.ClientSession {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.MCPURL(), MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	mcpText := func(cs *mcp.ClientSession, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return resultText(res)
	}
	a, b := open("a"), open("b")
	whole := strings.Repeat("0123456789", 500)
	cut := mcpText(a, map[string]any{"tool": "go_echo", "args": map[string]any{"message": whole}})
	m := regexp.MustCompile(`saved as (r-[0-9a-f]+\.txt).*read the file (\S+)\.\]`).FindStringSubmatch(cut)
	if m == nil {
		t.Fatalf("no saved result in %q", cut)
	}
	id, path := m[1], m[2]
	read := func(cs *mcp.ClientSession) string {
		return mcpText(cs, map[string]any{"read": id, "offset": 0, "limit": 100})
	}
	if got := read(a); !strings.Contains(got, "0123456789") {
		t.Fatalf("the session reading its own result: %q", got)
	}
	if got := read(b); strings.Contains(got, "0123456789") || !strings.Contains(got, "No saved result") {
		t.Errorf("another session reading it: %q", got)
	}
	// The file replaced by a link to one of the user's files.
	secret := dir + "/secret.txt"
	if err := os.WriteFile(secret, []byte("SECRET CONTENTS"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, path); err != nil {
		t.Fatal(err)
	}
	if got := read(a); strings.Contains(got, "SECRET") || !strings.Contains(got, "not a regular file") {
		t.Errorf("reading a planted link: %q", got)
	}
}
