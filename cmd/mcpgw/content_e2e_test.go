//go:build linux

package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/upstream/upstreamtest"
)

// TestLargeBinaryContentByteExact calls, in direct mode, a tool that
// returns a 1 MiB image, 1 MiB of audio and a 1 MiB embedded blob: each
// arrives byte for byte, as does the result's _meta, and the text output
// limit (maxOutputBytes, here 64 KiB) leaves binary content alone.
func TestLargeBinaryContentByteExact(t *testing.T) {
	dir := t.TempDir()
	config := writeConfig(t, dir, map[string]any{
		"fixtures": map[string]any{"command": testServerBin, "args": []string{"conformance-upstream"}},
	}, map[string]any{"toolPrefix": "none", "mode": "direct", "maxOutputBytes": 65536})
	d := startDaemonProc(t, dir, config)
	c := mcp.NewClient(&mcp.Implementation{Name: "content", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: d.mcpURL()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
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
		if want := upstreamtest.LargeBytes(1<<20, c.seed); !bytes.Equal(c.got, want) {
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
