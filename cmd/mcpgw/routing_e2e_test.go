//go:build linux

//lint:file-ignore SA1019 sampling, roots and logging are deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; these tests exercise them.

package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// routedClient is a downstream session that answers sampling, elicitation
// and roots as itself, and counts what it was asked.
type routedClient struct {
	name     string
	cs       *mcp.ClientSession
	sampled  atomic.Int32
	elicited atomic.Int32
	progress chan any // the token of each progress notification
	logs     atomic.Int32
}

func connectRouted(t *testing.T, d *e2e.Daemon, name string) *routedClient {
	t.Helper()
	rc := &routedClient{name: name, progress: make(chan any, 16)}
	c := mcp.NewClient(&mcp.Implementation{Name: "routing-" + name, Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			rc.sampled.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled by " + name}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rc.elicited.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": name, "email": name + "@example.com"}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			rc.progress <- req.Params.ProgressToken
		},
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { rc.logs.Add(1) },
	})
	c.AddRoots(&mcp.Root{URI: "file:///projects/" + name, Name: name})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: d.MCPURL() + "?mode=direct"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	rc.cs = cs
	return rc
}

// text calls tool and returns its text, failing the test on a protocol
// error.
func (rc *routedClient) text(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2e.WaitLimit)
	defer cancel()
	res, err := rc.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: calling %s: %v", rc.name, tool, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

// TestClientRequestsReachTheirSession runs two sessions against upstreams
// they share, of each kind: on protocol 2026-07-28 (the request is part of
// the call), on 2025-11-25 over stdio (the only session with a call in
// flight) and over Streamable HTTP (the call's response stream). Each
// sampling, elicitation and roots request reaches the session whose call
// caused it and never the other; on stdio with both sessions in flight the
// upstream is refused, and neither session is asked, unless the server is
// isolated per session.
func TestClientRequestsReachTheirSession(t *testing.T) {
	t.Parallel()
	httpUp := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return fakeupstream.ConformanceServer("2025-11-25")
	}, nil))
	t.Cleanup(httpUp.Close)
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"new":   map[string]any{"command": e2e.TestServerBin, "args": []string{"conformance-upstream"}},
		"stdio": map[string]any{"command": e2e.TestServerBin, "args": []string{"conformance-upstream", "2025-11-25"}},
		"http":  map[string]any{"url": httpUp.URL},
		"isolated": map[string]any{"command": e2e.TestServerBin, "args": []string{"conformance-upstream", "2025-11-25"},
			"env": map[string]any{"ROUTING_TEST": "isolated"}, "isolation": "session"},
	}, nil)
	d := e2e.StartDaemon(t, dir, config)
	a := connectRouted(t, d, "alice")
	b := connectRouted(t, d, "bob")

	for _, server := range []string{"new", "stdio", "http"} {
		for _, rc := range []*routedClient{a, b} {
			got, isErr := rc.text(t, server+"_test_sampling", map[string]any{"prompt": "hi"})
			if want := "LLM response: sampled by " + rc.name; isErr || got != want {
				t.Errorf("%s: %s sampling = %q (error %v), want %q", server, rc.name, got, isErr, want)
			}
			got, isErr = rc.text(t, server+"_test_elicitation", map[string]any{"message": "who?"})
			if want := `"username":"` + rc.name + `"`; isErr || !strings.Contains(got, want) {
				t.Errorf("%s: %s elicitation = %q (error %v), want it to contain %s", server, rc.name, got, isErr, want)
			}
			got, isErr = rc.text(t, server+"_test_roots", nil)
			if want := "Roots: file:///projects/" + rc.name; isErr || got != want {
				t.Errorf("%s: %s roots = %q (error %v), want %q", server, rc.name, got, isErr, want)
			}
		}
	}
	if a.sampled.Load() != 3 || b.sampled.Load() != 3 || a.elicited.Load() != 3 || b.elicited.Load() != 3 {
		t.Errorf("asked: alice sampled %d elicited %d, bob sampled %d elicited %d; want 3 each",
			a.sampled.Load(), a.elicited.Load(), b.sampled.Load(), b.elicited.Load())
	}

	// Bob has a call in flight on each upstream while Alice's call samples.
	for _, server := range []string{"stdio", "http", "new", "isolated"} {
		t.Run("concurrent/"+server, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := &mcp.CallToolParams{Name: server + "_test_wait", Arguments: map[string]any{"ms": 60000}}
				p.SetProgressToken("bob-wait-" + server)
				_, _ = b.cs.CallTool(ctx, p)
			}()
			defer func() { cancel(); wg.Wait() }()
			for waiting := true; waiting; {
				select {
				case token := <-b.progress: // bob's call has reached the upstream
					waiting = token != "bob-wait-"+server
				case <-time.After(e2e.WaitLimit):
					t.Fatal("bob's waiting call never reported progress")
				}
			}
			aBefore, bBefore := a.sampled.Load(), b.sampled.Load()
			got, isErr := a.text(t, server+"_test_sampling", map[string]any{"prompt": "hi"})
			if b.sampled.Load() != bBefore {
				t.Errorf("bob was asked to sample for alice's call")
			}
			switch server {
			case "stdio":
				if !isErr || !strings.Contains(got, "isolation") || a.sampled.Load() != aBefore {
					t.Errorf("ambiguous sampling on stdio = %q (error %v, alice asked %d times); want an error naming isolation, nobody asked",
						got, isErr, a.sampled.Load()-aBefore)
				}
			default:
				if want := "LLM response: sampled by alice"; isErr || got != want {
					t.Errorf("sampling = %q (error %v), want %q", got, isErr, want)
				}
			}
		})
	}
}

// TestLogsReachSessionsAtTheirLevels: an upstream's log messages during
// one session's call reach every session using the server, each filtered by
// the level that session set.
func TestLogsReachSessionsAtTheirLevels(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"fixtures": map[string]any{"command": e2e.TestServerBin, "args": []string{"conformance-upstream", "2025-11-25"}},
	}, nil)
	d := e2e.StartDaemon(t, dir, config)
	a, b := connectRouted(t, d, "alice"), connectRouted(t, d, "bob")
	ctx := context.Background()
	setLevel := func(rc *routedClient, level string) {
		if err := rc.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(level)}); err != nil {
			t.Fatal(err)
		}
	}
	// waitLogs waits, bounded, until rc has n messages.
	waitLogs := func(rc *routedClient, n int32) {
		t.Helper()
		deadline := time.Now().Add(e2e.WaitLimit)
		for rc.logs.Load() < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := rc.logs.Load(); got != n {
			t.Fatalf("%s has %d log messages, want %d", rc.name, got, n)
		}
	}
	setLevel(a, "debug")
	setLevel(b, "error")
	if got, isErr := a.text(t, "fixtures_test_tool_with_logging", nil); isErr || got != "Logging test completed" {
		t.Fatalf("logging tool = %q (error %v)", got, isErr)
	}
	waitLogs(a, 3) // three info messages
	setLevel(b, "info")
	if got, isErr := b.text(t, "fixtures_test_tool_with_logging", nil); isErr || got != "Logging test completed" {
		t.Fatalf("logging tool = %q (error %v)", got, isErr)
	}
	waitLogs(b, 3)
	waitLogs(a, 6)
	// Bob's first call found Bob at "error": none of its info messages
	// reached him, then or later.
	if got := b.logs.Load(); got != 3 {
		t.Errorf("bob has %d log messages, want 3", got)
	}
}
