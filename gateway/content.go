package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// convertResult makes an upstream result readable by any model: text and
// images pass through; audio, embedded resources and resource links become
// text; structuredContent is added as JSON text unless a text block already
// carries it. The `mcp` tool declares no output schema, so structured
// content itself is not forwarded.
func convertResult(res *mcp.CallToolResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError, Meta: res.Meta}
	for _, c := range res.Content {
		out.Content = append(out.Content, convertContent(c))
	}
	if res.StructuredContent != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err == nil && !hasText(out.Content, data) {
			out.Content = append(out.Content, &mcp.TextContent{Text: string(data)})
		}
	}
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	return out
}

// hasText reports whether some text block holds the same JSON value as data.
func hasText(cs []mcp.Content, data []byte) bool {
	var want any
	if json.Unmarshal(data, &want) != nil {
		return false
	}
	canon, _ := json.Marshal(want)
	for _, c := range cs {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		if strings.TrimSpace(t.Text) == string(data) {
			return true
		}
		var got any
		if json.Unmarshal([]byte(t.Text), &got) == nil {
			if g, _ := json.Marshal(got); bytes.Equal(g, canon) {
				return true
			}
		}
	}
	return false
}

func convertContent(c mcp.Content) mcp.Content {
	switch c := c.(type) {
	case *mcp.TextContent, *mcp.ImageContent:
		return c
	case *mcp.AudioContent:
		return &mcp.TextContent{Text: fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))}
	case *mcp.ResourceLink:
		var b strings.Builder
		fmt.Fprintf(&b, "[resource link: %s", c.URI)
		if c.Name != "" {
			fmt.Fprintf(&b, ", name %q", c.Name)
		}
		if c.MIMEType != "" {
			fmt.Fprintf(&b, ", %s", c.MIMEType)
		}
		b.WriteString("]")
		if c.Description != "" {
			b.WriteString(" " + c.Description)
		}
		return &mcp.TextContent{Text: b.String()}
	case *mcp.EmbeddedResource:
		return &mcp.TextContent{Text: resourceContentsText(c.Resource)}
	default:
		data, _ := json.Marshal(c)
		return &mcp.TextContent{Text: string(data)}
	}
}

func resourceContentsText(rc *mcp.ResourceContents) string {
	if rc == nil {
		return "[resource: empty]"
	}
	head := fmt.Sprintf("[resource: %s", rc.URI)
	if rc.MIMEType != "" {
		head += ", " + rc.MIMEType
	}
	if rc.Blob != nil {
		return fmt.Sprintf("%s, %d bytes of binary data]", head, len(rc.Blob))
	}
	return head + "]\n" + rc.Text
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// resourceResult turns a resources/read result into a tool result.
func resourceResult(rr *mcp.ReadResourceResult) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{}}
	for _, rc := range rr.Contents {
		if rc == nil {
			continue
		}
		if rc.Blob != nil && strings.HasPrefix(rc.MIMEType, "image/") {
			res.Content = append(res.Content, &mcp.ImageContent{Data: rc.Blob, MIMEType: rc.MIMEType})
			continue
		}
		if rc.Blob == nil && rc.Text != "" {
			res.Content = append(res.Content, &mcp.TextContent{Text: rc.Text})
			continue
		}
		res.Content = append(res.Content, &mcp.TextContent{Text: resourceContentsText(rc)})
	}
	return res
}
