package upstream

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/jsonwire"
)

// DecodeResult decodes a CallToolResult into res as the SDK does, with
// encoding/json: the SDK's own decoding makes a new JSON decoder with a
// 32 KiB buffer for every message (docs/sdk-decoder.md), which is most of
// what a forwarded call allocates. Content of the five types a tool
// result carries is decoded here; a result with anything else (other
// content types, multi round-trip members) is left to the SDK. The
// "resultType": "complete" of protocol 2026-07-28 says nothing beyond
// "this is the result" and is dropped: the gateway's clients speak
// earlier versions, which do not have it.
func DecodeResult(raw json.RawMessage, res *mcp.CallToolResult) error {
	var w struct {
		Meta              mcp.Meta          `json:"_meta"`
		Content           []json.RawMessage `json:"content"`
		StructuredContent any               `json:"structuredContent"`
		IsError           bool              `json:"isError"`
	}
	sdk := false
	jsonwire.Members(raw, func(k, v []byte) bool {
		switch string(k) {
		case "_meta", "content", "structuredContent", "isError":
			return true
		case "resultType":
			sdk = string(v) != `"complete"`
			return !sdk
		}
		sdk = true // inputRequests, requestState, or unknown
		return false
	})
	if sdk {
		return json.Unmarshal(raw, res)
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return err
	}
	out := mcp.CallToolResult{Meta: w.Meta, StructuredContent: w.StructuredContent, IsError: w.IsError, Content: make([]mcp.Content, 0, len(w.Content))}
	for _, data := range w.Content {
		var c wireContent
		if err := json.Unmarshal(data, &c); err != nil {
			return err
		}
		block := c.content()
		if block == nil {
			return json.Unmarshal(raw, res)
		}
		out.Content = append(out.Content, block)
	}
	*res = out
	return nil
}

// wireContent is a content block as a tool result carries it.
type wireContent struct {
	Type        string                `json:"type"`
	Text        string                `json:"text"`
	MIMEType    string                `json:"mimeType"`
	Data        []byte                `json:"data"`
	Resource    *mcp.ResourceContents `json:"resource"`
	URI         string                `json:"uri"`
	Name        string                `json:"name"`
	Title       string                `json:"title"`
	Description string                `json:"description"`
	Size        *int64                `json:"size"`
	Meta        mcp.Meta              `json:"_meta"`
	Annotations *mcp.Annotations      `json:"annotations"`
	Icons       []mcp.Icon            `json:"icons"`
}

// content is the block w describes, or nil for a type not decoded here.
func (w *wireContent) content() mcp.Content {
	switch w.Type {
	case "text":
		return &mcp.TextContent{Text: w.Text, Meta: w.Meta, Annotations: w.Annotations}
	case "image":
		return &mcp.ImageContent{Data: w.Data, MIMEType: w.MIMEType, Meta: w.Meta, Annotations: w.Annotations}
	case "audio":
		return &mcp.AudioContent{Data: w.Data, MIMEType: w.MIMEType, Meta: w.Meta, Annotations: w.Annotations}
	case "resource_link":
		return &mcp.ResourceLink{URI: w.URI, Name: w.Name, Title: w.Title, Description: w.Description, MIMEType: w.MIMEType,
			Size: w.Size, Meta: w.Meta, Annotations: w.Annotations, Icons: w.Icons}
	case "resource":
		return &mcp.EmbeddedResource{Resource: w.Resource, Meta: w.Meta, Annotations: w.Annotations}
	}
	return nil
}

// withoutServerInfo returns a result without the server's information in
// its _meta (and without _meta if nothing else is in it). Servers of
// protocol 2026-07-28 name themselves in every result
// (mcp.MetaKeyServerInfo); that belongs to the hop between mcpgw and the
// upstream, not to the result a client gets: mcpgw's clients speak to
// mcpgw, and an SDK serving them at 2026-07-28 adds its own only where
// none is set. It works in raw's own bytes: a raw call's result is the
// call's alone.
func withoutServerInfo(raw []byte) []byte {
	if !bytes.Contains(raw, []byte(`"`+mcp.MetaKeyServerInfo+`"`)) {
		return raw
	}
	meta, ok := jsonwire.Member(raw, "_meta")
	if !ok {
		return raw
	}
	start := cap(raw) - cap(meta) // meta is a slice of raw
	end := start + len(meta)
	rest := jsonwire.Delete(meta, mcp.MetaKeyServerInfo)
	if len(rest) == len(meta) {
		return raw // not a member of _meta itself
	}
	// The member is gone from _meta's bytes; what follows _meta moves up.
	n := copy(raw[start+len(rest):], raw[end:])
	raw = raw[:start+len(rest)+n]
	if isEmptyObject(rest) {
		raw = jsonwire.Delete(raw, "_meta")
	}
	return raw
}

// dropServerInfo is withoutServerInfo for a decoded result.
func dropServerInfo(r mcp.Result) {
	m := r.GetMeta()
	if _, ok := m[mcp.MetaKeyServerInfo]; !ok {
		return
	}
	delete(m, mcp.MetaKeyServerInfo)
	if len(m) == 0 {
		r.SetMeta(nil)
	}
}

// isEmptyObject reports whether obj is {} (with any spacing).
func isEmptyObject(obj []byte) bool {
	obj = bytes.TrimSpace(obj)
	return len(obj) >= 2 && obj[0] == '{' && len(bytes.TrimSpace(obj[1:len(obj)-1])) == 0
}
