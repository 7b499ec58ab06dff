package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/registry"
)

// A 2026-07-28 client over the shim is asked for an approval in the call's
// answer (input_required), since that revision has no server-to-client
// request; the SDK's client answers with its elicitation handler and
// retries. Allowed once, the call goes through and the next one is asked
// again; declined, it never reaches the upstream. A retry that echoes the
// state with other arguments, again, or from another session is asked
// afresh, never let through.
func TestApprovalByInputRequired(t *testing.T) {
	t.Parallel()
	gw := newPolicyGateway(t, registry.Settings{ApproveTools: destructive, ApprovalTimeout: time.Minute}, "")
	var mu sync.Mutex
	var forms []string
	answer := "once"
	cs := shimClient(t, gw, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			forms = append(forms, req.Params.Message)
			if answer == "decline" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": answer}}, nil
		},
	})
	call := func(name string) (string, bool) {
		t.Helper()
		return callText(t, cs, "mcp", map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": name}})
	}
	if text, isErr := call("one"); isErr || !strings.Contains(text, "deleted one (call 1)") {
		t.Fatalf("call allowed once through the form: %q (error %v)", text, isErr)
	}
	mu.Lock()
	if len(forms) != 1 || !strings.Contains(forms[0], "Allow the call of delete_thing on server p?") || !strings.Contains(forms[0], `name: "one"`) {
		t.Fatalf("forms shown: %q", forms)
	}
	answer = "decline"
	mu.Unlock()
	if n := len(gw.Approvals()); n != 0 {
		t.Errorf("approvals pending on the page: %d, want 0 (the client was asked)", n)
	}
	// Once is once: the next call is asked again, and declined.
	if text, isErr := call("two"); !isErr || !strings.Contains(text, "The user denied the call of delete_thing on server p (decided by elicitation)") {
		t.Fatalf("declined call: %q (error %v)", text, isErr)
	}
	mu.Lock()
	if len(forms) != 2 {
		t.Errorf("forms shown: %d, want 2", len(forms))
	}
	mu.Unlock()

	// By hand, as a client without the SDK's multi round trip.
	m := shimClient(t, gw, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not asked")
		},
	})
	first := manualOn(t, m, "four", "")
	form, _ := first.InputRequests[dispatch.InputApprovalKey].(*mcp.ElicitParams)
	if !first.NeedsInput() || first.RequestState == "" || form == nil || !strings.Contains(form.Message, `name: "four"`) {
		t.Fatalf("first round: %+v", first)
	}
	if other := manualOn(t, m, "five", first.RequestState); !other.NeedsInput() || other.RequestState == first.RequestState {
		t.Fatalf("a retry with other arguments was not asked afresh: %+v %q", other, resultText(other))
	}
	// Another session cannot use this one's state.
	if stolen := manualOn(t, shimClient(t, gw, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not asked")
		},
	}), "four", first.RequestState); !stolen.NeedsInput() {
		t.Fatalf("another session's retry with this one's state: %+v %q", stolen, resultText(stolen))
	}
	if same := manualOn(t, m, "four", first.RequestState); same.NeedsInput() || !strings.Contains(resultText(same), "deleted four (call 2)") {
		t.Fatalf("the retry with the form's answer: %+v %q", same, resultText(same))
	}
	if replay := manualOn(t, m, "four", first.RequestState); !replay.NeedsInput() {
		t.Fatalf("a replayed answer was let through again: %q", resultText(replay))
	}
	if text, _ := callText(t, cs, "mcp", map[string]any{"tool": "p_delete_count"}); text != "2" {
		t.Errorf("delete_thing calls that reached the upstream: %s, want 2 (one, four)", text)
	}
}

// shimClient connects a client with opts to gw as a 2026-07-28 shim
// session.
func shimClient(t *testing.T, gw *Hub, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gw.ServeSession(ctx, st, SessionOptions{}, nil)
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: sessionless})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })
	if got := cs.InitializeResult().ProtocolVersion; got != sessionless {
		t.Fatalf("negotiated %s, want %s", got, sessionless)
	}
	return cs
}

// manualOn calls p_delete_thing{name} through the mcp tool on cs; with
// state, as the retry of an input_required answer that accepts mcpgw's
// approval form once.
func manualOn(t *testing.T, cs *mcp.ClientSession, name, state string) *mcp.CallToolResult {
	t.Helper()
	p := &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": "p_delete_thing", "args": map[string]any{"name": name}}}
	if state != "" {
		p.RequestState = state
		p.InputResponses = mcp.InputResponseMap{dispatch.InputApprovalKey: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}}}
	}
	res, err := cs.CallTool(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// resultText is the text of res's text contents, a line each.
func resultText(res *mcp.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// The input_required answer a 2026-07-28 client gets for an approval
// says nothing of content, on the fast path and on the SDK's (a progress
// token takes a call there): the revision's InputRequiredResult has none,
// and a client that reads it as a complete result would find a null.
func TestInputRequiredHasNoContent(t *testing.T) {
	t.Parallel()
	gw := newPolicyGateway(t, registry.Settings{ApproveTools: destructive, ApprovalTimeout: time.Minute}, "")
	send := openShimConn(t, gw)
	canElicit := func(req string) string {
		return strings.Replace(req, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}`, 1)
	}
	send(canElicit(with2026Meta(t, `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}`)))
	for i, meta := range []string{`{}`, `{"progressToken":"p"}`} {
		line := send(canElicit(with2026Meta(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"tools/call","params":{"_meta":`+meta+
			`,"name":"mcp","arguments":{"tool":"p_delete_thing","args":{"name":"x"}}}}`)))
		var ans struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(line, &ans); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if string(ans.Result["resultType"]) != `"input_required"` || ans.Result["inputRequests"] == nil {
			t.Fatalf("_meta %s: the approval was asked with %s", meta, line)
		}
		if c, has := ans.Result["content"]; has {
			t.Errorf("_meta %s: the input_required result has content %s", meta, c)
		}
	}
}
