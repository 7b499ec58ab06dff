package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/gateway/transport"
	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/mcpgw/mcpgw/upstream"
)

// The session's side of fast calls (the transports' side, and why there
// is one, is in gateway/transport's fast.go): a tools/call read from its
// envelope becomes a dispatch.Call here and goes through the one dispatcher,
// and the upstream's result is relayed as bytes where nothing in it has
// to change (content.Relayable).

// Fast implements transport.Session: the fast call of the tools/call id
// with params, or ok false when the go-sdk should answer it.
func (ss *session) Fast(id, params []byte) (run func(context.Context) json.RawMessage, ok bool) {
	ss.lastActive.Store(time.Now().UnixNano())
	ss.gw.busy()
	return ss.prepareFast(id, params)
}

// prepareFast decides whether the tools/call id with params is a fast
// call; if it is, run makes it and returns the result.
func (ss *session) prepareFast(id, params []byte) (run func(context.Context) json.RawMessage, ok bool) {
	ss.mu.Lock()
	protocol := ss.protocol
	ss.mu.Unlock()
	if protocol == "" || protocol >= transport.FirstSessionless {
		// Not initialized yet; or protocol 2026-07-28, whose every result
		// is marked complete or input_required (SEP-2322), as the SDK's
		// path does.
		return nil, false
	}
	rawName, _ := jsonwire.Member(params, "name")
	name, ok := jsonwire.String(rawName)
	if !ok || !ss.hasTool(name) {
		return nil, false
	}
	c := &dispatch.Call{Caller: ss, Name: name, Route: dispatch.ViaExposed, Protocol: protocol, Relay: true, Opts: &upstream.CallOptions{}}
	if raw, has := jsonwire.Member(params, "_meta"); has {
		if _, progress := jsonwire.Member(raw, "progressToken"); progress {
			return nil, false
		}
		if err := json.Unmarshal(raw, &c.Opts.Meta); err != nil {
			return nil, false
		}
	}
	for _, k := range [...]string{"task", "inputResponses", "requestState"} {
		if _, has := jsonwire.Member(params, k); has {
			return nil, false // the SDK's business
		}
	}
	c.Args, _ = jsonwire.Member(params, "arguments")
	switch {
	case ss.mode == ModeProxy && name == "mcp":
		var a surface.MCPArgs
		if len(c.Args) > 0 && string(c.Args) != "null" {
			if err := json.Unmarshal(c.Args, &a); err != nil {
				return nil, false
			}
		}
		if a.Tool == "" {
			return nil, false // the mcp tool's other actions: the SDK's path
		}
		c.Name, c.Args, c.Route = a.Tool, a.Args, dispatch.ViaProxy
	case ss.mode == ModeToolSearch && name == surface.ToolSearchName, name == surface.ScriptToolName && ss.hasTool(name):
		return nil, false
	}
	return func(ctx context.Context) json.RawMessage {
		ss.gw.fastCalls.Add(1)
		// As cancelMiddleware does for the SDK's requests, and cancelled
		// by the client's notifications/cancelled (see cancelFast).
		ctx, cancel := context.WithCancel(upstream.WithPeer(ctx, ss))
		defer cancel()
		stop := context.AfterFunc(ss.ctx, cancel)
		defer stop()
		key := string(id)
		ss.mu.Lock()
		if ss.fastCalls == nil {
			ss.fastCalls = make(map[string]context.CancelFunc)
		}
		ss.fastCalls[key] = cancel
		ss.mu.Unlock()
		defer func() {
			ss.mu.Lock()
			delete(ss.fastCalls, key)
			ss.mu.Unlock()
		}()
		res, raw := ss.gw.calls.Dispatch(ctx, c)
		if raw != nil {
			ss.gw.relayedCalls.Add(1)
			return raw
		}
		data, err := json.Marshal(res)
		if err != nil {
			data, _ = json.Marshal(surface.Errorf("encoding the result: %v", err))
		}
		return data
	}, true
}

// CancelFast implements transport.Session: it ends the fast call whose
// request ID (as written) is id, if one is in flight.
func (ss *session) CancelFast(id []byte) {
	ss.mu.Lock()
	cancel := ss.fastCalls[string(id)]
	ss.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
