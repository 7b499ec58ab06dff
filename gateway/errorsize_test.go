package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// TestBoundError: an error's answer keeps its code and, when short, its
// message and data; a long message is cut and gives its length, long data
// is left out, saying so.
func TestBoundError(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	short := &jsonrpc.Error{Code: -32002, Message: "Resource not found", Data: json.RawMessage(`{"uri":"a"}`)}
	for _, tc := range []struct {
		in       error
		code     int64
		msgStart string
		msgEnd   string
		data     string
	}{
		{short, -32002, "Resource not found", "Resource not found", `{"uri":"a"}`},
		{errors.New("short"), 0, "short", "short", ""},
		{errors.New("bad " + long), 0, "bad xxx", "… (1048580 bytes)", ""},
		{fmt.Errorf("handling %s: %w", long, &jsonrpc.Error{Code: -32602, Message: "invalid"}), -32602, "handling xxx", "… (1048594 bytes)", ""},
		{&jsonrpc.Error{Code: -32002, Message: "Resource not found", Data: json.RawMessage(`{"uri":"` + long + `"}`)}, -32002, "Resource not found", " (its data, 1048586 bytes, left out)", ""},
		{&jsonrpc.Error{Code: -32602, Message: "unknown " + long}, -32602, "unknown xxx", "… (1048584 bytes)", ""},
		// The go-sdk's ResourceNotFoundError quotes a URI as Go does: not
		// JSON for a control character or a rune Go does not print.
		{mcp.ResourceNotFoundError("a\x01b\v\U000e0001é"), -32602, "Resource not found", "Resource not found", `{"uri":"a\u0001b\u000b󠀁é"}`},
		{&jsonrpc.Error{Code: -32603, Message: "odd", Data: json.RawMessage(`{'a':1}`)}, -32603, "odd", "odd", `"{'a':1}"`},
	} {
		out := boundError(tc.in)
		var jerr *jsonrpc.Error
		code, msg, data := int64(0), out.Error(), ""
		if errors.As(out, &jerr) && out == error(jerr) {
			code, msg, data = jerr.Code, jerr.Message, string(jerr.Data)
		}
		if code != tc.code || !strings.HasPrefix(msg, tc.msgStart) || !strings.HasSuffix(msg, tc.msgEnd) || len(msg) > maxErrorText+100 || data != tc.data {
			t.Errorf("boundError(%.40q) = code %d, %d-byte message %.60q…%q, data %q", tc.in.Error(), code, len(msg), msg, msg[max(0, len(msg)-40):], data)
		}
	}
	if out := boundError(short); out != error(short) {
		t.Errorf("a short error was replaced: %v", out)
	}
}

// TestBoundErrorKeepsUpstreamData: the data an upstream's error gives its
// client to act on (here 20 URLs to visit, 40 KB) is relayed whole.
func TestBoundErrorKeepsUpstreamData(t *testing.T) {
	var urls []map[string]string
	for i := range 20 {
		urls = append(urls, map[string]string{"mode": "url", "url": "https://auth.example.com/authorize?" + strings.Repeat("q", 2000) + fmt.Sprint(i)})
	}
	data, _ := json.Marshal(map[string]any{"elicitations": urls})
	in := &jsonrpc.Error{Code: -32042, Message: "URL elicitation required", Data: data}
	if out := boundError(in); out != error(in) {
		t.Errorf("an upstream's %d bytes of data were changed: %v", len(data), out)
	}
}

// TestUnprintableURIsAreAnswered: a URI no resource has, with a control
// character and a rune Go does not print, gets a JSON error naming it on
// every method that reads one, and the session goes on answering. The
// go-sdk's own answer to resources/read could not be encoded: the client
// got an empty body, and the session nothing more.
func TestUnprintableURIsAreAnswered(t *testing.T) {
	t.Parallel()
	uri := "test://a\x01b\vc\U000e0001é"
	s, _ := auditedSession(t, registry.ModeDirect, "c")
	for i, tc := range []struct{ method, params string }{
		{"resources/read", `{"uri":%s}`},
		{"resources/subscribe", `{"uri":%s}`},
		{"completion/complete", `{"ref":{"type":"ref/resource","uri":%s},"argument":{"name":"x","value":"y"}}`},
	} {
		quoted, _ := json.Marshal(uri)
		body, _ := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":`+tc.params+`}`, i+2, tc.method, quoted))
		var answer struct {
			Error struct {
				Message string
				Data    struct{ URI string }
			}
		}
		if err := json.Unmarshal(body, &answer); err != nil || answer.Error.Data.URI != uri {
			t.Errorf("%s: %v, the URI in the answer %q, want %q: %q", tc.method, err, answer.Error.Data.URI, uri, body)
		}
		if body, _ := s.post(`{"jsonrpc":"2.0","id":100,"method":"ping"}`); string(body) != `{"jsonrpc":"2.0","id":100,"result":{}}` {
			t.Errorf("ping after %s: %q", tc.method, body)
		}
	}
}
