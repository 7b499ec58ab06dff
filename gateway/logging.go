//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; a gateway forwards it.

package gateway

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// Upstream log messages (notifications/message) reach every session whose
// configuration includes the server, each filtered at the level that
// session set with logging/setLevel (the SDK drops messages below it, and
// sends nothing before the session sets one). Upstreams are asked for the
// most verbose level any session wants.

// logLevels in increasing severity (RFC 5424, as MCP uses them).
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// logMiddleware records the level a session sets and updates the level
// asked of upstreams.
func (ss *session) logMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method == "logging/setLevel" && err == nil {
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
				ss.conn.mu.Lock()
				ss.conn.logLevel = p.Level
				ss.conn.mu.Unlock()
				ss.gw.updateLogLevel()
			}
		}
		return res, err
	}
}

// updateLogLevel asks upstreams for the most verbose level any session set.
// Two at once could otherwise each compute from the levels they saw and
// set them in the other order: the less verbose level would stay.
func (s *Hub) updateLogLevel() {
	s.logLevelMu.Lock()
	defer s.logLevelMu.Unlock()
	best := -1
	for _, ss := range s.sessionList() {
		ss.conn.mu.Lock()
		i := slices.Index(logLevels, ss.conn.logLevel)
		ss.conn.mu.Unlock()
		if i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best >= 0 {
		s.pool.SetLogLevel(logLevels[best])
	}
}

// onLog is the pool's OnLog: the message goes to the sessions that have
// the server, named after it when the upstream gave no logger name. A
// private upstream's ("isolation" session or user) goes only to the
// sessions it serves: what one session's or user's process logs is theirs.
func (s *Hub) onLog(srv *registry.Server, private string, p *mcp.LoggingMessageParams) {
	msg := *p
	if msg.Logger == "" {
		msg.Logger = srv.Name
	}
	data, _ := json.Marshal(msg.Data)
	size := len(data) + len(msg.Logger) + 64
	for _, ss := range s.sessionList() {
		if !hasServer(ss.View(), srv.Hash) || privateKey(ss, srv) != private {
			continue
		}
		sess := ss.conn.session()
		if sess == nil || !ss.conn.logs(msg.Level) {
			continue
		}
		ss.post(size, func(ctx context.Context) {
			if err := sess.Log(ctx, &msg); err != nil {
				s.log.Debug("forwarding an upstream log message", "server", srv.Name, "err", err)
			}
		})
	}
}

func hasServer(v *registry.View, hash string) bool {
	for _, sv := range v.Servers {
		if sv.Server.Hash == hash && sv.Server.Enabled {
			return true
		}
	}
	return false
}

// logs reports whether a message at level goes to the client now: the
// level it set is filtered here, where the message arrives, as well as by
// the go-sdk where it is sent. A message that came while the client asked
// for less never reaches it later, when it has asked for more before the
// message was sent. Without a level set here (none asked, or one a
// request carries), the go-sdk alone decides.
func (c *clientConn) logs(level mcp.LoggingLevel) bool {
	c.mu.Lock()
	set := c.logLevel
	c.mu.Unlock()
	want := slices.Index(logLevels, set)
	return want < 0 || slices.Index(logLevels, level) >= want
}
