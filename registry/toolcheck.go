package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"unicode/utf8"

	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ObjectSchema returns schema as an input schema clients accept: MCP
// requires type "object", and many servers (and caches written by other
// programs) omit it or have no schema at all. A schema that already says
// "object" is returned as is.
func ObjectSchema(schema any) any {
	if raw, ok := schema.(json.RawMessage); ok {
		if t, ok := jsonwire.Member(raw, "type"); ok && string(t) == `"object"` {
			return schema
		}
	}
	m := SchemaMap(schema)
	if m == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	if m["type"] == "object" {
		return schema
	}
	c := make(map[string]any, len(m)+1)
	for k, val := range m {
		c[k] = val
	}
	c["type"] = "object"
	return c
}

// SchemaMap decodes a JSON schema held in any of the forms the SDK and the
// cache use into a map; nil when it is not a JSON object.
func SchemaMap(schema any) map[string]any {
	var data []byte
	switch s := schema.(type) {
	case nil:
		return nil
	case map[string]any:
		return s
	case json.RawMessage:
		data = s
	case []byte:
		data = s
	default:
		var err error
		if data, err = json.Marshal(s); err != nil {
			return nil
		}
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m
}

// The probe is a Server no session ever connects to: adding a tool to it
// runs exactly the checks the SDK runs when the gateway adds the tool to a
// session, without a session to disturb. The SDK panics on a tool it
// refuses (an x-mcp-header annotation that is not a valid header name, an
// output schema that is not JSON, ...); CheckTool turns that into an error.
var (
	probeMu sync.Mutex
	probe   = mcp.NewServer(&mcp.Implementation{Name: "mcpgw-probe"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
)

var errNilTool = errors.New("tool is null")

// CheckTool reports whether t can be offered to clients as it is (with its
// input schema made an object, as the gateway does). Tools come from
// upstreams, from the shared cache (which other programs write too) and
// from configuration; none of them may crash the daemon.
func CheckTool(t *mcp.Tool) (err error) {
	if t == nil {
		return errNilTool
	}
	if t.Name == "" {
		return errors.New("tool has no name")
	}
	def := *t
	def.InputSchema = ObjectSchema(t.InputSchema)
	if surelyAccepted(&def) {
		return nil
	}
	probeMu.Lock()
	defer probeMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("refused by the MCP SDK: %v", r)
		}
		probe.RemoveTools(def.Name)
	}()
	probe.AddTool(&def, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	return nil
}

// surelyAccepted reports whether the SDK's AddTool accepts def without
// asking it, which costs a new 32 KiB JSON decoder per schema
// (docs/sdk-decoder.md; 2,000 cached tools at start-up): both schemas are
// JSON objects in UTF-8, the input one of type object, and no property
// carries an x-mcp-header annotation, the one thing the SDK looks for
// inside a schema. Anything else goes to the probe.
func surelyAccepted(def *mcp.Tool) bool {
	in, ok := schemaJSON(def.InputSchema)
	// (ObjectSchema made the input schema one of type object, or left it
	// in a form schemaJSON does not take.)
	if !ok || bytes.Contains(in, []byte("x-mcp-header")) {
		return false
	}
	if def.OutputSchema != nil {
		if _, ok := schemaJSON(def.OutputSchema); !ok {
			return false
		}
	}
	return true
}

// schemaJSON returns a schema as JSON, if it is a valid JSON object in
// UTF-8.
func schemaJSON(schema any) ([]byte, bool) {
	var data []byte
	switch s := schema.(type) {
	case json.RawMessage:
		data = s
	case map[string]any:
		var err error
		if data, err = json.Marshal(s); err != nil {
			return nil, false
		}
	default:
		return nil, false
	}
	data = bytes.TrimSpace(data)
	return data, len(data) > 0 && data[0] == '{' && utf8.Valid(data) && json.Valid(data)
}

// RejectedTool is a tool left out of a listing because clients could not
// be offered it.
type RejectedTool struct {
	Name string // "" for a null entry
	Err  error
}

// validTools returns tools without the ones CheckTool refuses, and those.
// The slice is returned as is when every tool passes.
func validTools(tools []*mcp.Tool) ([]*mcp.Tool, []RejectedTool) {
	var (
		bad []RejectedTool
		out []*mcp.Tool
	)
	for i, t := range tools {
		err := CheckTool(t)
		if err == nil {
			if bad != nil {
				out = append(out, t)
			}
			continue
		}
		if bad == nil {
			out = append(make([]*mcp.Tool, 0, len(tools)), tools[:i]...)
		}
		name := ""
		if t != nil {
			name = t.Name
		}
		bad = append(bad, RejectedTool{Name: name, Err: err})
	}
	if bad == nil {
		return tools, nil
	}
	return out, bad
}
