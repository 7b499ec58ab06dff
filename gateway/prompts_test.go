package gateway

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// Prompts, resources and templates of two servers reach a session in every
// mode, prompts under gateway names, a URI both servers offer rewritten for
// the second; gets, reads and completions reach the right upstream. A
// proxy-mode session of pi-mcp-adapter, which would make a tool of each
// listed resource, lists none (its model reaches them through the mcp
// tool) and still reads each by its URI.
func TestPromptsAndResourcesForwarded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode   Mode
		prefix string // the client's naming: "mcpgw_" is pi-mcp-adapter's
	}{{ModeProxy, ""}, {ModeToolSearch, ""}, {ModeDirect, ""}, {ModeProxy, "mcpgw_"}, {ModeDirect, "mcpgw_"}} {
		mode, adapterProxy := tc.mode, tc.mode == ModeProxy && tc.prefix != ""
		t.Run(string(mode)+tc.prefix, func(t *testing.T) {
			t.Parallel()
			gw, _ := newTestGateway(t, registry.Settings{Mode: mode}, "alpha", "beta")
			connectNow(t, gw, "alpha")
			connectNow(t, gw, "beta")
			c := connect(t, gw, SessionOptions{ClientPrefix: tc.prefix})
			ctx := context.Background()

			pl, err := c.sess.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var prompts []string
			for _, p := range pl.Prompts {
				prompts = append(prompts, p.Name)
			}
			slices.Sort(prompts)
			if !slices.Equal(prompts, []string{"alpha_greet", "beta_greet"}) {
				t.Errorf("prompts = %v", prompts)
			}
			gp, err := c.sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "beta_greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil {
				t.Fatal(err)
			}
			if tc, ok := gp.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Say hello to Ada." {
				t.Errorf("beta_greet = %+v", gp.Messages[0].Content)
			}

			rl, err := c.sess.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range rl.Resources {
				uris = append(uris, r.URI)
			}
			switch {
			case adapterProxy:
				if len(uris) != 0 {
					t.Errorf("pi-mcp-adapter's proxy-mode session lists resources %v, want none", uris)
				}
			case !slices.Contains(uris, "test://hello") || !slices.Contains(uris, "mcpgw://beta/test://hello") || len(uris) != 6:
				t.Errorf("resources = %v", uris)
			}
			for uri, want := range map[string]string{"test://hello": "test://hello", "mcpgw://beta/test://hello": "mcpgw://beta/test://hello", "test://item/7": "test://item/7"} {
				rr, err := c.sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					t.Errorf("reading %s: %v", uri, err)
					continue
				}
				if rr.Contents[0].URI != want || rr.Contents[0].Text == "" {
					t.Errorf("reading %s: %+v", uri, rr.Contents[0])
				}
			}
			tl, err := c.sess.ListResourceTemplates(ctx, nil)
			if err != nil || len(tl.ResourceTemplates) != 2 {
				t.Errorf("templates = %+v, %v", tl, err)
			}
			cr, err := c.sess.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "alpha_greet"},
				Argument: mcp.CompleteParamsArgument{Name: "name", Value: "A"}})
			if err != nil || !slices.Equal(cr.Completion.Values, []string{"Ada", "Alan"}) {
				t.Errorf("completion = %+v, %v", cr, err)
			}
		})
	}
}

// A request's _meta reaches the upstream (the progress token aside, which
// the gateway replaces with its own).
func TestRequestMetaForwarded(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeDirect}, "alpha")
	connectNow(t, gw, "alpha")
	c := connect(t, gw, SessionOptions{})
	params := &mcp.CallToolParams{Name: "alpha_meta", Arguments: map[string]any{}, Meta: mcp.Meta{"com.example/trace": "abc-123"}}
	res, err := c.sess.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("alpha_meta: %v %+v", err, res)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(got, `"com.example/trace":"abc-123"`) {
		t.Errorf("the upstream saw _meta %s", got)
	}
}

// Over HTTP at 2026-07-28 each request names its client in its _meta,
// and one conversation serves every client that describes it alike: a
// proxy-mode resources/list from pi-mcp-adapter (client pi-mcp-KEY) lists
// no resources, as its session would, and the same conversation lists
// them to another client.
func TestSessionlessAdapterListsNoResources(t *testing.T) {
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeProxy}, "alpha")
	connectNow(t, gw, "alpha")
	ts := httptest.NewServer(gw.Handler(nil))
	t.Cleanup(ts.Close)
	for _, tc := range []struct {
		client string
		want   int
	}{{"pi-mcp-mcpgw", 0}, {"inspector", 3}, {"pi-mcp-mcpgw", 0}} {
		c := mcp.NewClient(&mcp.Implementation{Name: tc.client, Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: sessionless})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ListResources(context.Background(), nil)
		cs.Close()
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if len(uris) != tc.want {
			t.Errorf("client %s lists resources %v, want %d", tc.client, uris, tc.want)
		}
	}
}
