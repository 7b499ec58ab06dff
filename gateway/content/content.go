// Package content shapes tool results for the client that gets them:
// passed through for a client that sees the tool itself (but for content
// its protocol version does not know), made readable by any model for the
// mcp tool, cut to the output limit, and told apart from results that may
// be relayed as the upstream wrote them.
package content

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/jsonwire"
)

// Saver keeps data too big (or too binary) to show the model whole, and
// says where: an ID the mcp tool's read action takes, and a file path
// (gateway/spill). nil keeps nothing.
type Saver func(data []byte, mimeType string) (id, path string, err error)

// ForModel makes an upstream result readable by any model: text and
// images pass through, audio too where the client's protocol has it;
// resource links become text, embedded resources their text, and binary
// data the model cannot take (audio on an older protocol, a resource's
// blob) is saved with save and named; structuredContent is added as JSON
// text unless a text block already carries it. The `mcp` tool declares no
// output schema, so structured content itself is not forwarded.
func ForModel(res *mcp.CallToolResult, protocol string, save Saver) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError, Meta: res.Meta}
	for _, c := range res.Content {
		out.Content = append(out.Content, forModel(c, protocol, save))
	}
	if res.StructuredContent != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err == nil && !hasText(out.Content, data) && !carries(out.Content, res.StructuredContent) {
			out.Content = append(out.Content, &mcp.TextContent{Text: string(data)})
		}
	}
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	return out
}

func forModel(c mcp.Content, protocol string, save Saver) mcp.Content {
	switch c := c.(type) {
	case *mcp.AudioContent:
		if knownType("audio", protocol) {
			return c
		}
		return &mcp.TextContent{Text: saved(save, c.Data, c.MIMEType, fmt.Sprintf("[audio: %s, %d bytes", orUnknown(c.MIMEType), len(c.Data)))}
	case *mcp.EmbeddedResource:
		if rc := c.Resource; rc != nil && rc.Blob != nil {
			head := fmt.Sprintf("[resource: %s", rc.URI)
			if rc.MIMEType != "" {
				head += ", " + rc.MIMEType
			}
			return &mcp.TextContent{Text: saved(save, rc.Blob, rc.MIMEType, fmt.Sprintf("%s, %d bytes of binary data", head, len(rc.Blob)))}
		}
	}
	return ForModelContent(c)
}

// saved saves data and closes head (an open "[...") with where it is.
func saved(save Saver, data []byte, mimeType, head string) string {
	if save == nil {
		return head + "]"
	}
	id, path, err := save(data, mimeType)
	if err != nil {
		return head + "; could not be saved: " + err.Error() + "]"
	}
	return fmt.Sprintf("%s, saved as %s: %s]", head, id, path)
}

// carries reports whether the text blocks already say what structured
// says: every string and number in it, with at least one string of some
// length (server-filesystem's read_text_file returns the file as text and
// as {"content": ...}), so that the model reads it once, not twice. A
// structure of numbers alone is too easily "found" in unrelated text.
func carries(cs []mcp.Content, structured any) bool {
	var text strings.Builder
	for _, c := range cs {
		if t, ok := c.(*mcp.TextContent); ok {
			text.WriteString(t.Text)
			text.WriteByte('\n')
		}
	}
	if text.Len() == 0 {
		return false
	}
	var leaves []string
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for _, x := range v {
				if !walk(x) {
					return false
				}
			}
		case []any:
			for _, x := range v {
				if !walk(x) {
					return false
				}
			}
		case string:
			if v != "" {
				leaves = append(leaves, v)
			}
		case float64:
			leaves = append(leaves, strconv.FormatFloat(v, 'f', -1, 64))
		}
		return len(leaves) <= 256
	}
	// As JSON decodes it: maps, slices, strings, float64.
	data, err := json.Marshal(structured)
	var generic any
	if err != nil || json.Unmarshal(data, &generic) != nil || !walk(generic) || len(leaves) == 0 {
		return false
	}
	all := text.String()
	substantial := false
	for _, l := range leaves {
		if !strings.Contains(all, l) {
			return false
		}
		substantial = substantial || len(l) >= 8 && strings.ContainsFunc(l, unicode.IsLetter)
	}
	return substantial
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

// PassThrough returns res with only the content blocks protocol (the
// session's negotiated version) lacks converted as ForModelContent does:
// audio arrived in 2025-03-26, resource links in 2025-06-18.
func PassThrough(res *mcp.CallToolResult, protocol string) *mcp.CallToolResult {
	convert := false
	for _, c := range res.Content {
		if !knownContent(c, protocol) {
			convert = true
			break
		}
	}
	if !convert && res.Content != nil {
		return res
	}
	out := *res
	out.Content = make([]mcp.Content, 0, len(res.Content))
	for _, c := range res.Content {
		if !knownContent(c, protocol) {
			c = ForModelContent(c)
		}
		out.Content = append(out.Content, c)
	}
	return &out
}

func knownContent(c mcp.Content, protocol string) bool {
	switch c.(type) {
	case *mcp.AudioContent:
		return knownType("audio", protocol)
	case *mcp.ResourceLink:
		return knownType("resource_link", protocol)
	}
	return true
}

func ForModelContent(c mcp.Content) mcp.Content {
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

// FromResource turns a resources/read result into a tool result.
func FromResource(rr *mcp.ReadResourceResult) *mcp.CallToolResult {
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

// Guard caps the text of a result at limit bytes (limit ≤ 0: no cap),
// so one oversized answer cannot flood the model's context. Text past the
// cap is cut at a line (or at least a UTF-8) boundary; the whole text is
// saved with save, and a note says how much was shown and how to read the
// rest (or, with nothing saved, how much was left out). Images are not
// counted.
func Guard(res *mcp.CallToolResult, limit int, save Saver) *mcp.CallToolResult {
	if limit <= 0 {
		return res
	}
	total := 0
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			total += len(t.Text)
		}
	}
	if total <= limit {
		return res
	}
	budget, shown := limit, 0
	out := &mcp.CallToolResult{IsError: res.IsError, Meta: res.Meta, StructuredContent: res.StructuredContent}
	var whole []byte
	for _, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			out.Content = append(out.Content, c)
			continue
		}
		whole = append(whole, t.Text...)
		if budget <= 0 {
			continue
		}
		if len(t.Text) <= budget {
			out.Content = append(out.Content, t)
			budget -= len(t.Text)
			shown += len(t.Text)
			continue
		}
		cut := budget
		for cut > 0 && !utf8.RuneStart(t.Text[cut]) {
			cut--
		}
		if nl := strings.LastIndexByte(t.Text[:cut], '\n'); nl > cut/2 {
			cut = nl + 1
		}
		out.Content = append(out.Content, &mcp.TextContent{Text: t.Text[:cut], Annotations: t.Annotations})
		shown += cut
		budget = 0
	}
	note := fmt.Sprintf("[output truncated by mcpgw: %d of %d bytes shown. Ask for less (a filter, a page, a smaller range), or raise settings.maxOutputBytes.]", shown, total)
	if save != nil {
		if id, path, err := save(whole, "text/plain"); err == nil {
			note = fmt.Sprintf("[output cut by mcpgw: %d of %d bytes shown. The whole result is saved as %s: read on with mcp({read: %q, offset: %d}), or read the file %s.]",
				shown, total, id, id, shown, path)
		}
	}
	out.Content = append(out.Content, &mcp.TextContent{Text: note})
	return out
}

// Relayable reports whether a tool's raw result (a CallToolResult as the
// upstream wrote it) may reach a client of protocol as it is: what the
// SDK path would send is the same JSON value. That is a result with
// content, not an error (those get the tool's parameters appended), with
// no member the SDK does not know, only content the protocol knows, and
// no larger than the output limit (so nothing is cut). A result for the
// mcp tool (not exposed) must moreover be one that ForModel keeps as
// it is: text and images only, and no structured content.
func Relayable(raw []byte, protocol string, limit int, exposed bool) bool {
	if limit > 0 && len(raw) > limit {
		return false
	}
	good, content := true, false
	wellFormed := jsonwire.Members(raw, func(k, v []byte) bool {
		switch string(k) {
		case "content":
			content = true
			good = jsonwire.Elements(v, func(e []byte) bool {
				typ, _ := jsonwire.Member(e, "type")
				s, ok := jsonwire.String(typ)
				good = ok && knownType(s, protocol) && (exposed || s == "text" || s == "image")
				return good
			}) && good
		case "structuredContent":
			good = exposed
		case "_meta":
		case "isError":
			good = string(v) == "false"
		case "resultType":
			good = string(v) == `"complete"`
		default:
			good = false
		}
		return good
	})
	return wellFormed && good && content
}

// knownType reports whether a content type is known to a protocol version
// ("" when unknown: any).
func knownType(typ, protocol string) bool {
	switch typ {
	case "text", "image", "resource":
		return true
	case "audio":
		return protocol == "" || protocol >= "2025-03-26"
	case "resource_link":
		return protocol == "" || protocol >= "2025-06-18"
	}
	return false
}
