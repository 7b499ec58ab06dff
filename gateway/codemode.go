package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/gateway/script"
	"github.com/mcpgw/mcpgw/internal/tsshape"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/registry/search"
	"github.com/mcpgw/mcpgw/upstream"
)

// Code mode: a script (gateway/script) makes many tool calls and returns
// one answer. The mcp tool runs one with its script action; in toolsearch
// (and, when settings.scripts is true, direct) mode the session lists the
// mcp_script tool. Every call a script makes is a toolCall through
// dispatch — policy, approvals (asked of the calling session), audit
// (with the script's ID), metrics — like any other.

const scriptToolName = "mcp_script"

const scriptToolDescription = `Run JavaScript that calls this gateway's tools and returns one answer, instead of calling tools one by one. ` +
	`The code is the body of an async function: await tools.call(name, args) → {ok:true, data} (structured result, or text) | {ok:false, error:{code, message}} (never throws); ` +
	`tools.search(query, {limit, offset}) → [{name, server, description, signature}]; tools.describe(name) → {signature, parameters} | null; ` +
	`await Promise.all([...]) runs calls in parallel; emit(value) and console.log(...) are returned too; return the answer. ` +
	`A sandbox: no files, network, timers or imports. timeoutMs: deadline (default 30000, at most 300000).`

const scriptToolSchema = `{"type":"object","required":["script"],"properties":{` +
	`"script":{"type":"string","description":"JavaScript: the body of an async function"},` +
	`"timeoutMs":{"type":"integer","description":"Deadline in ms (default 30000, max 300000)"}}}`

func scriptTool() *mcp.Tool {
	return &mcp.Tool{Name: scriptToolName, Description: scriptToolDescription, InputSchema: json.RawMessage(scriptToolSchema)}
}

// scriptsOn reports whether sessions in mode get code mode.
func scriptsOn(v *registry.View, mode registry.Mode) bool {
	if on := v.Config.Settings.Scripts; on != nil {
		return *on
	}
	return mode != ModeDirect
}

// handleScriptTool serves mcp_script.
func (ss *session) handleScriptTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Script    string `json:"script"`
		TimeoutMs int64  `json:"timeoutMs"`
	}
	if raw := req.Params.Arguments; len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return errorResult("Invalid arguments for %s: %v. It takes {script: \"...\", timeoutMs?: number}.", scriptToolName, err), nil
		}
	}
	return ss.gw.runScript(ctx, ss, req, a.Script, a.TimeoutMs), nil
}

// runScript runs src for the session that req came from and renders what
// it did as the tool's result.
func (s *Server) runScript(ctx context.Context, ss *session, req *mcp.CallToolRequest, src string, timeoutMs int64) *mcp.CallToolResult {
	v := ss.view()
	if !scriptsOn(v, ss.mode) {
		return errorResult("Scripts are turned off (settings.scripts is false).")
	}
	if strings.TrimSpace(src) == "" {
		return errorResult("No script: give the body of an async function, e.g. const r = await tools.call(\"server_tool\", {...}); return r.data;")
	}
	lim := script.Limits{Timeout: v.Config.Settings.ScriptTimeout}
	if timeoutMs > 0 {
		lim.Timeout = time.Duration(timeoutMs) * time.Millisecond
	}
	h := &scriptHost{gw: s, ss: ss, id: script.NewID(), protocol: sessionProtocol(req)}
	h.progressTo(ctx, req)
	res := script.Run(ctx, h.id, src, h, lim)
	s.metrics.scripts.WithLabelValues(res.Outcome()).Inc()
	s.metrics.scriptTime.Observe(res.Duration.Seconds())
	s.scripts.add(res, ss)
	if res.Error != nil {
		s.log.Info("script failed", "script", res.ID, "error", res.Error.Code, "calls", len(res.Trace), "duration", res.Duration)
	}
	// The answer is the model's to read: cut (and saved whole) past the
	// output limit like any result.
	return content.Guard(scriptResult(res), outputLimit(v.Config.Settings.MaxOutputBytes), s.saver)
}

// scriptResult is what the model reads: one JSON object with the result
// (or error), what was emitted and logged, and a short trace.
func scriptResult(res *script.Result) *mcp.CallToolResult {
	data, err := json.Marshal(res)
	if err != nil {
		return errorResult("Script %s: its result could not be encoded: %v", res.ID, err)
	}
	out := textResult(string(data))
	out.IsError = res.Error != nil
	return out
}

// scriptHost is the gateway as one script sees it: the calling session's
// view of the tools, and dispatch for calls.
type scriptHost struct {
	gw       *Server
	ss       *session
	id       string
	protocol string
	meta     mcp.Meta
	progress func(msg string) // nil: the client asked for no progress
}

// progressTo sends the script's progress on the caller's progress token:
// one step per finished call and each progress an upstream reports, with
// a count that only grows, as progress must.
func (h *scriptHost) progressTo(ctx context.Context, req *mcp.CallToolRequest) {
	if req == nil || req.Params == nil {
		return
	}
	h.meta = withoutProgressToken(req.Params.Meta)
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return
	}
	var n atomic.Int64
	h.progress = func(msg string) {
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token, Progress: float64(n.Add(1)), Message: msg,
		})
	}
}

func withoutProgressToken(m mcp.Meta) mcp.Meta {
	if _, ok := m["progressToken"]; !ok {
		return m
	}
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		if k != "progressToken" {
			out[k] = v
		}
	}
	return out
}

func (h *scriptHost) Call(ctx context.Context, name string, args json.RawMessage) script.Outcome {
	opts := &upstream.CallOptions{Meta: h.meta}
	if h.progress != nil {
		opts.OnProgress = func(_ context.Context, p *mcp.ProgressNotificationParams) {
			h.progress(name + ": " + p.Message)
		}
	}
	c := &toolCall{session: h.ss, name: name, args: args, route: viaScript, opts: opts, protocol: h.protocol, script: h.id}
	res := h.gw.callResult(ctx, c)
	if h.progress != nil {
		h.progress(name + ": " + c.outcome)
	}
	if c.outcome != "ok" {
		code := c.outcome
		if code == "" {
			code = "error"
		}
		return script.Outcome{Code: code, Message: resultText(res)}
	}
	if res.StructuredContent != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err == nil {
			return script.Outcome{OK: true, Data: data}
		}
	}
	data, _ := json.Marshal(resultText(res))
	return script.Outcome{OK: true, Data: data}
}

// resultText is a result's content as text, each block as the mcp tool
// renders it for a model (content.ForModelContent); an image by its type
// and size.
func resultText(res *mcp.CallToolResult) string {
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

func (h *scriptHost) Search(query string, offset, limit int) []script.Tool {
	v := h.ss.view()
	hits, err := v.Search(query, search.Options{Limit: offset + limit})
	if err != nil {
		return nil
	}
	hits = hits[min(len(hits), offset):]
	out := make([]script.Tool, 0, len(hits))
	for _, t := range hits {
		out = append(out, scriptToolInfo(t, false))
	}
	return out
}

func (h *scriptHost) Describe(name string) (script.Tool, bool) {
	v := h.ss.view()
	t, ok := v.Lookup(h.ss.resolveName(v, name))
	if !ok || t.AppOnly() {
		return script.Tool{}, false
	}
	return scriptToolInfo(t, true), true
}

func scriptToolInfo(t *registry.Tool, params bool) script.Tool {
	in := registry.SchemaMap(t.Def.InputSchema)
	out := registry.SchemaMap(t.Def.OutputSchema)
	st := script.Tool{
		Name:        t.Name,
		Server:      t.Server,
		Description: shorten(t.Description(), 300),
		Signature:   tsshape.Signature(t.Name, in, out),
	}
	if params {
		st.Description = strings.TrimSpace(t.Description())
		st.Parameters = tsshape.Fields(in)
	}
	return st
}

// recentScripts keeps the last scripts run, with their full traces, for
// the status page.
type recentScripts struct {
	mu   sync.Mutex
	list []api.ScriptReport // newest last
}

const keptScripts = 20

func (r *recentScripts) add(res *script.Result, ss *session) {
	rep := api.ScriptReport{
		ID:         res.ID,
		Started:    res.Started,
		DurationMs: float64(res.Duration.Microseconds()) / 1000,
		Outcome:    res.Outcome(),
		Source:     truncateText(res.Source, 4<<10),
	}
	rep.Session, rep.Client = ss.identity()
	if res.Error != nil {
		rep.Error = shorten(res.Error.Message, 300)
	}
	for _, st := range res.Trace {
		rep.Calls = append(rep.Calls, api.ScriptCall{Tool: st.Tool, OK: st.OK, Error: st.Code, Ms: st.Ms})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.list) == keptScripts {
		r.list = append(r.list[:0], r.list[1:]...)
	}
	r.list = append(r.list, rep)
}

// snapshot returns the kept scripts, newest first.
func (r *recentScripts) snapshot() []api.ScriptReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]api.ScriptReport, 0, len(r.list))
	for i := len(r.list) - 1; i >= 0; i-- {
		out = append(out, r.list[i])
	}
	return out
}

// truncateText cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
