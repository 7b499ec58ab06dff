package gateway

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/transport"
	"github.com/mcpgw/mcpgw/internal/jsonwire"
)

// prepareList decides whether the session's tools/list with params is
// answered on the fast path (transport's fast.go), as listTools would
// answer it on the SDK's: a session of the 2025 era, initialized, asking
// for the list's one page with nothing in params but _meta, and no server
// of its being discovered (the SDK's path waits for those, bounded). A
// session of 2026-07-28 goes to the SDK, which completes the result and
// reads the client's declarations in each request's _meta.
func (ss *session) prepareList(params []byte) (run func(context.Context) (json.RawMessage, error), ok bool) {
	if ss.sessionless {
		return nil, false
	}
	ss.conn.mu.Lock()
	protocol, attached := ss.conn.protocol, ss.conn.ss != nil
	ss.conn.mu.Unlock()
	if !attached || protocol == "" || protocol >= transport.FirstSessionless {
		return nil, false
	}
	if params != nil {
		plain := true
		wellFormed := jsonwire.Members(params, func(k, v []byte) bool {
			plain = string(k) == "_meta" && len(v) > 0 && v[0] == '{' && !hasMember(v, mcp.MetaKeyProtocolVersion)
			return plain
		})
		if !wellFormed || !plain {
			return nil, false // a cursor (the SDK refuses it), or anything else the SDK reads
		}
	}
	v := ss.View()
	upstream := ss.listsUpstream(v)
	if upstream && len(ss.gw.pendingFor(v)) > 0 {
		return nil, false
	}
	return func(context.Context) (json.RawMessage, error) {
		ss.gw.fastLists.Add(1)
		if upstream {
			ss.syncTools(v)
		}
		t := ss.tools.Load()
		res := &mcp.ListToolsResult{Tools: t.list}
		res.TTLMs, res.CacheScope = 0, "private" // as listTools says
		data, err := (&listAnswer{ListToolsResult: res, table: t}).MarshalJSON()
		ss.relist.answered()
		return data, err
	}, true
}

// hasMember reports whether the JSON object obj has the member key.
func hasMember(obj []byte, key string) bool {
	_, ok := jsonwire.Member(obj, key)
	return ok
}

// listAnswer is a session's tools/list answer. Its tools are written from
// the bytes each upstream tool was encoded to once, for every session
// that lists it (registry.Tool.ExposedJSON), rather than encoded again by
// the SDK for each list: a list of 1,600 tools is a copy, not 48,000
// allocations. The embedded result is what the SDK sees and completes
// (resultType, the server's _meta of protocol 2026-07-28).
type listAnswer struct {
	*mcp.ListToolsResult
	table *toolTable
}

// toolsTail ends the result's encoding when it has no tools: the tools
// member is the result's last.
var toolsTail = []byte(`"tools":[]}`)

func (a *listAnswer) MarshalJSON() ([]byte, error) {
	rest := *a.ListToolsResult
	rest.Tools = []*mcp.Tool{}
	head, err := jsonwire.Marshal(&rest)
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(head, toolsTail) {
		// A result that no longer ends with its tools (a later SDK):
		// encoded whole, as the SDK would.
		return jsonwire.Marshal(a.ListToolsResult)
	}
	head = head[:len(head)-len("[]}")]
	tools := make([][]byte, len(a.table.list))
	size := len(head) + len(a.table.list) + 2
	for i, def := range a.table.list {
		if t := a.table.upstream[def.Name]; t != nil && t.Exposed() == def {
			tools[i] = t.ExposedJSON()
		} else if tools[i], err = jsonwire.Marshal(def); err != nil {
			return nil, err
		}
		size += len(tools[i])
	}
	out := make([]byte, 0, size)
	out = append(out, head...)
	out = append(out, '[')
	for i, t := range tools {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, t...)
	}
	return append(out, "]}"...), nil
}
