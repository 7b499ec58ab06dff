package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/mcpgw/mcpgw/upstream"
)

// Fast calls: a client's tools/call is the daemon's main load, and the
// SDK's way with it (decoding the message ten times over, each with a new
// 32 KiB decoder; goroutine hand-offs per message) costs more than the
// rest of the gateway. A call that needs nothing of the SDK is answered
// here instead, over HTTP (serveFast) and on the shim's socket
// (lineFilter): its envelope is read without decoding the message, the
// call goes through the same dispatcher (dispatch), and the upstream's
// result is relayed as bytes where nothing in it has to change
// (content.Relayable). Everything else goes to the SDK as before: other methods,
// calls with a progress token, ToolSearch and the mcp tool's other
// actions, unknown tools (for the SDK path's explanations), sessions not
// yet initialized.
//
// Nothing is lost by answering outside the SDK: messages related to a
// call (log messages, sampling, elicitation, roots requests) reach the
// client out of band either way, on the session's standalone stream
// (Streamable HTTP with JSON responses) or on the socket between lines.

// fastRequest is a tools/call request read from its envelope.
type fastRequest struct {
	id     []byte // the request's ID, as written
	params []byte
}

// parseFastRequest reads a single JSON-RPC request for tools/call; ok is
// false for anything else (batches, other methods, notifications,
// responses).
func parseFastRequest(msg []byte) (r fastRequest, ok bool) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 || msg[0] != '{' || !bytes.Contains(msg, []byte(`"tools/call"`)) {
		return r, false
	}
	var method []byte
	var version bool
	wellFormed := jsonwire.Members(msg, func(k, v []byte) bool {
		switch string(k) {
		case "jsonrpc":
			version = string(v) == `"2.0"`
		case "id":
			r.id = v
		case "method":
			method = v
		case "params":
			r.params = v
		default:
			return false
		}
		return true
	})
	switch {
	case !wellFormed, !version, string(method) != `"tools/call"`, len(r.id) == 0, len(r.params) == 0:
		return r, false
	case r.id[0] != '"' && (r.id[0] < '0' || r.id[0] > '9') && r.id[0] != '-':
		return r, false // null, or not an ID at all
	case r.params[0] != '{':
		return r, false
	}
	return r, true
}

// fastCall answers the tools/call id of the session with params, or
// returns ok false when the SDK should.
func (ss *session) fastCall(ctx context.Context, id, params []byte) (result json.RawMessage, ok bool) {
	ss.lastActive.Store(time.Now().UnixNano())
	ss.gw.busy()
	run, ok := ss.prepareFast(id, params)
	if !ok {
		return nil, false
	}
	return run(ctx), true
}

// prepareFast decides whether the tools/call id with params is a fast
// call; if it is, run makes it and returns the result.
func (ss *session) prepareFast(id, params []byte) (run func(context.Context) json.RawMessage, ok bool) {
	ss.mu.Lock()
	protocol := ss.protocol
	ss.mu.Unlock()
	if protocol == "" {
		return nil, false // not initialized yet
	}
	name, ok := jsonwire.String(member(params, "name"))
	if !ok || !ss.hasTool(name) {
		return nil, false
	}
	c := &toolCall{session: ss, name: name, route: viaExposed, protocol: protocol, relay: true, opts: &upstream.CallOptions{}}
	if raw, has := jsonwire.Member(params, "_meta"); has {
		if _, progress := jsonwire.Member(raw, "progressToken"); progress {
			return nil, false
		}
		if err := json.Unmarshal(raw, &c.opts.Meta); err != nil {
			return nil, false
		}
	}
	for _, k := range [...]string{"task", "inputResponses", "requestState"} {
		if _, has := jsonwire.Member(params, k); has {
			return nil, false // the SDK's business
		}
	}
	c.args = member(params, "arguments")
	switch {
	case ss.mode == ModeProxy && name == "mcp":
		var a proxyArgs
		if len(c.args) > 0 && string(c.args) != "null" {
			if err := json.Unmarshal(c.args, &a); err != nil {
				return nil, false
			}
		}
		if a.Tool == "" {
			return nil, false // the mcp tool's other actions: the SDK's path
		}
		c.name, c.args, c.route = a.Tool, a.Args, viaProxy
	case ss.mode == ModeToolSearch && name == toolSearchName, name == scriptToolName && ss.hasTool(name):
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
		res, raw := ss.gw.dispatch(ctx, c)
		if raw != nil {
			ss.gw.relayedCalls.Add(1)
			return raw
		}
		data, err := json.Marshal(res)
		if err != nil {
			data, _ = json.Marshal(errorResult("encoding the result: %v", err))
		}
		return data
	}, true
}

// cancelFast ends the fast call that a client's notifications/cancelled
// names, if it is one. The message goes on to the SDK all the same, for
// the calls it handles.
func (ss *session) cancelFast(msg []byte) {
	if !bytes.Contains(msg, []byte(`"notifications/cancelled"`)) {
		return
	}
	if m, _ := jsonwire.String(member(msg, "method")); m != "notifications/cancelled" {
		return
	}
	id := member(member(msg, "params"), "requestId")
	if len(id) == 0 {
		return
	}
	ss.mu.Lock()
	cancel := ss.fastCalls[string(id)]
	ss.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// member is jsonwire.Member without the flag.
func member(obj []byte, key string) []byte {
	v, _ := jsonwire.Member(obj, key)
	return v
}

// response is the JSON-RPC response to request id with result, as the
// SDK writes it.
func response(id, result []byte) []byte {
	b := make([]byte, 0, len(result)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// serveFast answers a POST that is a fast call of a known session, as the
// SDK's handler would (JSON response mode); false leaves it to the SDK.
func (s *Server) serveFast(w http.ResponseWriter, r *http.Request, body []byte, idle time.Duration) bool {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" || !acceptsJSONAndSSE(r.Header.Values("Accept")) || !isJSON(r.Header.Get("Content-Type")) {
		return false
	}
	ss := s.httpSession(sid)
	if ss == nil {
		return false
	}
	req, ok := parseFastRequest(body)
	if !ok {
		ss.cancelFast(body)
		return false
	}
	ss.mu.Lock()
	protocol, seen := ss.protocol, ss.sdkSeen
	ss.mu.Unlock()
	if pv := r.Header.Get("Mcp-Protocol-Version"); pv != "" && pv != protocol {
		return false // the SDK says what is wrong with it
	}
	if idle > 0 && time.Since(seen) > idle/2 {
		// The SDK closes sessions it has not seen for its idle timeout:
		// let it see this one.
		return false
	}
	result, ok := ss.fastCall(r.Context(), req.id, req.params)
	if !ok {
		return false
	}
	h := w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(response(req.id, result))
	return true
}

// isJSON reports whether a Content-Type is application/json.
func isJSON(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// acceptsJSONAndSSE reports whether Accept values name both media types
// a Streamable HTTP client must accept (the SDK refuses others).
func acceptsJSONAndSSE(values []string) bool {
	var js, sse bool
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			switch strings.TrimSpace(mt) {
			case "application/json", "application/*":
				js = true
			case "text/event-stream", "text/*":
				sse = true
			case "*/*":
				js, sse = true, true
			}
		}
	}
	return js && sse
}

// httpSession returns the session whose Streamable HTTP session ID is id.
func (s *Server) httpSession(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byHTTPID[id]
}

// sawHTTPSession notes that the SDK handled a request of session id.
func (s *Server) sawHTTPSession(id string) {
	if ss := s.httpSession(id); ss != nil {
		ss.mu.Lock()
		ss.sdkSeen = time.Now()
		ss.mu.Unlock()
	}
}
