package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/surface"
)

// maxErrorText bounds an error answer's message, in bytes.
const maxErrorText = 2048

// maxErrorData bounds an error answer's data, in bytes: room for what an
// upstream's error carries for its client to act on (the capabilities it
// lacks, the URLs to visit), which is relayed as it is.
const maxErrorData = 64 << 10

// boundErrors keeps the answer of a request that failed short. An error
// often quotes what the caller sent (the SDK's own among them: a prompt
// or a resource the session does not have, with its name or URI), and a
// caller that sent a megabyte would be sent it back: the message is cut
// to maxErrorText bytes, saying how long it was, and data over
// maxErrorData is left out, saying so.
func (ss *session) boundErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			err = boundError(err)
		}
		return res, err
	}
}

// boundError is err as the SDK would answer it (its code, its message and,
// for a JSON-RPC error itself, its data), within maxErrorText and
// maxErrorData.
func boundError(err error) error {
	jerr, ok := err.(*jsonrpc.Error)
	if !ok {
		msg := err.Error()
		if len(msg) <= maxErrorText {
			return err
		}
		// What the SDK answers for a wrapped JSON-RPC error: its code,
		// the outer message.
		out := &jsonrpc.Error{Message: cutText(msg)}
		if errors.As(err, &jerr) {
			out.Code = jerr.Code
		}
		return out
	}
	data, fixed := jsonData(jerr.Data)
	if len(jerr.Message) <= maxErrorText && len(data) <= maxErrorData && !fixed {
		return err
	}
	out := &jsonrpc.Error{Code: jerr.Code, Message: jerr.Message, Data: data}
	if len(out.Message) > maxErrorText {
		out.Message = cutText(out.Message)
	}
	if len(out.Data) > maxErrorData {
		out.Data = nil
		out.Message += " (its data, " + strconv.Itoa(len(data)) + " bytes, left out)"
	}
	return out
}

// jsonData is an error's data as JSON. The go-sdk's ResourceNotFoundError
// writes the URI with Go's quoting (%q), which is not JSON for a control
// character or a rune it does not print: the answer then failed to encode,
// the client got an empty one, and the session answered nothing more.
// Such a URI is written again as JSON; any other data that is not JSON
// becomes a string of it. fixed says whether data was not JSON.
func jsonData(data json.RawMessage) (_ json.RawMessage, fixed bool) {
	if len(data) == 0 || json.Valid(data) {
		return data, false
	}
	if q, ok := strings.CutPrefix(string(data), `{"uri":`); ok {
		if uri, err := strconv.Unquote(strings.TrimSuffix(q, "}")); err == nil {
			return uriData(uri), true
		}
	}
	out, _ := json.Marshal(string(data))
	return out, true
}

// cutText is s cut to maxErrorText bytes, saying how long it was.
func cutText(s string) string {
	return surface.Truncate(s, maxErrorText) + " (" + strconv.Itoa(len(s)) + " bytes)"
}
