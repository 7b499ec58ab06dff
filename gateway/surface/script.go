package surface

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/gateway/script"
	"github.com/mcpgw/mcpgw/internal/tsshape"
	"github.com/mcpgw/mcpgw/registry"
)

const ScriptToolName = "mcp_script"

const scriptToolDescription = `Run JavaScript that calls this gateway's tools and returns one answer, instead of calling tools one by one. ` +
	`The code is the body of an async function: await tools.call(name, args) → {ok:true, data} (structured result, or text) | {ok:false, error:{code, message}} (never throws); ` +
	`tools.search(query, {limit, offset}) → [{name, server, description, signature}]; tools.describe(name) → {signature, parameters} | null; ` +
	`await Promise.all([...]) runs calls in parallel; emit(value) and console.log(...) are returned too; return the answer. ` +
	`A sandbox: no files, network, timers or imports. timeoutMs: deadline (default 30000, at most 300000).`

const scriptToolSchema = `{"type":"object","required":["script"],"properties":{` +
	`"script":{"type":"string","description":"JavaScript: the body of an async function"},` +
	`"timeoutMs":{"type":"integer","description":"Deadline in ms (default 30000, max 300000)"}}}`

func ScriptTool() *mcp.Tool {
	return &mcp.Tool{Name: ScriptToolName, Description: scriptToolDescription, InputSchema: json.RawMessage(scriptToolSchema)}
}

// InvalidScriptArgs says mcp_script's arguments do not decode, and what
// it takes.
func InvalidScriptArgs(err error) *mcp.CallToolResult {
	return Errorf("Invalid arguments for %s: %v. It takes {script: \"...\", timeoutMs?: number}.", ScriptToolName, err)
}

// ScriptsOff says code mode is turned off.
func ScriptsOff() *mcp.CallToolResult {
	return Errorf("Scripts are turned off (settings.scripts is false).")
}

// NoScript says a script is empty, and what one looks like.
func NoScript() *mcp.CallToolResult {
	return Errorf("No script: give the body of an async function, e.g. const r = await tools.call(\"server_tool\", {...}); return r.data;")
}

// TooManyScripts says a script may not start: limit scripts run already,
// in the session (perSession) or in the whole daemon.
func TooManyScripts(perSession bool, limit int) *mcp.CallToolResult {
	if perSession {
		return Errorf("Too many scripts running in this session (limit %d, settings.scriptsPerSession): wait for one to finish, then run this one again.", limit)
	}
	return Errorf("Too many scripts running in mcpgw (limit %d, settings.scriptsPerDaemon): wait for one to finish, then run this one again.", limit)
}

// ScriptsOn reports whether sessions in mode get code mode.
func ScriptsOn(v *registry.View, mode registry.Mode) bool {
	if on := v.Config.Settings.Scripts; on != nil {
		return *on
	}
	return mode != registry.ModeDirect
}

// ScriptResult is what the model reads: one JSON object with the result
// (or error), what was emitted and logged, and a short trace.
func ScriptResult(res *script.Result) *mcp.CallToolResult {
	data, err := json.Marshal(res)
	if err != nil {
		return Errorf("Script %s: its result could not be encoded: %v", res.ID, err)
	}
	out := Text(string(data))
	out.IsError = res.Error != nil
	return out
}

// ResultText is a result's content as text, each block as the mcp tool
// renders it for a model (content.ForModelContent); an image by its type
// and size.
func ResultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		switch c := content.ForModelContent(c).(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data)))
		}
	}
	return strings.Join(parts, "\n")
}

func ScriptToolInfo(t *registry.Tool, params bool) script.Tool {
	in := registry.SchemaMap(t.Def.InputSchema)
	out := registry.SchemaMap(t.Def.OutputSchema)
	st := script.Tool{
		Name:        t.Name,
		Server:      t.Server,
		Description: Shorten(t.Description(), 300),
		Signature:   tsshape.Signature(t.Name, in, out),
	}
	if params {
		st.Description = strings.TrimSpace(t.Description())
		st.Parameters = tsshape.Fields(in)
	}
	return st
}

// Truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
