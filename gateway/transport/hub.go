// Package transport is where a client's requests enter the daemon and its
// answers leave: MCP Streamable HTTP on /mcp (with the control endpoints
// and the status page beside it), and the unix socket the stdio shim
// dials, as a byte stream or with the client's own pipes handed over.
//
// A transport reads the bytes. A tools/call that needs nothing of the
// go-sdk is read from its envelope here and given to its session to make
// (the fast path, see fast.go); everything else goes to the session's
// go-sdk server. What a session is, and how a call is decided, belong to
// the Hub (package gateway): this package never sees a tool.
package transport

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/registry"
)

// SessionOptions describe a session as its client asked for it.
type SessionOptions struct {
	Cwd         string        // the client's working directory, if known
	Mode        registry.Mode // proxy, toolsearch, direct; "" = the configured mode
	DirectTools string        // MCP_DIRECT_TOOLS of the session; "" = the daemon's
	// ClientPrefix says how the client names mcpgw's tools, for the names
	// written into text for the model: "none", "KEY_" (pi-mcp-adapter),
	// "mcp__KEY__" (Pi 1.x); "" = recognise the client from initialize.
	ClientPrefix string
	// ID identifies the session across connections (the shim's session);
	// with a session directory, its state is kept there under ID while
	// it lasts. Resume restores that state, if Secret is the resume
	// secret the daemon gave the session's shim (Session.ShimIdentity);
	// otherwise the session starts afresh, under an ID of its own.
	ID     string
	Resume bool
	Secret string
	// User is who opened the session, in team mode (nil otherwise):
	// what the session does is recorded under that user, and only that
	// user continues it.
	User *identity.User
	// HTTPID is the Streamable HTTP session ID the session takes: that
	// of a session kept in team.store, made again on this replica
	// (shared.go); "" for a new one.
	HTTPID string
}

// SessionID is what gives the session's go-sdk server its Streamable
// HTTP session ID (mcp.ServerOptions.GetSessionID): HTTPID, or nil for
// the go-sdk's own random one.
func (o SessionOptions) SessionID() func() string {
	if o.HTTPID == "" {
		return nil
	}
	id := o.HTTPID
	return func() string { return id }
}

// Hub is the daemon as its transports see it: it makes sessions and knows
// them by their Streamable HTTP session IDs.
type Hub interface {
	// ServeSession serves one session on t until it ends; ready, if not
	// nil, is given the session before it starts, and an error from it
	// ends the session there (ServeSession returns it).
	ServeSession(ctx context.Context, t mcp.Transport, opts SessionOptions, ready func(Session) error) error
	// OpenHTTPSession makes the session a request without a session ID
	// opens, and returns its go-sdk server.
	OpenHTTPSession(opts SessionOptions) *mcp.Server
	// Conversation returns the go-sdk server that answers a request of
	// protocol 2026-07-28 or later (which has no session) described by
	// opts, or nil when none can; called for every such request.
	Conversation(opts SessionOptions) *mcp.Server
	// ConversationSession is the conversation Conversation would answer
	// with, as a Session: for its fast calls.
	ConversationSession(opts SessionOptions) (Session, bool)
	// HTTPSession returns the initialized session whose Streamable HTTP
	// session ID is id.
	HTTPSession(id string) (Session, bool)
	// CancelHTTPSession ends the requests in flight of session id (its
	// client has left).
	CancelHTTPSession(id string)
	// HTTPSessionClosed says the go-sdk has ended session id: its
	// connection is closed and none of its handlers runs any more.
	HTTPSessionClosed(id string)
}

// Session is one session as its transport sees it.
type Session interface {
	// Context ends when the session or the daemon ends.
	Context() context.Context
	// Fast returns the answer to the request id of method (tools/call or
	// tools/list) with params, or ok false when the go-sdk should answer
	// it (see fast.go). It counts as a request of the client's. run
	// returns the result, or the JSON-RPC error (a *jsonrpc.Error) to
	// answer with.
	Fast(method string, id, params []byte) (run func(context.Context) (json.RawMessage, error), ok bool)
	// CancelFast ends the fast call whose request ID (as written) a
	// client's notifications/cancelled named.
	CancelFast(id []byte)
	// HTTPState is the protocol version the session negotiated ("" not
	// initialized yet), and when the go-sdk last handled one of its
	// requests.
	HTTPState() (protocol string, sdkSeen time.Time)
	// SawSDK notes that the go-sdk is handling one of its requests.
	SawSDK()
	// OnHangup sets what closes the session's connection under the
	// go-sdk, for a client that stops reading. Called before it starts.
	OnHangup(func())
	// ShimIdentity is what a shim's session is resumed with: the ID it
	// is kept under and the secret the resume must present ("", "" for a
	// session that is not kept). The shim is told both in its welcome.
	ShimIdentity() (id, secret string)
	// User names who opened the session, in team mode; "" otherwise.
	User() string
}

// Options configure Transports.
type Options struct {
	Logger  *slog.Logger
	Version string // in the shim's welcome and the go-sdk's server info
	// Protocols are the protocol versions sessions accept: those with a
	// session (up to 2025-11-25) and those without (2026-07-28 on), each
	// on the transports that can carry it (the go-sdk sorts that out).
	Protocols []string
	// NoFastPath sends every request through the go-sdk, tool calls
	// included: for comparing the two paths.
	NoFastPath bool
	// Team says who is calling while team mode is on (team.go); nil for
	// a daemon that is never in team mode.
	Team Authenticator
	// Shared keeps HTTP sessions in team.store, for replicas (shared.go);
	// nil keeps them in this process alone.
	Shared SharedSessions
}

// Transports serve one Hub's sessions.
type Transports struct {
	hub    Hub
	o      Options
	log    *slog.Logger
	events *EarlyEvents
	// socketHTTP takes the unix socket's HTTP connections (SocketHTTP).
	socketHTTP *socketListener
	// sharing: the sessions the go-sdk here has, with Options.Shared.
	sharing sharing
}

// New returns the transports of hub.
func New(hub Hub, o Options) *Transports {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Transports{hub: hub, o: o, log: log, socketHTTP: newSocketListener()}
	closed := hub.HTTPSessionClosed
	if o.Shared != nil {
		closed = func(id string) {
			t.sharing.closed(id)
			o.Shared.Closed(id)
			hub.HTTPSessionClosed(id)
		}
	}
	t.events = NewEarlyEvents(closed)
	return t
}

// Events is what HTTP sessions' clients are sent before they listen.
func (t *Transports) Events() *EarlyEvents { return t.events }
