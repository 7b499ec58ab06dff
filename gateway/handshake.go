package gateway

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/transport"
)

// A client that speaks both eras probes with server/discover and, when
// no answer comes in time (a daemon still starting behind the shim),
// falls back to initialize on the same connection: the daemon reads the
// two together. The go-sdk answers initialize in order but server/discover
// concurrently, and its discover records the probe's protocol on the
// session whether or not an initialize came first. Both answered, the
// client goes on in 2025-11-25 while the session, and mcpgw with it,
// takes it for 2026-07-28: its approval came back as an input_required
// result its protocol does not have.
//
// eraMiddleware lets one of the two through per session, in the order the
// daemon gets to them: a probe after the initialize is refused as a
// server of the older protocol refuses it (method not found), and an
// initialize after the probe is refused by the go-sdk (a duplicate). It
// also attaches the go-sdk's session at the first request of the newer
// protocol (clientConn.attach).
func (ss *session) eraMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !ss.sessionless && ss.conn.session() == nil {
			// (A conversation's requests each come on a go-sdk session of
			// their own: it keeps none, and asks nothing of its clients.)
			if sess, ok := req.GetSession().(*mcp.ServerSession); ok {
				ss.conn.attach(sess)
			}
		}
		if method != "initialize" && method != "server/discover" {
			return next(ctx, method, req)
		}
		ss.handshake.Lock()
		defer ss.handshake.Unlock()
		if method == "server/discover" {
			if sess, ok := req.GetSession().(*mcp.ServerSession); ok {
				if p := sess.InitializeParams(); p != nil && p.ProtocolVersion < transport.FirstSessionless {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf(
						"server/discover: this session began with initialize, in protocol %s, and stays in it", p.ProtocolVersion)}
				}
			}
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		if err == nil {
			ss.conn.initialized(req.GetSession(), res)
		}
		return res, err
	}
}

// initialized notes the protocol an initialize agreed on, for the fast
// path, when sess is already the session's (a shim's is from the moment
// its connection opens): its client may send its next requests (tools/list
// at once) before the go-sdk has read the notifications/initialized ahead
// of them, which registers the session (Hub.register). The go-sdk itself
// serves requests from the initialize on.
func (c *clientConn) initialized(sess mcp.Session, res mcp.Result) {
	ir, ok := res.(*mcp.InitializeResult)
	if !ok || ir.ProtocolVersion == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ss != nil && mcp.Session(c.ss) == sess && c.protocol == "" {
		c.protocol = ir.ProtocolVersion
	}
}
