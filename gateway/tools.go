package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/gateway/transport"
	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/mcpgw/mcpgw/registry"
)

// A session's tools are mcpgw's own table, not registrations on its go-sdk
// Server: the SDK carries the wire (and list_changed, see announceTools),
// and tools/list and tools/call are answered here (toolsMiddleware). The
// definitions are the catalogue's, made once per view and shared by every
// session that lists them (registry.Tool.Exposed), and sessions that list
// the same tools share one table (sharedtable.go), so a session over 1,600
// tools costs no parsed schema per tool, nor a map of its own; and a
// conversation of protocol 2026-07-28, which has no session to register
// on, is answered the same way.

// toolTable is a session's tool list at one moment: immutable once made,
// replaced whole (session.tools).
type toolTable struct {
	list     []*mcp.Tool               // what tools/list answers, sorted by name
	own      map[string]ownHandler     // mcpgw's own tools
	upstream map[string]*registry.Tool // upstream tools, by gateway name
}

// has reports whether name is on the list.
func (t *toolTable) has(name string) bool {
	if t == nil {
		return false
	}
	if _, ok := t.upstream[name]; ok {
		return true
	}
	_, ok := t.own[name]
	return ok
}

// same reports whether t and o list the same tools with the same
// definitions.
func (t *toolTable) same(o *toolTable) bool {
	if t == nil || o == nil || len(t.list) != len(o.list) || len(t.upstream) != len(o.upstream) {
		return t == o
	}
	for name, tool := range t.upstream {
		if other, ok := o.upstream[name]; !ok || other.Def != tool.Def {
			return false
		}
	}
	for i, def := range t.list {
		od := o.list[i]
		if def.Name != od.Name {
			return false
		}
		if _, mine := t.own[def.Name]; mine && def.Description != od.Description {
			return false // ToolSearch's description follows the catalogue
		}
	}
	return true
}

// tableLocked returns the session's table for v: the one every session
// with the same view, mode, client and direct tools lists, unless what it
// lists depends on the session itself (ToolSearch's activations). ss.mu
// is held.
func (ss *session) tableLocked(v *registry.View) *toolTable {
	if ss.mode.Name() == ModeToolSearch && len(ss.activated) > 0 {
		return ss.makeTableLocked(v, ss.conn.declaredUI())
	}
	// The table is made from the key's ui, read once: a client's
	// initialize that declares MCP Apps meanwhile cannot put a table
	// with app-only tools under the key of clients that did not.
	key := tableKey{v: v, mode: ss.mode.Name(), ui: ss.conn.declaredUI(), direct: ss.directSrc}
	return ss.gw.tables.get(ss.gw.catalog.View(), key, func() *toolTable { return ss.makeTableLocked(v, key.ui) })
}

// makeTableLocked makes the session's table for v, for a client that
// declared MCP Apps if ui. ss.mu is held.
func (ss *session) makeTableLocked(v *registry.View, ui bool) *toolTable {
	up := ss.wanted(v, ui)
	own := ss.mode.own(v)
	t := &toolTable{
		list:     make([]*mcp.Tool, 0, len(up)+len(own)),
		own:      make(map[string]ownHandler, len(own)),
		upstream: up,
	}
	for _, o := range own {
		t.own[o.def.Name] = o.handle
		t.list = append(t.list, o.def)
	}
	for name, tool := range up {
		if _, clash := t.own[name]; clash {
			delete(up, name) // mcpgw's own tool keeps its name
			continue
		}
		t.list = append(t.list, tool.Exposed())
	}
	slices.SortFunc(t.list, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return t
}

// syncTools makes the session list exactly what its mode and v say, and
// announces a change to the client.
func (ss *session) syncTools(v *registry.View) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	t := ss.tableLocked(v)
	if old := ss.tools.Load(); !t.same(old) {
		ss.tools.Store(t)
		ss.syncHeaderBoundLocked(t)
		if old != nil {
			ss.announceTools()
		}
	}
	ss.syncPromptsLocked(v)
}

// syncHeaderBoundLocked registers on the session's go-sdk Server the
// listed tools whose schema binds arguments to HTTP headers
// (registry.Tool.HeadersBound): the SDK's Streamable HTTP handler checks a
// 2026-07-28 request's Mcp-Param-* headers against the tool it finds
// there. It never calls them (toolsMiddleware answers every call). ss.mu
// is held.
func (ss *session) syncHeaderBoundLocked(t *toolTable) {
	var gone []string
	for name, tool := range ss.listing.headerBound {
		if t.upstream[name] != tool {
			gone = append(gone, name)
			delete(ss.listing.headerBound, name)
		}
	}
	if len(gone) > 0 {
		ss.server.RemoveTools(gone...)
	}
	for name, tool := range t.upstream {
		if !tool.HeadersBound() || ss.listing.headerBound[name] == tool {
			continue
		}
		if err := registerHeaderBound(ss.server, tool); err != nil {
			ss.gw.log.Warn("tool's header bindings not checked", "server", tool.Server, "tool", tool.Original, "err", err)
			continue
		}
		if ss.listing.headerBound == nil {
			ss.listing.headerBound = make(map[string]*registry.Tool)
		}
		ss.listing.headerBound[name] = tool
	}
}

// registerHeaderBound adds tool to srv for its header bindings. The
// catalogue has checked it (registry.CheckTool); should the SDK still
// refuse it, it is left out rather than taking the daemon down.
func registerHeaderBound(srv *mcp.Server, tool *registry.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("refused by the MCP SDK: %v", r)
		}
	}()
	srv.AddTool(tool.Exposed(), listChangedHandler)
	return nil
}

// hasTool reports whether name is on the session's tool list.
func (ss *session) hasTool(name string) bool { return ss.tools.Load().has(name) }

// listChangedTool is never listed nor called: adding it to the session's
// go-sdk Server is how the session's client is told its tools changed.
// The SDK sends notifications/tools/list_changed (debounced) to a 2025-era
// session, and to the subscriptions/listen streams of a 2026-07-28 one
// that asked for them, tagged as that protocol requires.
var listChangedTool = &mcp.Tool{Name: "mcpgw.list-changed", InputSchema: json.RawMessage(`{"type":"object"}`)}

func listChangedHandler(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, nil // never called: toolsMiddleware answers every tools/call
}

// announceTools tells the session's client its tool list changed.
func (ss *session) announceTools() { ss.server.AddTool(listChangedTool, listChangedHandler) }

// toolsMiddleware answers tools/list and tools/call from the session's
// table; every other method goes on to the SDK. It is the innermost of
// the session's middleware.
func (ss *session) toolsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			lr, _ := req.(*mcp.ListToolsRequest)
			return ss.listTools(ctx, lr)
		case "tools/call":
			cr, ok := req.(*mcp.CallToolRequest)
			if !ok || cr.Params == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call: missing params"}
			}
			return ss.callTool(ctx, cr)
		}
		return next(ctx, method, req)
	}
}

// listTools answers tools/list. The first list of a session that may name
// upstream tools waits, bounded, for servers still being discovered, so
// that a client that lists tools once (many do) sees them; later arrivals
// are announced with list_changed. Each answer is counted, for
// holdForRelist.
func (ss *session) listTools(ctx context.Context, req *mcp.ListToolsRequest) (mcp.Result, error) {
	if req != nil && req.Params != nil && req.Params.Cursor != "" {
		// Every answer is one page: no cursor was given out.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/list: unknown cursor"}
	}
	if v := ss.View(); ss.listsUpstream(v) {
		if len(ss.gw.pendingFor(v)) > 0 {
			v = ss.gw.awaitDiscovery(ctx, ss.overlay.Load())
		}
		ss.syncTools(v)
	}
	t := ss.tools.Load()
	res := &mcp.ListToolsResult{Tools: t.list}
	// Protocol 2026-07-28's cache hints: what mcpgw lists is the user's
	// own (their config, their project, their mode), and changes are
	// announced, so no shared cache may keep it and no client should
	// trust it for long.
	res.TTLMs, res.CacheScope = 0, "private"
	ss.relist.answered()
	return &listAnswer{ListToolsResult: res, table: t}, nil
}

// listsUpstream reports whether the session's tools/list can name
// upstream tools (see mode.listsUpstream).
func (ss *session) listsUpstream(v *registry.View) bool {
	if ss.direct.selectsAny(v) {
		return true
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.mode.listsUpstream(ss)
}

// callTool answers tools/call: a tool on the list is called (mcpgw's own
// by its handler, an upstream one through the dispatcher); any other gets
// an explanation and suggestions instead of the SDK's bare error.
func (ss *session) callTool(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
	name := req.Params.Name
	if !ss.hasTool(name) {
		// A server being discovered may have it.
		v := ss.gw.awaitDiscovery(ctx, ss.overlay.Load())
		ss.syncTools(v)
		if !ss.hasTool(name) {
			return markCallResult(req, ss.unknownTool(v, name, req.Params.Arguments)), nil
		}
	}
	t := ss.tools.Load()
	var res *mcp.CallToolResult
	if h, ok := t.own[name]; ok {
		var err error
		if res, err = h(ss, ctx, req); err != nil {
			return nil, err
		}
	} else {
		c := ss.sdkToolCall(ctx, req, name, req.Params.Arguments, dispatch.ViaExposed)
		res = ss.gw.calls.Result(ctx, c)
		if c.ProtocolErr != nil {
			return nil, c.ProtocolErr
		}
	}
	return markCallResult(req, res), nil
}

// unknownTool is the answer to a call of name, which the session does not
// list; the refusal is audited.
func (ss *session) unknownTool(v *registry.View, name string, args json.RawMessage) *mcp.CallToolResult {
	ss.gw.calls.Refused(ss, "tools/call", name, args, "unknown_tool")
	if t, found := v.Lookup(name); found {
		if msg := ss.mode.unlisted(name, t); msg != "" {
			return surface.Errorf("%s", msg)
		}
	}
	var naming surface.Naming // mcpgw's names: what the mcp tool takes
	if ss.mode.clientNames() {
		naming = ss.naming()
	}
	// It may be a tool of a server that is not available (failed, or
	// needs a login): say which and why.
	return surface.Errorf("%s", surface.UnknownToolFor(v, name, naming)+ss.gw.discoveryNote(v))
}

// markCallResult is res as the SDK's tools/call handler would have sent it:
// content never null, and, for a caller of protocol 2026-07-28 or later,
// whose every CallToolResult says whether it is complete ("resultType",
// SEP-2322), marked complete or input_required.
func markCallResult(req *mcp.CallToolRequest, res *mcp.CallToolResult) mcp.Result {
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	if res.Content == nil && len(res.InputRequests) == 0 {
		res.Content = []mcp.Content{}
	}
	if sessionProtocol(req) < transport.FirstSessionless {
		return res
	}
	return markedResult{res}
}

// markedResult is a tool result that says its resultType. The SDK keeps
// the mark out of reach but for decoding; this writes it.
type markedResult struct{ *mcp.CallToolResult }

func (r markedResult) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(r.CallToolResult)
	if err != nil {
		return nil, err
	}
	return withResultType(data, len(r.InputRequests) > 0), nil
}

// withResultType is the JSON object data with a resultType member, unless
// it has one: input_required when the result asks for input, else
// complete. A result that asks for input has no content (the go-sdk
// encodes it as null), and says nothing of one.
func withResultType(data []byte, needsInput bool) []byte {
	if needsInput {
		if c, has := jsonwire.Member(data, "content"); has && string(c) == "null" {
			data = jsonwire.Without(data, "content")
		}
	}
	if _, has := jsonwire.Member(data, "resultType"); has || len(data) < 2 || data[0] != '{' {
		return data
	}
	mark := `"resultType":"complete"`
	if needsInput {
		mark = `"resultType":"input_required"`
	}
	out := make([]byte, 0, len(data)+len(mark)+1)
	out = append(out, '{')
	out = append(out, mark...)
	if rest := bytes.TrimSpace(data[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, data[1:]...)
}

// withServerInfo is the JSON object data with the server's description in
// its _meta (SEP-2575: a result of protocol 2026-07-28 says which server
// made it), as the SDK's path writes it; data as it is when it says so
// already or is not an object.
func withServerInfo(data, info []byte) []byte {
	if len(data) < 2 || data[0] != '{' {
		return data
	}
	key := `"` + mcp.MetaKeyServerInfo + `":`
	meta, has := jsonwire.Member(data, "_meta")
	if !has {
		out := make([]byte, 0, len(data)+len(key)+len(info)+12)
		out = append(out, `{"_meta":{`...)
		out = append(out, key...)
		out = append(out, info...)
		out = append(out, '}')
		if rest := bytes.TrimSpace(data[1:]); len(rest) > 0 && rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, data[1:]...)
	}
	if len(meta) < 2 || meta[0] != '{' {
		return data
	}
	if _, says := jsonwire.Member(meta, mcp.MetaKeyServerInfo); says {
		return data
	}
	at := cap(data) - cap(meta) + 1 // just inside _meta's brace (meta is a slice of data)
	out := make([]byte, 0, len(data)+len(key)+len(info)+1)
	out = append(out, data[:at]...)
	out = append(out, key...)
	out = append(out, info...)
	if rest := bytes.TrimSpace(meta[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, data[at:]...)
}
