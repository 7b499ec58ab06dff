package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// bigListing is a cached listing of n tools, each with a schema of the
// size real servers send (a few properties with descriptions).
func bigListing(n int) *registry.Listing {
	l := &registry.Listing{Source: registry.SourceCache}
	for i := range n {
		l.Tools = append(l.Tools, &mcp.Tool{
			Name:        fmt.Sprintf("tool_%04d", i),
			Description: fmt.Sprintf("Does thing number %d to the repository, with care and at length.", i),
			InputSchema: map[string]any{"type": "object", "required": []any{"path"}, "properties": map[string]any{
				"path":    map[string]any{"type": "string", "description": "The file or directory to work on, relative to the root."},
				"limit":   map[string]any{"type": "integer", "description": "At most this many entries."},
				"recurse": map[string]any{"type": "boolean", "description": "Whether to descend into directories."},
			}},
		})
	}
	return l
}

// BenchmarkDirectSession1600 measures what a direct-mode session over
// 1,600 tools costs the daemon: the session made, its client (raw lines,
// so that only the daemon's work is counted) initialized, its tools
// listed once, and the session closed. On the shim's socket the list is
// answered on the fast path; "sdk" is a session the go-sdk alone serves.
func BenchmarkDirectSession1600(b *testing.B) {
	for _, shim := range []bool{true, false} {
		name := "shim"
		if !shim {
			name = "sdk"
		}
		b.Run(name, func(b *testing.B) { benchDirectSession(b, shim) })
	}
}

// bigDirectHub is a started direct-mode Hub whose one server, "big", is
// listed (as from the cache) with n tools; it is closed when tb ends.
func bigDirectHub(tb testing.TB, n int) *Hub {
	tb.Helper()
	cfg := &registry.Config{Servers: map[string]*registry.Server{"big": fakeupstream.Server("big", nil)},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect, DiscoveryTimeout: registry.DefaultDiscoveryTimeout}}
	gw := New(cfg, &Options{NoBootstrap: true})
	gw.Start()
	tb.Cleanup(func() { gw.Close() })
	gw.Catalog().SetListing(gw.Catalog().View().Config.Servers["big"].Hash, bigListing(n))
	return gw
}

func benchDirectSession(b *testing.B, shim bool) {
	gw := bigDirectHub(b, 1600)
	b.ReportAllocs()
	for b.Loop() {
		client, daemon := net.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if shim {
				_ = gw.transports.ServeShim(ctx, daemon)
			} else {
				_ = gw.ServeSession(ctx, &mcp.IOTransport{Reader: daemon, Writer: daemon, MaxLineLength: -1}, SessionOptions{}, nil)
			}
		}()
		br := bufio.NewReaderSize(client, 1<<20)
		send := func(line string) {
			if _, err := io.WriteString(client, line+"\n"); err != nil {
				b.Fatal(err)
			}
		}
		if shim {
			send(`{"mcpgw":1,"version":"bench"}`)
			if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"ok":true`) {
				b.Fatalf("handshake: %q, %v", line, err)
			}
		}
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		if _, err := br.ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		n := 0
		for cursor := ""; ; {
			params := "{}"
			if cursor != "" {
				params = `{"cursor":` + strconv.Quote(cursor) + `}`
			}
			send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":` + params + `}`)
			line, err := br.ReadBytes('\n')
			if err != nil {
				b.Fatal(err)
			}
			n += bytes.Count(line, []byte(`"name":"big_tool_`))
			var page struct {
				Result struct {
					NextCursor string `json:"nextCursor"`
				} `json:"result"`
			}
			if m := nextCursor.FindSubmatch(line); m != nil {
				_ = json.Unmarshal(append(append([]byte(`{"result":{"nextCursor":`), m[1]...), "}}"...), &page)
			}
			if cursor = page.Result.NextCursor; cursor == "" {
				break
			}
		}
		if n != 1600 {
			b.Fatalf("listed %d tools", n)
		}
		client.Close()
		cancel()
		<-done
	}
	b.ReportMetric(float64(gw.fastLists.Load())/float64(b.N), "fastlists/op")
}

var nextCursor = regexp.MustCompile(`"nextCursor":("[^"]*")`)

// BenchmarkSessionlessCall measures a forwarded echo call of protocol
// 2026-07-28 over HTTP (no session: the conversation its headers
// describe), direct mode, to a real stdio upstream, with and without the
// fast path.
func BenchmarkSessionlessCall(b *testing.B) {
	for _, noFast := range []bool{false, true} {
		name := map[bool]string{false: "fast", true: "sdk"}[noFast]
		b.Run(name, func(b *testing.B) {
			cfg := &registry.Config{Servers: map[string]*registry.Server{"a": fakeupstream.Server("a", nil)},
				Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect, DiscoveryTimeout: registry.DefaultDiscoveryTimeout}}
			gw := New(cfg, &Options{NoFastPath: noFast})
			gw.Start()
			defer gw.Close()
			ts := httptest.NewServer(gw.Handler(nil))
			defer ts.Close()
			body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a_echo","arguments":{"message":"hello through mcpgw"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
			post := func() []byte {
				req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
				for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
					"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "a_echo"} {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				defer resp.Body.Close()
				data, _ := io.ReadAll(resp.Body)
				return data
			}
			if data := post(); !bytes.Contains(data, []byte("hello through mcpgw")) {
				b.Fatalf("answer: %s", data)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				post()
			}
		})
	}
}

// BenchmarkSessionOffers measures what a session costs for the prompts,
// resources and templates it offers: two servers' worth (server-everything
// lists 100 resources and a handful of prompts and templates; the second
// server's colliding URIs are renamed), on a session made and closed.
func BenchmarkSessionOffers(b *testing.B) {
	cfg := &registry.Config{Servers: map[string]*registry.Server{"a": fakeupstream.Server("a", nil), "b": fakeupstream.Server("b", nil)},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect}}
	gw := New(cfg, &Options{NoBootstrap: true})
	gw.Start()
	defer gw.Close()
	for _, name := range []string{"a", "b"} {
		l := &registry.Listing{Source: registry.SourceCache}
		for i := range 10 {
			l.Prompts = append(l.Prompts, &mcp.Prompt{Name: fmt.Sprintf("prompt_%d", i), Description: "A prompt that asks for something at length.",
				Arguments: []*mcp.PromptArgument{{Name: "topic", Description: "What about", Required: true}}})
		}
		for i := range 100 {
			l.Resources = append(l.Resources, &mcp.Resource{Name: fmt.Sprintf("Resource %d", i), URI: fmt.Sprintf("test://static/resource/%d", i), MIMEType: "text/plain"})
		}
		l.Templates = []*mcp.ResourceTemplate{{Name: "Static Resource", URITemplate: "test://static/resource/{id}", MIMEType: "text/plain"}}
		gw.Catalog().SetListing(gw.Catalog().View().Config.Servers[name].Hash, l)
	}
	b.ReportAllocs()
	for b.Loop() {
		ss := gw.newSession(SessionOptions{}, nil, false)
		ss.cancel()
	}
}
