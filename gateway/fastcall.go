package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// Fast implements transport.Session: the answer to the tools/call or
// tools/list id with params, or ok false when the go-sdk should answer it.
func (ss *session) Fast(method string, id, params []byte) (run func(context.Context) (json.RawMessage, error), ok bool) {
	ss.lastActive.Store(time.Now().UnixNano())
	ss.gw.busy()
	if method == "tools/list" {
		return ss.prepareList(params)
	}
	return ss.prepareFast(id, params)
}

// prepareFast decides whether the tools/call id with params is a fast
// call; if it is, run makes it and returns the result.
func (ss *session) prepareFast(id, params []byte) (run func(context.Context) (json.RawMessage, error), ok bool) {
	ss.conn.mu.Lock()
	protocol, attached := ss.conn.protocol, ss.conn.ss != nil
	ss.conn.mu.Unlock()
	if !attached && !ss.sessionless {
		// Not initialized yet, or initialized by a request of protocol
		// 2026-07-28 the go-sdk has not handed over yet: its handler
		// attaches the session first (clientConn.attach). A
		// conversation has no go-sdk session of its own.
		return nil, false
	}
	// The params are read in one pass, the last of a repeated member
	// taken, as the go-sdk's decoding takes it.
	var meta, rawName, args []byte
	var hasMeta, sdkOnly bool
	if !jsonwire.Members(params, func(k, v []byte) bool {
		switch string(k) {
		case "_meta":
			meta, hasMeta = v, true
		case "name":
			rawName = v
		case "arguments":
			args = v
		case "task", "inputResponses", "requestState":
			sdkOnly = true // the SDK's business
		}
		return true
	}) || sdkOnly {
		return nil, false
	}
	switch pv, _ := jsonwire.String(member(meta, mcp.MetaKeyProtocolVersion)); {
	case pv >= transport.FirstSessionless:
		// A request of protocol 2026-07-28 or later says its version,
		// on a session too (a client of that protocol on the shim sends
		// no initialize), and the go-sdk takes it as that version's: so
		// does the fast path. One the go-sdk would refuse is its to
		// refuse (validateRequestMeta).
		if !slices.Contains(sessionProtocols, pv) || !requestMetaValid(meta) {
			return nil, false
		}
		protocol = pv
	case ss.sessionless:
		protocol = pv // a conversation's requests each say their version
	}
	if protocol == "" {
		return nil, false // not initialized yet
	}
	// Protocol 2026-07-28 and later: each result says whether it is
	// complete (SEP-2322), which run writes, as the SDK's path does.
	modern := protocol >= transport.FirstSessionless
	name, ok := jsonwire.String(rawName)
	if !ok {
		return nil, false
	}
	known := ss.hasTool(name)
	if !known {
		// As callTool: the session's table brought up to date first. A
		// server being discovered may have it: the SDK's path waits.
		v := ss.View()
		if len(ss.gw.pendingFor(v)) > 0 {
			return nil, false
		}
		ss.syncTools(v)
		known = ss.hasTool(name)
	}
	if t := ss.tools.Load().upstream[name]; t != nil && modern && t.HeadersBound() {
		return nil, false // the SDK's handler checks its Mcp-Param-* headers
	}
	fc := &fastCall{ss: ss, id: id, modern: modern}
	fc.call = dispatch.Call{Caller: ss, Name: name, Route: dispatch.ViaExposed, Protocol: protocol, Relay: true, Opts: &fc.opts}
	c := &fc.call
	if hasMeta {
		if _, progress := jsonwire.Member(meta, "progressToken"); progress {
			return nil, false
		}
		if _, logs := jsonwire.Member(meta, mcp.MetaKeyLogLevel); logs && modern {
			return nil, false // the request's log messages travel with its answer
		}
		if c.Opts.Meta = passedMeta(meta); c.Opts.Meta == nil {
			return nil, false
		}
	}
	c.Args = args
	if !known {
		// Answered here, as callTool would: the SDK's path costs a
		// model that keeps calling a made-up name about 200 KB a call.
		return fc.unknown, true
	}
	if _, own := ss.tools.Load().own[name]; own && !ss.mode.fast(c) {
		return nil, false // one of mcpgw's own tools: its handler's
	}
	if modern {
		// An upstream's input_required goes back to the client as it is,
		// as on the SDK's path (sdkToolCall).
		c.Opts.Input = &fc.input
	}
	return fc.run, true
}

// fastCall is one fast call, made in one allocation: the call, its
// options and what run needs.
type fastCall struct {
	ss     *session
	id     []byte // the request's ID, as written
	modern bool   // protocol 2026-07-28 or later
	call   dispatch.Call
	opts   upstream.CallOptions
	input  upstream.InputRound
	peer   upstream.PeerContext // the context it runs in, but for its cancel
}

// run makes the call and returns its result.
func (fc *fastCall) run(ctx context.Context) (json.RawMessage, error) {
	ss, c := fc.ss, &fc.call
	ss.gw.fastCalls.Add(1)
	// Cancelled by the client's notifications/cancelled (CancelFast)
	// and by the session's end (fastCalls.cancelAll), as
	// cancelMiddleware does for the SDK's requests.
	fc.peer = upstream.PeerContext{Context: ctx, Peer: ss}
	ctx, cancel := context.WithCancel(&fc.peer)
	defer cancel()
	defer ss.fast.remove(ss.fast.add(string(fc.id), cancel))
	res, raw := ss.gw.calls.Dispatch(ctx, c)
	if c.ProtocolErr != nil {
		// An upstream's JSON-RPC error to a relayed round (a capability
		// the caller did not declare, a tampered state) is the caller's
		// answer, as on the SDK's path.
		return nil, c.ProtocolErr
	}
	if raw != nil {
		ss.gw.relayedCalls.Add(1)
		return fc.answer(raw, false), nil
	}
	return fc.encode(res), nil
}

// unknown answers a call of a tool the session does not list: what the
// SDK's path answers (callTool), and as it does, audited.
func (fc *fastCall) unknown(context.Context) (json.RawMessage, error) {
	ss := fc.ss
	ss.gw.fastCalls.Add(1)
	return fc.encode(ss.unknownTool(ss.View(), fc.call.Name, fc.call.Args)), nil
}

// encode is the result res as the call's answer.
func (fc *fastCall) encode(res *mcp.CallToolResult) json.RawMessage {
	data, err := json.Marshal(res)
	if err != nil {
		data, _ = json.Marshal(surface.EncodingFailed(err))
	}
	return fc.answer(data, len(res.InputRequests) > 0)
}

// answer is the result data as the call's answer: for a caller of
// protocol 2026-07-28 or later, with its resultType and the server's
// description.
func (fc *fastCall) answer(data []byte, needsInput bool) json.RawMessage {
	if fc.modern {
		data = withServerInfo(withResultType(data, needsInput), fc.ss.gw.serverInfo)
	}
	return data
}

// CancelFast implements transport.Session: it ends the fast call whose
// request ID (as written) is id, if one is in flight.
func (ss *session) CancelFast(id []byte) {
	ss.fast.mu.Lock()
	cancel := ss.fast.calls[string(id)]
	ss.fast.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// requestMetaValid reports whether the _meta of a request of protocol
// 2026-07-28 or later has what the go-sdk requires of it: the client's
// capabilities, an object, and its description, if there, an object too
// (null is not one).
func requestMetaValid(meta []byte) bool {
	caps, ok := jsonwire.Member(meta, mcp.MetaKeyClientCapabilities)
	if !ok || len(caps) == 0 || caps[0] != '{' {
		return false
	}
	info, ok := jsonwire.Member(meta, mcp.MetaKeyClientInfo)
	return !ok || len(info) > 0 && info[0] == '{'
}

// passedMeta is a request's _meta as a call passes it on (upstream's
// callMeta chooses which members): each member's value as it came, not
// decoded, since it is only encoded again. A request of protocol
// 2026-07-28 carries the client's capabilities and description in every
// _meta, and decoding them cost more than a kilobyte per call. A key
// written with escapes is decoded, as the go-sdk reads it, and so is the
// whole _meta then; nil if it is not an object.
func passedMeta(meta []byte) mcp.Meta {
	m := mcp.Meta{}
	escaped := false
	ok := jsonwire.Members(meta, func(k, v []byte) bool {
		if bytes.IndexByte(k, '\\') >= 0 {
			escaped = true
			return false
		}
		m[string(k)] = json.RawMessage(v) // the last of a repeated key, as decoding
		return true
	})
	if escaped {
		var decoded mcp.Meta
		if json.Unmarshal(meta, &decoded) != nil {
			return nil
		}
		return decoded
	}
	if !ok {
		return nil
	}
	return m
}

// member is jsonwire.Member without the flag.
func member(obj []byte, key string) []byte {
	v, _ := jsonwire.Member(obj, key)
	return v
}

// fastCalls are a session's fast calls in flight, by request ID as
// written, for the client's cancellations and the session's end, which
// cancels them all (one watch on the session rather than one per call).
// mu is a leaf.
type fastCalls struct {
	mu     sync.Mutex
	calls  map[string]context.CancelFunc
	ended  bool // the session has ended: a call that starts now is cancelled at once
	serial int  // makes a key for a request ID already in flight (a client's mistake)
}

// add registers the cancel of the call with request ID id and returns
// the key to remove it by. It cancels at once when the session has ended.
func (f *fastCalls) add(id string, cancel context.CancelFunc) (key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		cancel()
		return ""
	}
	if f.calls == nil {
		f.calls = make(map[string]context.CancelFunc)
	}
	key = id
	if _, dup := f.calls[key]; dup {
		// Kept apart so that the session's end still cancels it; the
		// client's cancellation of that ID reaches the first.
		f.serial++
		key = id + "\x00" + strconv.Itoa(f.serial)
	}
	f.calls[key] = cancel
	return key
}

func (f *fastCalls) remove(key string) {
	if key == "" {
		return
	}
	f.mu.Lock()
	delete(f.calls, key)
	f.mu.Unlock()
}

// cancelAll cancels every call in flight, and every call that starts
// after: the session has ended.
func (f *fastCalls) cancelAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = true
	for _, cancel := range f.calls {
		cancel()
	}
}
