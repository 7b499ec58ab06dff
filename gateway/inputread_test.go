package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// fixturesGateway serves, over HTTP, a gateway in mode whose one upstream
// (fix, connected) is the conformance server with its input_required
// fixtures, over Streamable HTTP, its tools and prompts under their own
// names.
func fixturesGateway(t *testing.T, mode registry.Mode) *httptest.Server {
	t.Helper()
	up := fakeupstream.ConformanceServer()
	uts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(uts.Close)
	srv := &registry.Server{Name: "fix", URL: uts.URL, Enabled: true, Lifecycle: registry.LifecycleLazy, Hash: "fix-hash"}
	cfg := &registry.Config{Servers: map[string]*registry.Server{"fix": srv}, Settings: registry.Settings{ToolPrefix: registry.PrefixNone, Mode: mode}}
	gw := New(cfg, &Options{NoBootstrap: true})
	t.Cleanup(func() { gw.Close() })
	gw.Start()
	if _, err := gw.Pool().Upstream(gw.Catalog().View().Config.Servers["fix"]).Connect(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(gw.Handler(nil))
	t.Cleanup(ts.Close)
	return ts
}

// An upstream's input_required result for resources/read reaches a
// 2026-07-28 client as it is, and the client's answer reaches the upstream
// with its retry, the upstream's sealed requestState untouched (the
// upstream refuses a changed one). A 2025 client that declared elicitation
// is asked by request; one that did not gets an error saying so, and the
// upstream is never answered for it.
func TestReadResourceInputRequired(t *testing.T) {
	t.Parallel()
	ts := fixturesGateway(t, ModeDirect)
	for _, tc := range []struct {
		version string
		elicit  bool
		want    string // the text read, or what the error says
	}{
		{sessionless, true, "decision: " + sessionless},
		{"2025-11-25", true, "decision: 2025-11-25"},
		{"2025-11-25", false, "does not support elicitation"},
	} {
		var asked []string
		var opts mcp.ClientOptions
		if tc.elicit {
			opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = append(asked, req.Params.Message)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": tc.version}}, nil
			}
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &opts)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: fakeupstream.InputRequiredResource})
		cs.Close()
		if !tc.elicit {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s without elicitation: read %v, error %v; want an error saying %q", tc.version, res, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: reading %s: %v", tc.version, fakeupstream.InputRequiredResource, err)
			continue
		}
		if len(res.Contents) != 1 || res.Contents[0].Text != tc.want || len(asked) != 1 {
			t.Errorf("%s: read %+v after %d questions (%q), want %q after one", tc.version, res.Contents, len(asked), asked, tc.want)
		}
	}
}

// Through the mcp tool, a 2026-07-28 client's read of a resource (its
// read_ tool) and get of a prompt relay the upstream's input_required as
// the mcp tool's answer; the client's retry of the same mcp call brings
// its answers, and the upstream's requestState, back to the upstream.
func TestMCPToolInputRequiredReadAndPrompt(t *testing.T) {
	t.Parallel()
	ts := fixturesGateway(t, ModeProxy)
	var asked []string
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "through mcp", "context": "the mcp tool"}}, nil
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: sessionless})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, tc := range []struct {
		args     map[string]any
		want     string
		question string
	}{
		{map[string]any{"tool": "read_input_required"}, "decision: through mcp", "Which decision should the resource show?"},
		{map[string]any{"prompt": "test_input_required_result_prompt"}, "Answer with this context in mind: the mcp tool", "What context should the prompt use?"},
	} {
		asked = nil
		text, isErr := callText(t, cs, "mcp", tc.args)
		if isErr || !strings.Contains(text, tc.want) || len(asked) != 1 || asked[0] != tc.question {
			t.Errorf("mcp(%v) = %q (error %v) after questions %q; want %q after %q", tc.args, text, isErr, asked, tc.want, tc.question)
		}
	}
}
