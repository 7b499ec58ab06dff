package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/script"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/registry/search"
	"github.com/mcpgw/mcpgw/upstream"
)

// Code mode: a script (gateway/script) makes many tool calls and returns
// one answer. The mcp tool runs one with its script action; in toolsearch
// (and, when settings.scripts is true, direct) mode the session lists the
// mcp_script tool. Every call a script makes is a dispatch.Call through
// dispatch — policy, approvals (asked of the calling session), audit
// (with the script's ID), metrics — like any other.

// handleScriptTool serves mcp_script.
func (ss *session) handleScriptTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Script    string `json:"script"`
		TimeoutMs int64  `json:"timeoutMs"`
	}
	if raw := req.Params.Arguments; len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return surface.InvalidScriptArgs(err), nil
		}
	}
	return ss.gw.runScript(ctx, ss, req, a.Script, a.TimeoutMs), nil
}

// runScript runs src for the session that req came from and renders what
// it did as the tool's result.
func (s *Hub) runScript(ctx context.Context, ss *session, req *mcp.CallToolRequest, src string, timeoutMs int64) *mcp.CallToolResult {
	v := ss.View()
	if !surface.ScriptsOn(v, ss.mode.Name()) {
		return surface.ScriptsOff()
	}
	if strings.TrimSpace(src) == "" {
		return surface.NoScript()
	}
	limits := v.Config.Settings.Limits.Resolved()
	done, refused := s.running.start(ss, limits)
	if refused != nil {
		s.metrics.scripts.WithLabelValues("refused").Inc()
		return refused
	}
	defer done()
	lim := script.Limits{Timeout: v.Config.Settings.ScriptTimeout, ArgBytes: limits.ScriptArgsBytes, DataBytes: limits.ScriptResultsBytes}
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
	return content.Guard(surface.ScriptResult(res), surface.OutputLimit(v.Config.Settings.MaxOutputBytes), ss.saver)
}

// scriptHost is the gateway as one script sees it: the calling session's
// view of the tools, and dispatch for calls.
type scriptHost struct {
	gw       *Hub
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
	c := &dispatch.Call{Caller: h.ss, Name: name, Args: args, Route: dispatch.ViaScript, Opts: opts, Protocol: h.protocol, Script: h.id}
	res := h.gw.calls.Result(ctx, c)
	if h.progress != nil {
		h.progress(name + ": " + c.Outcome)
	}
	if c.Outcome != "ok" {
		code := c.Outcome
		if code == "" {
			code = "error"
		}
		return script.Outcome{Code: code, Message: surface.ResultText(res)}
	}
	if res.StructuredContent != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err == nil {
			return script.Outcome{OK: true, Data: data}
		}
	}
	data, _ := json.Marshal(surface.ResultText(res))
	return script.Outcome{OK: true, Data: data}
}

func (h *scriptHost) Search(query string, offset, limit int) []script.Tool {
	v := h.ss.View()
	hits, err := v.Search(query, search.Options{Limit: offset + limit})
	if err != nil {
		return nil
	}
	hits = hits[min(len(hits), offset):]
	out := make([]script.Tool, 0, len(hits))
	for _, t := range hits {
		out = append(out, surface.ScriptToolInfo(t, false))
	}
	return out
}

func (h *scriptHost) Describe(name string) (script.Tool, bool) {
	v := h.ss.View()
	t, ok := v.Lookup(h.ss.ResolveName(v, name))
	if !ok || t.AppOnly() {
		return script.Tool{}, false
	}
	return surface.ScriptToolInfo(t, true), true
}

// runningScripts counts the scripts running, in all and per session,
// so that a script past settings.scriptsPerSession or scriptsPerDaemon
// is refused before it takes anything.
type runningScripts struct {
	mu        sync.Mutex
	total     int
	bySession map[*session]int
}

// start counts a script of ss, and returns the function that uncounts it
// when it ends; or, past a limit, the answer that says why it may not
// start.
func (r *runningScripts) start(ss *session, l registry.Limits) (done func(), refused *mcp.CallToolResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.bySession[ss] >= l.ScriptsPerSession:
		return nil, surface.TooManyScripts(true, l.ScriptsPerSession)
	case r.total >= l.ScriptsPerDaemon:
		return nil, surface.TooManyScripts(false, l.ScriptsPerDaemon)
	}
	if r.bySession == nil {
		r.bySession = make(map[*session]int)
	}
	r.bySession[ss]++
	r.total++
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.total--
		if r.bySession[ss]--; r.bySession[ss] == 0 {
			delete(r.bySession, ss)
		}
	}, nil
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
		Source:     surface.Truncate(res.Source, 4<<10),
	}
	rep.Session, rep.Client = ss.Identity()
	rep.User = ss.User()
	if res.Error != nil {
		rep.Error = surface.Shorten(res.Error.Message, 300)
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
