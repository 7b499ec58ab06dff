package dispatch

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/audit"
)

// In team mode a pending approval is its user's: another user neither
// lists nor decides it (nor does the daemon's owner, who is no user), and
// the audit log names the user on the call and on the decision.
func TestApprovalsAreTheUsers(t *testing.T) {
	dir := t.TempDir()
	log, err := audit.Open(filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "audit.key"), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := New(Options{Observer: &observed{}, Audit: log, Resolve: newDispatcher(nil).o.Resolve})
	alice := &fakeCaller{t: t, v: testView(t, `{"approveTools": ["*delete*"], "approvalTimeoutMs": 60000}`), user: "alice", grants: map[string]bool{}}
	c := &Call{Caller: alice, Name: "a_delete_thing", Args: json.RawMessage(`{"name":"x"}`), Route: ViaProxy}
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- d.Result(context.Background(), c) }()
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if list := d.ApprovalsOf("alice"); len(list) == 1 {
			id = list[0].ID
			if list[0].User != "alice" {
				t.Errorf("pending approval %+v, want user alice", list[0])
			}
		}
	}
	if id == "" {
		t.Fatal("alice's call is not pending")
	}
	if list := d.ApprovalsOf("bob"); len(list) != 0 {
		t.Errorf("bob sees %+v", list)
	}
	if list := d.Approvals(); len(list) != 0 {
		t.Errorf("outside team mode, one sees %+v", list)
	}
	if _, err := d.DecideAs("bob", id, "once", "cli"); err != ErrNoApproval {
		t.Errorf("bob's decision: %v, want ErrNoApproval", err)
	}
	if _, err := d.Decide(id, "once", "cli"); err != ErrNoApproval {
		t.Errorf("a decision of no user's: %v, want ErrNoApproval", err)
	}
	if _, err := d.DecideAs("alice", id, "deny", "cli"); err != nil {
		t.Fatalf("alice's decision: %v", err)
	}
	<-done
	if c.Outcome != "denied" {
		t.Errorf("outcome %q, want denied (alice's decision)", c.Outcome)
	}
	log.Close()
	f, err := os.Open(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		events = append(events, r.Event+":"+r.User+":"+r.DecidedBy)
	}
	if got := strings.Join(events, " "); got != "approval:alice:cli call:alice:cli" {
		t.Errorf("audit records (event:user:decidedBy) %q, want the approval and the call, both alice's", got)
	}
}
