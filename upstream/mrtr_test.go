//lint:file-ignore SA1019 sampling, roots and logging are deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; these tests exercise them.

package upstream

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// answeringPeer accepts elicitations with its name and has one root.
type answeringPeer struct{ name string }

func (a answeringPeer) CreateMessage(context.Context, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: a.name}}}, nil
}
func (a answeringPeer) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"who": a.name}}, nil
}
func (answeringPeer) ElicitationComplete(context.Context, *mcp.ElicitationCompleteParams) {}
func (a answeringPeer) Roots(context.Context) ([]*mcp.Root, error) {
	return []*mcp.Root{{URI: "file:///" + a.name}}, nil
}

// TestRoundTrips runs calls that need input on protocol 2026-07-28: the
// pool answers every input request of a round (here sampling, elicitation
// and roots at once) through the caller's peer and calls again; a server
// that keeps asking, or keeps shedding load, is given up on with an error
// after a bounded number of rounds.
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	var rounds atomic.Int32
	server := mcp.NewServer(&mcp.Implementation{Name: "mrtr", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "three", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in := req.Params.InputResponses
		if len(in) == 0 {
			return &mcp.CallToolResult{RequestState: "s1", InputRequests: mcp.InputRequestMap{
				"sample": &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "q"}}}},
				"elicit": &mcp.ElicitParams{Message: "who?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}}},
				"roots":  &mcp.ListRootsParams{},
			}}, nil
		}
		if req.Params.RequestState != "s1" {
			return nil, fmt.Errorf("request state %q", req.Params.RequestState)
		}
		s := in["sample"].(*mcp.CreateMessageWithToolsResult).Content[0].(*mcp.TextContent).Text
		e := in["elicit"].(*mcp.ElicitResult).Content["who"]
		r := in["roots"].(*mcp.ListRootsResult).Roots[0].URI
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s %v %s", s, e, r)}}}, nil
	})
	server.AddTool(&mcp.Tool{Name: "greedy", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rounds.Add(1)
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"again": &mcp.ElicitParams{Message: "more", RequestedSchema: map[string]any{"type": "object"}}}}, nil
	})
	server.AddTool(&mcp.Tool{Name: "busy", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rounds.Add(1)
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}}, nil
	})
	p := New(nil)
	defer p.Close()
	p.dial = func(ctx context.Context, _ *Upstream, _ *registry.Server, o dialOptions) (*session, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := server.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		kt := &keptTransport{Transport: ct}
		cs, err := o.client.Connect(ctx, kt, o.sessionOptions())
		if err != nil {
			return nil, err
		}
		return &session{cs: cs, kind: "memory", conn: kt.conn}, nil
	}
	u := p.Upstream(&registry.Server{Name: "mrtr", Command: "in-memory", Hash: "mrtr"})
	ctx := WithPeer(context.Background(), answeringPeer{"ann"})
	res, err := u.Call(ctx, "three", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(res); got != "ann ann file:///ann" {
		t.Errorf("three = %q, want the peer's answers", got)
	}
	if snap := u.Snapshot(); snap == nil || snap.ProtocolVersion < sessionlessProtocol {
		t.Fatalf("negotiated %v, want protocol %s or later", snap, sessionlessProtocol)
	}
	for _, c := range []struct {
		tool   string
		rounds int32
		err    string
	}{{"greedy", maxRoundTrips, "still needed input after 10 rounds"}, {"busy", maxLoadShedding, "asked to retry 3 times"}} {
		rounds.Store(0)
		_, err := u.Call(ctx, c.tool, nil, nil)
		if err == nil || !strings.Contains(err.Error(), c.err) || rounds.Load() != c.rounds {
			t.Errorf("%s: err = %v after %d rounds; want %q after %d", c.tool, err, rounds.Load(), c.err, c.rounds)
		}
	}
}
