package content

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestConvertResult(t *testing.T) {
	res := &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: "hello"},
			&mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
			&mcp.AudioContent{Data: make([]byte, 10), MIMEType: "audio/wav"},
			&mcp.ResourceLink{URI: "file:///a.txt", Name: "a", MIMEType: "text/plain", Description: "the file"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://x", MIMEType: "text/plain", Text: "inside"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", Blob: []byte("xyz")}},
		},
		StructuredContent: map[string]any{"sum": 3},
	}
	var saves []string
	save := func(data []byte, mimeType string) (string, string, error) {
		saves = append(saves, fmt.Sprintf("%s:%d", mimeType, len(data)))
		id := fmt.Sprintf("r-%d", len(saves))
		return id, "/state/" + id, nil
	}
	out := ForModel(res, "2024-11-05", save)
	var texts []string
	images := 0
	for _, c := range out.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			texts = append(texts, c.Text)
		case *mcp.ImageContent:
			images++
		default:
			t.Errorf("unexpected content %T", c)
		}
	}
	want := []string{
		"hello",
		"[audio: audio/wav, 10 bytes, saved as r-1: /state/r-1]",
		`[resource link: file:///a.txt, name "a", text/plain] the file`,
		"[resource: mem://x, text/plain]\ninside",
		"[resource: mem://b, 3 bytes of binary data, saved as r-2: /state/r-2]",
		`{"sum":3}`,
	}
	if strings.Join(texts, "|") != strings.Join(want, "|") {
		t.Errorf("texts =\n%q\nwant\n%q", texts, want)
	}
	if strings.Join(saves, " ") != "audio/wav:10 :3" {
		t.Errorf("saved %q", saves)
	}
	// A client whose protocol has audio gets it as audio.
	if out := ForModel(res, "2025-11-25", save); out.Content[2].(*mcp.AudioContent) == nil {
		t.Errorf("audio for a 2025-11-25 client: %T", out.Content[2])
	}
	if images != 1 {
		t.Errorf("images = %d, want 1", images)
	}

	// Structured content already present as text is not repeated.
	dup := ForModel(&mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: `{ "sum": 3 }`}},
		StructuredContent: map[string]any{"sum": 3},
	}, "", nil)
	if len(dup.Content) != 1 {
		t.Errorf("duplicate structured content added: %d blocks", len(dup.Content))
	}
	// Nor when the text says the same in its own words (a file's text and
	// {"content": the text}, as server-filesystem's read_text_file does).
	file := "first line of the file\nsecond line"
	same := ForModel(&mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: file}},
		StructuredContent: map[string]any{"content": file},
	}, "", nil)
	if len(same.Content) != 1 {
		t.Errorf("structured content the text carries was added: %d blocks", len(same.Content))
	}
	// But it is, when the text leaves something out.
	more := ForModel(&mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: file}},
		StructuredContent: map[string]any{"content": file, "path": "/tmp/notes.txt"},
	}, "", nil)
	if len(more.Content) != 2 {
		t.Errorf("structured content with more than the text: %d blocks, want 2", len(more.Content))
	}
}

func TestGuardOutput(t *testing.T) {
	long := strings.Repeat("line of text\n", 100) // 1,300 bytes
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "head\n"},
		&mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"},
		&mcp.TextContent{Text: long},
		&mcp.TextContent{Text: "tail"},
	}}
	if got := Guard(res, 10000, nil); got != res {
		t.Error("a result under the limit was changed")
	}
	if got := Guard(res, -1, nil); got != res {
		t.Error("no limit changed the result")
	}
	got := Guard(res, 500, nil)
	var texts []string
	images := 0
	size := 0
	for _, c := range got.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			texts = append(texts, c.Text)
		case *mcp.ImageContent:
			images++
		}
	}
	if images != 1 || len(texts) != 3 {
		t.Fatalf("content = %d texts, %d images; want 3 texts (head, cut, note) and the image", len(texts), images)
	}
	for _, s := range texts[:2] {
		size += len(s)
	}
	if size > 500 || !strings.HasSuffix(texts[1], "\n") {
		t.Errorf("kept %d bytes, cut %q; want ≤ 500 ending at a line", size, texts[1][max(0, len(texts[1])-20):])
	}
	want := fmt.Sprintf("[output truncated by mcpgw: %d of %d bytes shown.", size, 5+len(long)+4)
	if !strings.HasPrefix(texts[2], want) {
		t.Errorf("note = %q, want prefix %q", texts[2], want)
	}
	// With a saver, the whole text is kept and the note says how to read on.
	var kept []byte
	got = Guard(res, 500, func(data []byte, mimeType string) (string, string, error) {
		kept = data
		return "r-1.txt", "/state/r-1.txt", nil
	})
	note := got.Content[len(got.Content)-1].(*mcp.TextContent).Text
	if string(kept) != "head\n"+long+"tail" || !strings.Contains(note, fmt.Sprintf(`saved as r-1.txt: read on with mcp({read: "r-1.txt", offset: %d}), or read the file /state/r-1.txt.`, size)) {
		t.Errorf("kept %d bytes; note %q", len(kept), note)
	}
	// A cut never splits a UTF-8 sequence.
	u := Guard(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("é", 100)}}}, 51, nil)
	if s := u.Content[0].(*mcp.TextContent).Text; !utf8.ValidString(s) || len(s) != 50 {
		t.Errorf("cut = %d bytes, valid %v", len(s), utf8.ValidString(s))
	}
}

// TestProxyPrompts lists and gets prompts through the mcp tool.
