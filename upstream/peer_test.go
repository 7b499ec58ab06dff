//lint:file-ignore SA1019 sampling, roots and logging are deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; these tests exercise them.

package upstream

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// TestRelatedStreamTagsRequests feeds an SSE stream through the tagger: the
// server-to-client requests on it gain the peer tag in params._meta (even
// when their data spans lines and params had none), and every other event,
// comment and line ending passes through byte for byte.
func TestRelatedStreamTagsRequests(t *testing.T) {
	t.Parallel()
	in := ": a comment\r\n" +
		"id: 1\nretry: 500\ndata: \n\n" +
		"event: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n" +
		"id: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\n" +
		"data: \"method\":\"sampling/createMessage\",\"params\":{\"maxTokens\":5,\"messages\":[]}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"roots/list\"}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"elicitation/create\",\"params\":{\"_meta\":{\"k\":\"v\"},\"message\":\"m\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n" +
		"data: {\"partial\":"
	resp := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(in))}
	tagRelatedStream(resp, 42)
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := ": a comment\r\n" +
		"id: 1\nretry: 500\ndata: \n\n" +
		"event: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n" +
		"id: 3\ndata: {\"id\":7,\"jsonrpc\":\"2.0\",\"method\":\"sampling/createMessage\",\"params\":{\"_meta\":{\"io.mcpgw/peer\":42},\"maxTokens\":5,\"messages\":[]}}\n\n" +
		"data: {\"id\":8,\"jsonrpc\":\"2.0\",\"method\":\"roots/list\",\"params\":{\"_meta\":{\"io.mcpgw/peer\":42}}}\n\n" +
		"data: {\"id\":9,\"jsonrpc\":\"2.0\",\"method\":\"elicitation/create\",\"params\":{\"_meta\":{\"io.mcpgw/peer\":42,\"k\":\"v\"},\"message\":\"m\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n" +
		"data: {\"partial\":"
	if string(out) != want {
		t.Errorf("tagged stream:\n got: %q\nwant: %q", out, want)
	}

	// A JSON response, or no calling peer, is left alone.
	resp = &http.Response{Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader("{}"))}
	body := resp.Body
	tagRelatedStream(resp, 42)
	if resp.Body != body {
		t.Error("a JSON response was wrapped")
	}
}

// TestPeerForRouting checks the routing rule: the caller in ctx, else the
// tagged peer, else the only peer in flight; several is an error that
// names the isolation setting, none is an error too.
func TestPeerForRouting(t *testing.T) {
	t.Parallel()
	p := New(nil)
	defer p.Close()
	u := p.Upstream(&registry.Server{Name: "s", Command: "x", Hash: "h"})
	a, b := &fakePeer{name: "a"}, &fakePeer{name: "b"}
	ctx := context.Background()

	if _, err := u.peerFor(ctx, nil, "sampling/createMessage"); err == nil || !strings.Contains(err.Error(), "no session has a call in flight") {
		t.Errorf("no peer: err = %v", err)
	}
	u.addPeer(a)
	if got, err := u.peerFor(ctx, nil, "sampling/createMessage"); err != nil || got != a {
		t.Errorf("one peer: got %v, %v; want a", got, err)
	}
	u.addPeer(b)
	u.addPeer(b)
	if _, err := u.peerFor(ctx, nil, "elicitation/create"); err == nil || !strings.Contains(err.Error(), `"isolation": "session"`) {
		t.Errorf("two peers: err = %v", err)
	}
	if got, err := u.peerFor(WithPeer(ctx, b), nil, "x"); err != nil || got != b {
		t.Errorf("caller in ctx: got %v, %v; want b", got, err)
	}
	meta := mcp.Meta{metaKeyPeer: float64(u.peerTag(b)), "other": 1}
	if got, err := u.peerFor(ctx, meta, "x"); err != nil || got != b {
		t.Errorf("tagged: got %v, %v; want b", got, err)
	}
	if _, ok := meta[metaKeyPeer]; ok || len(meta) != 1 {
		t.Errorf("the tag stays in _meta: %v", meta)
	}
	u.removePeer(b) // one call of b still in flight
	if _, err := u.peerFor(ctx, nil, "x"); err == nil {
		t.Error("b's second call is forgotten")
	}
	u.removePeer(b)
	if got, err := u.peerFor(ctx, nil, "x"); err != nil || got != a {
		t.Errorf("after b's calls: got %v, %v; want a", got, err)
	}
	if u.peerTag(b) != 0 {
		t.Error("b keeps a tag with no call in flight")
	}
}

type fakePeer struct{ name string }

func (f *fakePeer) CreateMessage(context.Context, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return nil, nil
}
func (f *fakePeer) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return nil, nil
}
func (f *fakePeer) ElicitationComplete(context.Context, *mcp.ElicitationCompleteParams) {}
func (f *fakePeer) Roots(context.Context) ([]*mcp.Root, error)                          { return nil, nil }

// TestSessionUpstreams checks private upstreams: one per session and
// identity, apart from the shared one, closed by EndSession and by a
// Reconcile without their identity, and by Close.
func TestSessionUpstreams(t *testing.T) {
	t.Parallel()
	p := newPool(t, nil)
	srv, _ := testServer(t, "iso", nil)
	shared := p.Upstream(srv)
	a1, a2, b := p.SessionUpstream(srv, "a"), p.SessionUpstream(srv, "a"), p.SessionUpstream(srv, "b")
	if a1 != a2 || a1 == b || a1 == shared || b == shared {
		t.Fatalf("upstreams: shared %p, a %p and %p, b %p; want a's the same, the others distinct", shared, a1, a2, b)
	}
	if got := call(t, a1, "echo", map[string]any{"message": "hi"}); got != "hi" {
		t.Errorf("echo on a's upstream = %q", got)
	}
	if st := shared.Status().State; st != StateIdle {
		t.Errorf("the shared upstream is %s after a private call, want idle", st)
	}
	p.EndSession("a")
	if st := a1.Status().State; st != StateClosed {
		t.Errorf("a's upstream after EndSession: %s, want closed", st)
	}
	if p.SessionUpstream(srv, "a") == a1 {
		t.Error("a new call of session a reuses its closed upstream")
	}
	p.Reconcile(nil)
	if st := b.Status().State; st != StateClosed {
		t.Errorf("b's upstream after its server left the config: %s, want closed", st)
	}
	if n := len(p.Status()); n != 0 {
		t.Errorf("Status lists %d upstreams, want none", n)
	}
}

// A PeerContext answers PeerFrom with its peer, passes other values on
// to its parent, and ends with it, as WithPeer's context does.
func TestPeerContext(t *testing.T) {
	t.Parallel()
	p := &fakePeer{name: "a"}
	type otherKey struct{}
	parent, cancelParent := context.WithCancel(context.WithValue(context.Background(), otherKey{}, "v"))
	pc := &PeerContext{Context: parent, Peer: p}
	if got := PeerFrom(pc); got != p {
		t.Errorf("PeerFrom = %v, want the context's peer", got)
	}
	if got := pc.Value(otherKey{}); got != "v" {
		t.Errorf("Value(otherKey) = %v, want the parent's v", got)
	}
	if got := PeerFrom(WithPeer(pc, &fakePeer{name: "b"})); got.(*fakePeer).name != "b" {
		t.Errorf("a peer set on top: PeerFrom = %v, want b", got)
	}
	child, cancel := context.WithCancel(pc)
	defer cancel()
	cancelParent()
	select {
	case <-child.Done():
	case <-time.After(time.Minute):
		t.Fatal("a context made from a PeerContext outlived the PeerContext's parent")
	}
	if PeerFrom(child) != p {
		t.Error("the child lost the peer")
	}
}

// Counting a call in flight and its end allocates nothing once the
// upstream has counted one: every call does both. (Not parallel:
// AllocsPerRun.)
func TestPeerCountAllocatesNothing(t *testing.T) {
	p := New(nil)
	defer p.Close()
	u := p.Upstream(&registry.Server{Name: "s", Command: "x", Hash: "h"})
	a := &fakePeer{name: "a"}
	u.addPeer(a)
	u.removePeer(a)
	if n := testing.AllocsPerRun(100, func() { u.addPeer(a); u.removePeer(a) }); n != 0 {
		t.Errorf("a call's count in flight: %v allocations, want 0", n)
	}
	if u.peerTag(a) != 0 {
		t.Error("a keeps a tag with no call in flight")
	}
}
