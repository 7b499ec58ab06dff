//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestLargeBinaryContentByteExact calls, in direct mode, a tool that
// returns a 1 MiB image, 1 MiB of audio and a 1 MiB embedded blob: each
// arrives byte for byte, as does the result's _meta, and the text output
// limit (maxOutputBytes, here 64 KiB) leaves binary content alone.
func TestLargeBinaryContentByteExact(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config := e2e.WriteConfig(t, dir, map[string]any{
		"fixtures": map[string]any{"command": e2e.TestServerBin, "args": []string{"conformance-upstream"}},
	}, map[string]any{"toolPrefix": "none", "mode": "direct", "maxOutputBytes": 65536})
	d := e2e.StartDaemon(t, dir, config)
	cs := connectGateway(t, d).cs
	ctx, cancel := context.WithTimeout(context.Background(), e2e.WaitLimit)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_large_content"})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 3 {
		t.Fatalf("result: error %v, %d content items; want 3", res.IsError, len(res.Content))
	}
	img, ok1 := res.Content[0].(*mcp.ImageContent)
	audio, ok2 := res.Content[1].(*mcp.AudioContent)
	emb, ok3 := res.Content[2].(*mcp.EmbeddedResource)
	if !ok1 || !ok2 || !ok3 || emb.Resource == nil {
		t.Fatalf("content types %T, %T, %T; want image, audio, embedded resource", res.Content[0], res.Content[1], res.Content[2])
	}
	for _, c := range []struct {
		what string
		got  []byte
		seed uint32
	}{{"image", img.Data, 1}, {"audio", audio.Data, 2}, {"blob", emb.Resource.Blob, 3}} {
		if want := fakeupstream.LargeBytes(1<<20, c.seed); !bytes.Equal(c.got, want) {
			t.Errorf("%s: %d bytes, differing from the upstream's %d", c.what, len(c.got), len(want))
		}
	}
	if img.MIMEType != "image/png" || audio.MIMEType != "audio/wav" || emb.Resource.URI != "test://large-blob" {
		t.Errorf("metadata: image %q, audio %q, blob %q", img.MIMEType, audio.MIMEType, emb.Resource.URI)
	}
	if got := res.Meta["io.mcpgw.test/marker"]; got != "large" {
		t.Errorf("result _meta = %v, want the upstream's marker", res.Meta)
	}
}

// TestStructuredContentNotRepeated calls tools of the official filesystem
// and memory servers, which return their data both as text and as
// structuredContent, through the mcp tool: the text the model reads holds
// the data once, and the bytes that saves are logged.
func TestStructuredContentNotRepeated(t *testing.T) {
	t.Parallel()
	node := e2e.NeedNode(t)
	dir := t.TempDir()
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	if err := os.WriteFile(filepath.Join(files, "notes.txt"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	config := e2e.WriteConfig(t, dir, map[string]any{
		"fs":     map[string]any{"command": node, "args": []string{e2e.Path("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), files}},
		"memory": map[string]any{"command": node, "args": []string{e2e.Path("node_modules/@modelcontextprotocol/server-memory/dist/index.js")}, "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
	}, map[string]any{"mode": "proxy"})
	d := e2e.StartDaemon(t, dir, config)
	cs := connectGateway(t, d).cs
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	text := func(res *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		once string // what must appear exactly once
	}{
		{"fs_read_text_file", map[string]any{"path": filepath.Join(files, "notes.txt")}, "lazy dog. The quick"},
		{"memory_create_entities", map[string]any{"entities": []any{map[string]any{"name": "mcpgw", "entityType": "project", "observations": []string{"a local multiplexing MCP gateway written in Go"}}}}, "a local multiplexing MCP gateway written in Go"},
		{"memory_read_graph", map[string]any{}, "a local multiplexing MCP gateway written in Go"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": tc.tool, "args": tc.args}})
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		got := text(res)
		if res.IsError {
			t.Fatalf("%s: %s", tc.tool, got)
		}
		if n := strings.Count(got, tc.once); n == 0 || (tc.tool == "fs_read_text_file" && strings.Count(got, body) != 1) || (tc.tool != "fs_read_text_file" && n != 1) {
			t.Errorf("%s: %q appears %d times in what the model reads:\n%.300s", tc.tool, tc.once, n, got)
		}
		// What the upstream sent, to compare: its text and its structured
		// content, both of which the model used to read.
		direct, err := directCall(ctx, t, node, tc.tool, tc.args, files, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: the model reads %d bytes; text plus structured content would be %d (%d saved)", tc.tool, len(got), direct, direct-len(got))
	}
}

// directCall calls a tool of the filesystem or memory server directly and
// returns the size of its text plus its structured content as JSON.
func directCall(ctx context.Context, t *testing.T, node, tool string, args map[string]any, files, dir string) (int, error) {
	t.Helper()
	server, name, _ := strings.Cut(tool, "_")
	var cmd *exec.Cmd
	if server == "fs" {
		cmd = exec.Command(node, e2e.Path("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), files)
	} else {
		cmd = exec.Command(node, e2e.Path("node_modules/@modelcontextprotocol/server-memory/dist/index.js"))
		cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+filepath.Join(dir, "memory-direct.jsonl"))
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	if name == "read_graph" {
		// The same graph as through the gateway.
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{"entities": []any{map[string]any{"name": "mcpgw", "entityType": "project", "observations": []string{"a local multiplexing MCP gateway written in Go"}}}}}); err != nil {
			return 0, err
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			n += len(tc.Text)
		}
	}
	if res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		n += len(data)
	}
	return n, nil
}
