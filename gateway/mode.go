package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/mcpgw/mcpgw/registry"
)

// Mode is a session's mode, as the config names it.
type Mode = registry.Mode

// Session modes: the `mcp` tool (the default);
// `ToolSearch` with direct tools and the tools it activated; every tool
// under its own name, with its full schema.
const (
	ModeProxy      = registry.ModeProxy
	ModeToolSearch = registry.ModeToolSearch
	ModeDirect     = registry.ModeDirect
)

// A mode is what a session shows the model: mcpgw's own tools, the
// upstream tools it lists beyond the direct ones every mode lists, what it
// answers a call of a tool it does not list, and which calls of its own
// tools the fast path may make. Its texts (tool definitions, instructions,
// answers) are package surface's. A new mode is a type here, in a file of
// its own, its texts in surface, and its name in registry.
//
// A mode holds no state: what a session has done (activations) is the
// session's. Its methods are called with the session's mu held where
// they say so, and must not take it.
type mode interface {
	// Name is the mode as the config and clients name it.
	Name() registry.Mode
	// own returns mcpgw's tools the mode lists in v.
	own(v *registry.View) []ownTool
	// lists reports whether the mode lists upstream tool t to ss, beyond
	// the direct tools. ss.mu is held.
	lists(ss *session, t *registry.Tool) bool
	// listsUpstream reports whether ss's tools/list can name upstream
	// tools beyond the direct ones, which makes a first list worth
	// holding for servers still being discovered. ss.mu is held.
	listsUpstream(ss *session) bool
	// unlisted is the answer to a call, by the name called, of t: a tool
	// of the catalogue the session does not list. "" leaves it to the
	// generic answer (unknown, with suggestions).
	unlisted(called string, t *registry.Tool) string
	// clientNames reports whether the model names tools as the client
	// shows them (prefixed), rather than by mcpgw's names.
	clientNames() bool
	// fast prepares the fast call of one of the mode's own tools (c.Name
	// and c.Args as called) as the call of an upstream tool; false leaves
	// it to the session's handler.
	fast(c *dispatch.Call) bool
}

// ownTool is one of mcpgw's own tools on a session's list.
type ownTool struct {
	def    *mcp.Tool
	handle ownHandler
}

// ownHandler answers a call of one of mcpgw's own tools for the session
// that made it. It is not bound to a session, so that a tool table can be
// shared by every session that lists the same (sharedTable).
type ownHandler func(ss *session, ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)

// modeOf returns the session's mode: its own request, else the config's,
// else proxy. A conversation (sessionless) keeps no activations, so a
// ToolSearch one is served as proxy.
func modeOf(requested, configured registry.Mode, sessionless bool) mode {
	for _, name := range []registry.Mode{requested, configured} {
		switch registry.Mode(strings.ToLower(string(name))) {
		case ModeProxy:
			return proxyMode{}
		case ModeToolSearch:
			if sessionless {
				return proxyMode{}
			}
			return toolSearchMode{}
		case ModeDirect:
			return directMode{}
		}
	}
	return proxyMode{}
}

// Shared definitions of mcpgw's own tools that do not change with the
// catalogue.
var (
	mcpToolDef    = surface.MCPTool()
	scriptToolDef = surface.ScriptTool()
)

// scriptTool is mcp_script on the list of a session in mode m, when
// scripts are on.
func scriptTool(v *registry.View, m registry.Mode) []ownTool {
	if !surface.ScriptsOn(v, m) {
		return nil
	}
	return []ownTool{{scriptToolDef, (*session).handleScriptTool}}
}

// proxyMode lists the mcp tool, which reaches every upstream tool.
type proxyMode struct{}

func (proxyMode) Name() registry.Mode { return ModeProxy }

func (proxyMode) own(*registry.View) []ownTool {
	return []ownTool{{mcpToolDef, (*session).handleProxy}}
}

func (proxyMode) lists(*session, *registry.Tool) bool { return false }
func (proxyMode) listsUpstream(*session) bool         { return false }
func (proxyMode) clientNames() bool                   { return false }

func (proxyMode) unlisted(called string, t *registry.Tool) string {
	return surface.ThroughMCPTool(called, t.Name)
}

// fast takes mcp({tool, args}), a call of an upstream tool; the mcp
// tool's other actions are the handler's.
func (proxyMode) fast(c *dispatch.Call) bool {
	if c.Name != mcpToolDef.Name {
		return false
	}
	tool, args, ok := plainProxyCall(c.Args)
	if !ok {
		tool, args, ok = decodeProxyCall(c.Args)
	}
	if !ok || tool == "" {
		return false
	}
	c.Name, c.Args, c.Route = tool, args, dispatch.ViaProxy
	return true
}

// decodeProxyCall decodes the mcp tool's arguments as its handler does,
// for the tool they name and its arguments; ok false when they do not
// decode.
func decodeProxyCall(raw []byte) (tool string, args json.RawMessage, ok bool) {
	a, err := decodeMCPArgs(raw)
	if err != nil {
		return "", nil, false
	}
	return a.Tool, a.Args, true
}

// plainProxyCall reads the mcp tool's arguments when they are what a
// model sends for a call, {"tool": NAME, "args": {...}} and nothing else,
// without decoding them: the name and the arguments' bytes as they came,
// as decoding into surface.MCPArgs gives them. Anything else (another
// member, a key spelled otherwise or twice, a name with escapes or not
// UTF-8, null arguments) is ok false, and the arguments are decoded.
func plainProxyCall(raw []byte) (tool string, args json.RawMessage, ok bool) {
	var toolRaw []byte
	plain := true
	well := jsonwire.Members(raw, func(k, v []byte) bool {
		switch {
		case string(k) == "tool" && toolRaw == nil:
			toolRaw = v
		case string(k) == "args" && args == nil && string(v) != "null":
			args = v
		default:
			plain = false
		}
		return plain
	})
	if !well || !plain {
		return "", nil, false
	}
	tool, ok = jsonwire.String(toolRaw)
	// Decoding makes bytes that are not UTF-8 U+FFFD; the name is then
	// the decoder's.
	return tool, args, ok && utf8.ValidString(tool)
}

// toolSearchMode lists ToolSearch, and the tools it activated.
type toolSearchMode struct{}

func (toolSearchMode) Name() registry.Mode { return ModeToolSearch }

func (toolSearchMode) own(v *registry.View) []ownTool {
	// Its description names the servers and their tool counts, so it is
	// made per view.
	return append([]ownTool{{surface.ToolSearchTool(v), (*session).handleToolSearch}}, scriptTool(v, ModeToolSearch)...)
}

func (toolSearchMode) lists(ss *session, t *registry.Tool) bool { return ss.activated[t.Name] }

// listsUpstream: a session that has activated nothing lists only
// ToolSearch, and answers at once; the description's server counts
// follow with list_changed. Clients bound how long they wait for a
// server to connect (Pi 1.5: 10 s in all, its own start-up included), so
// a slow upstream must not cost the session its ToolSearch.
func (toolSearchMode) listsUpstream(ss *session) bool { return len(ss.activated) > 0 }
func (toolSearchMode) clientNames() bool              { return true }
func (toolSearchMode) fast(*dispatch.Call) bool       { return false }

func (toolSearchMode) unlisted(called string, t *registry.Tool) string {
	return surface.NotActivated(called, t.Name)
}

// directMode lists every tool under its own name, with its schema.
type directMode struct{}

func (directMode) Name() registry.Mode { return ModeDirect }

func (directMode) own(v *registry.View) []ownTool {
	return scriptTool(v, ModeDirect)
}

func (directMode) lists(*session, *registry.Tool) bool    { return true }
func (directMode) listsUpstream(*session) bool            { return true }
func (directMode) clientNames() bool                      { return true }
func (directMode) fast(*dispatch.Call) bool               { return false }
func (directMode) unlisted(string, *registry.Tool) string { return "" }
