package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/transport"
)

// The hub as its transports (gateway/transport) see it: Hub makes and
// tracks the sessions, the transports bring their bytes.

// SessionOptions describe a session as its client asked for it.
type SessionOptions = transport.SessionOptions

// HTTPOptions configure Handler.
type HTTPOptions = transport.HTTPOptions

// Headers and query parameters an HTTP client may use to describe its
// session (the stdio shim sends the same facts in its handshake line).
const (
	HeaderCwd          = transport.HeaderCwd
	HeaderMode         = transport.HeaderMode
	HeaderDirectTools  = transport.HeaderDirectTools
	HeaderClientPrefix = transport.HeaderClientPrefix
)

var (
	_ transport.Hub     = (*Hub)(nil)
	_ transport.Session = (*session)(nil)
)

// Handler returns the daemon's HTTP surface: MCP Streamable HTTP at /mcp,
// the control endpoints and the status page, /metrics and /healthz.
func (s *Hub) Handler(opts *HTTPOptions) http.Handler {
	return s.transports.Handler(opts, transport.Control{Status: s.serveStatus, Page: pageHub{s}, Logins: s.registerLogins})
}

// ServeSocket accepts shim connections on ln until ctx ends or ln is
// closed, serving each as its own MCP session. It returns after every
// connection it accepted has ended.
func (s *Hub) ServeSocket(ctx context.Context, ln net.Listener) error {
	return s.transports.ServeSocket(ctx, ln)
}

// SocketHTTP is the listener of the HTTP connections the unix socket
// receives (the CLI's): serve it with the daemon's HTTP server.
func (s *Hub) SocketHTTP() net.Listener { return s.transports.SocketHTTP() }

// ConnContext is for http.Server.ConnContext: it finds the owner of a TCP
// connection's other end once per connection, rather than per request.
func (s *Hub) ConnContext(ctx context.Context, c net.Conn) context.Context {
	return transport.ConnContext(ctx, c)
}

// ServeTransport serves one downstream session on t (a unix-socket
// connection from the stdio shim, or stdin/stdout) until it ends.
func (s *Hub) ServeTransport(ctx context.Context, t mcp.Transport, opts SessionOptions) error {
	return s.ServeSession(ctx, t, opts, nil)
}

// ServeSession implements transport.Hub.
func (s *Hub) ServeSession(ctx context.Context, t mcp.Transport, opts SessionOptions, ready func(transport.Session) error) error {
	opts, st := s.claimShim(opts)
	defer s.releaseShim(opts.ID)
	ss := s.newSession(opts, st, false)
	if ready != nil {
		if err := ready(ss); err != nil {
			ss.cancel()
			return err
		}
	}
	sess, err := ss.server.Connect(ctx, t, nil)
	if err != nil {
		ss.cancel()
		return fmt.Errorf("starting session: %w", err)
	}
	s.register(ss, sess)
	stop := context.AfterFunc(ctx, ss.close)
	defer stop()
	err = sess.Wait()
	s.unregister(ss)
	if ctx.Err() == nil && s.ctx.Err() == nil {
		// The client ended the session (not a daemon shutdown, after which
		// the shim resumes it): its state is no longer needed.
		s.dropSessionState(opts.ID)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		err = nil
	}
	return err
}

// OpenHTTPSession implements transport.Hub.
func (s *Hub) OpenHTTPSession(opts SessionOptions) *mcp.Server {
	opts.ID, opts.Resume, opts.Secret = "", false, "" // HTTP sessions are not kept
	ss := s.newSession(opts, nil, false)
	// The timer holds the session weakly: one its client closed before
	// initializing it is garbage at once, not after initTimeout.
	wp := weak.Make(ss)
	t := time.AfterFunc(initTimeout, func() {
		if ss := wp.Value(); ss != nil {
			ss.expireUninitialized()
		}
	})
	ss.conn.mu.Lock()
	ss.conn.initTimer = t
	ss.conn.mu.Unlock()
	return ss.server
}

// initTimeout is how long an HTTP session may stay uninitialized: a client
// sends notifications/initialized right after initialize, and one that
// does not has gone (or never meant to come), and its session would
// otherwise hold memory until the idle timeout.
var initTimeout = 30 * time.Second

// HTTPSession implements transport.Hub.
func (s *Hub) HTTPSession(id string) (transport.Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.byHTTPID[id]
	return ss, ok
}

// HTTPSessionClosed implements transport.Hub: the session leaves the
// daemon. (A session that ended before its client initialized it never
// joined.)
func (s *Hub) HTTPSessionClosed(id string) {
	s.mu.Lock()
	ss, ok := s.byHTTPID[id]
	s.mu.Unlock()
	if ok {
		s.unregister(ss)
	}
}

// CancelHTTPSession implements transport.Hub: it ends the requests of the
// session whose Streamable HTTP session ID is id.
func (s *Hub) CancelHTTPSession(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ss := range s.sessions {
		sess := ss.conn.session()
		match := sess != nil && sess.ID() == id
		if match {
			ss.cancel()
		}
	}
}

// ShimIdentity implements transport.Session.
func (ss *session) ShimIdentity() (id, secret string) {
	if ss.secret == "" {
		return "", ""
	}
	return ss.opts.ID, ss.secret
}

// Context implements transport.Session.
func (ss *session) Context() context.Context { return ss.ctx }

// HTTPState implements transport.Session.
func (ss *session) HTTPState() (protocol string, sdkSeen time.Time) {
	ss.conn.mu.Lock()
	defer ss.conn.mu.Unlock()
	return ss.conn.protocol, ss.conn.sdkSeen
}

// SawSDK implements transport.Session.
func (ss *session) SawSDK() {
	ss.conn.mu.Lock()
	ss.conn.sdkSeen = time.Now()
	ss.conn.mu.Unlock()
}

// OnHangup implements transport.Session.
func (ss *session) OnHangup(f func()) { ss.hangup = f }

// listenWait is how long a request for the client (sampling, elicitation,
// roots) waits for the client to open its stream.
var listenWait = 10 * time.Second

// awaitListener waits, up to listenWait, for the client of an HTTP
// session to open the stream a request for it (what) travels on.
func (ss *session) awaitListener(ctx context.Context, sess *mcp.ServerSession, what string) error {
	id := sess.ID()
	if id == "" {
		return nil // not an HTTP session: requests travel with the rest
	}
	ch := ss.gw.transports.Events().Listening(id)
	select {
	case <-ch:
		return nil
	default:
	}
	t := time.NewTimer(listenWait)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("mcpgw: the client has not opened its event stream (a GET on the MCP endpoint) in %s, so it cannot be sent a %s request", listenWait, what)
	}
}
