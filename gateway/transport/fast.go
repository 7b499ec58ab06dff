package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpgw/mcpgw/internal/jsonwire"
)

// Fast calls: a client's tools/call is the daemon's main load, and the
// SDK's way with it (decoding the message ten times over, each with a new
// 32 KiB decoder; goroutine hand-offs per message) costs more than the
// rest of the gateway. A call that needs nothing of the SDK is answered
// here instead, over HTTP (serveFast) and on the shim's socket
// (lineFilter): its envelope is read without decoding the message and
// given to its session (Session.Fast), which makes it through the same
// dispatcher as any call (gateway/dispatch) and may relay the upstream's
// result as bytes where nothing in it has to change (content.Relayable).
// A session's tools/list is answered the same way, from its tool table
// and the tools' encodings made once (the SDK would encode the list for
// each answer, and copy it twice more). Everything else goes to the SDK
// as before: other methods, calls with a progress token, ToolSearch and
// the mcp tool's other actions, unknown tools (for the SDK path's
// explanations), sessions not yet initialized.
//
// Nothing is lost by answering outside the SDK: messages related to a
// call (log messages, sampling, elicitation, roots requests) reach the
// client out of band either way, on the session's standalone stream
// (Streamable HTTP with JSON responses) or on the socket between lines.

// fastRequest is a tools/call or tools/list request read from its
// envelope.
type fastRequest struct {
	method string // tools/call or tools/list
	id     []byte // the request's ID, as written
	params []byte // nil for a tools/list without
}

// parseFastRequest reads a single JSON-RPC request for tools/call or
// tools/list; ok is false for anything else (batches, other methods,
// notifications, responses).
func parseFastRequest(msg []byte) (r fastRequest, ok bool) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 || msg[0] != '{' || !bytes.Contains(msg, []byte(`"tools/`)) {
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
		}
		// Any other member is read past, not stopped at: Members says
		// whether the whole message is well-formed only when it reaches
		// the end, and a member repeated after it counts as the go-sdk
		// reads it (the last one).
		return true
	})
	switch string(method) {
	case `"tools/call"`:
		r.method = "tools/call"
	case `"tools/list"`:
		r.method = "tools/list" // its params are optional
	}
	switch {
	case !wellFormed, !version, r.method == "", len(r.id) == 0:
		return r, false
	case r.id[0] != '"' && (r.id[0] < '0' || r.id[0] > '9') && r.id[0] != '-':
		return r, false // null, or not an ID at all
	case r.params == nil && r.method == "tools/list":
		return r, true
	case len(r.params) == 0 || r.params[0] != '{':
		return r, false
	}
	return r, true
}

// cancelledID returns the request ID a client's notifications/cancelled
// names, or nil when msg is not one.
func cancelledID(msg []byte) []byte {
	if !bytes.Contains(msg, []byte(`"notifications/cancelled"`)) {
		return nil
	}
	if m, _ := jsonwire.String(member(msg, "method")); m != "notifications/cancelled" {
		return nil
	}
	return member(member(msg, "params"), "requestId")
}

// cancelFast ends the fast call a notifications/cancelled in msg names,
// if it is one. The message goes on to the go-sdk all the same, for the
// calls it handles.
func cancelFast(ss Session, msg []byte) {
	if id := cancelledID(msg); len(id) > 0 {
		ss.CancelFast(id)
	}
}

// member is jsonwire.Member without the flag.
func member(obj []byte, key string) []byte {
	v, _ := jsonwire.Member(obj, key)
	return v
}

// writeAnswer writes the JSON-RPC response to request id (result, or err
// as a JSON-RPC error; any error that is not one is an internal error),
// as the SDK writes it, and a newline after it if asked. The bytes are
// put together in a buffer that is used again: w keeps none of them
// (io.Writer), and an answer is written before its call ends.
func writeAnswer(w io.Writer, id, result []byte, err error, newline bool) {
	b := answerBufs.Get().(*[]byte)
	*b = appendAnswer((*b)[:0], id, result, err)
	if newline {
		*b = append(*b, '\n')
	}
	_, _ = w.Write(*b)
	if cap(*b) <= maxPooledAnswer {
		answerBufs.Put(b)
	}
}

var answerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledAnswer bounds the buffers answerBufs keeps: a large answer's
// is left to the collector rather than held for small ones.
const maxPooledAnswer = 64 << 10

// appendAnswer appends to b the JSON-RPC response writeAnswer writes.
func appendAnswer(b, id, result []byte, err error) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	if err == nil {
		b = append(b, `,"result":`...)
		b = append(b, result...)
		return append(b, '}')
	}
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		werr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	data, merr := json.Marshal(werr)
	if merr != nil {
		data, _ = json.Marshal(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: werr.Message})
	}
	b = append(b, `,"error":`...)
	b = append(b, data...)
	return append(b, '}')
}

// serveFast answers a POST that is a fast call of a known session, as the
// go-sdk's handler would (JSON response mode); false leaves it to the
// go-sdk.
func (t *Transports) serveFast(w http.ResponseWriter, r *http.Request, body []byte, idle time.Duration) bool {
	sid := r.Header.Get("Mcp-Session-Id")
	if !acceptsJSONAndSSE(r.Header.Values("Accept")) || !isJSON(r.Header.Get("Content-Type")) {
		return false
	}
	if sid == "" {
		return t.serveSessionlessFast(w, r, body)
	}
	ss, ok := t.hub.HTTPSession(sid)
	if !ok {
		return false
	}
	req, ok := parseFastRequest(body)
	if !ok {
		cancelFast(ss, body)
		return false
	}
	protocol, seen := ss.HTTPState()
	if protocol == "" {
		return false // not initialized yet
	}
	if pv := r.Header.Get("Mcp-Protocol-Version"); pv != "" && pv != protocol {
		return false // the go-sdk says what is wrong with it
	}
	if idle > 0 && time.Since(seen) > idle/2 {
		// The go-sdk closes sessions it has not seen for its idle
		// timeout: let it see this one.
		return false
	}
	run, ok := ss.Fast(req.method, req.id, req.params)
	if !ok {
		return false
	}
	result, err := run(r.Context())
	jsonHeaders(w.Header())
	writeAnswer(w, req.id, result, err, false)
	return true
}

// jsonHeaders sets the headers of a fast call's answer, as the go-sdk
// writes them. The values are shared, not made per answer: net/http
// copies a handler's header before it writes it, and a value replaced
// or added to later gets a slice of its own (Set, Add).
func jsonHeaders(h http.Header) {
	h["Cache-Control"] = noCacheValue
	h["Content-Type"] = jsonValue
}

var (
	noCacheValue = []string{"no-cache, no-transform"}
	jsonValue    = []string{"application/json"}
)

// serveSessionlessFast answers a POST of protocol 2026-07-28 or later
// that is a fast call, with the conversation its headers describe, as the
// go-sdk's handler would; false leaves it to the go-sdk. Anything the
// go-sdk would refuse or check goes to it: a version it does not speak,
// standard headers that are missing or disagree with the body (Mcp-Method,
// Mcp-Name, the _meta version), and tools whose arguments are bound to
// headers (the session leaves those to it).
func (t *Transports) serveSessionlessFast(w http.ResponseWriter, r *http.Request, body []byte) bool {
	pv := r.Header.Get("Mcp-Protocol-Version")
	if pv < FirstSessionless || !slices.Contains(t.o.Protocols, pv) || r.Header.Get("Mcp-Method") != "tools/call" {
		return false
	}
	req, ok := parseFastRequest(body)
	if !ok || req.method != "tools/call" {
		return false
	}
	name, _ := jsonwire.String(member(req.params, "name"))
	metaPV, _ := jsonwire.String(member(member(req.params, "_meta"), metaProtocolVersion))
	if name == "" || r.Header.Get("Mcp-Name") != name || metaPV != pv {
		return false
	}
	ss, ok := t.hub.ConversationSession(httpSessionOptions(r))
	if !ok {
		return false
	}
	run, ok := ss.Fast(req.method, req.id, req.params)
	if !ok {
		return false
	}
	result, err := run(r.Context())
	jsonHeaders(w.Header())
	if status := errorStatus(err); status != 0 {
		w.WriteHeader(status)
	}
	writeAnswer(w, req.id, result, err, false)
	return true
}

// errorStatus is the HTTP status of an answer of protocol 2026-07-28 that
// is err (SEP-2575): 404 for an unknown method, 400 for invalid params, an
// unsupported version or a missing client capability; 0 for 200.
func errorStatus(err error) int {
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		return 0
	}
	switch werr.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, codeUnsupportedProtocolVersion, codeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return 0
}

// JSON-RPC error codes of protocol 2026-07-28 (SEP-2575).
const (
	codeMissingRequiredClientCapabilities = -32021
	codeUnsupportedProtocolVersion        = -32022
)

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
		// strings.SplitSeq: the parts are not gathered in a slice made
		// for each request.
		for part := range strings.SplitSeq(v, ",") {
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
