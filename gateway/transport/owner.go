package transport

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/mcpgw/mcpgw/deploy"
)

// A daemon holds its owner's credentials (tokens in upstreams' environment,
// OAuth sessions), so only its owner may use /mcp and the control
// endpoints, with or without a bearer token: the token is a second lock,
// not another door. The unix socket has file permissions; for loopback TCP
// the owner of the connection's other end is looked up (on Linux, by
// sock_diag or /proc/net/tcp). A client whose owner cannot be found (not
// on loopback, as behind a container's published port, or on a system
// without the lookup, such as macOS) is let through to the token only when
// there is one, and refused otherwise. /healthz and /metrics stay open to
// local scrapers: they carry no secrets.

type peerKey struct{}

type peer struct {
	uid int
	err error
}

// ConnContext is for http.Server.ConnContext: it finds the owner of a TCP
// connection's other end once per connection, rather than per request.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if _, ok := c.(*socketConn); ok {
		// The socket's file lets only its owner connect.
		return context.WithValue(ctx, peerKey{}, peer{uid: os.Getuid()})
	}
	uid, err := deploy.PeerUID(c.LocalAddr(), c.RemoteAddr())
	return context.WithValue(ctx, peerKey{}, peer{uid, err})
}

// ownerOnly refuses requests from another user's connection, and, unless
// a token guards next (tokenSet), from a connection whose owner is unknown.
func ownerOnly(tokenSet bool, next http.Handler) http.Handler {
	me := os.Getuid()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := r.Context().Value(peerKey{}).(peer)
		if !ok {
			local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
			remote, err := net.ResolveTCPAddr("tcp", r.RemoteAddr)
			p = peer{uid: -1, err: err}
			switch {
			case err == nil && local != nil:
				p.uid, p.err = deploy.PeerUID(local, remote)
			case err == nil:
				p.err = deploy.ErrPeerUnknown // not served by a listener
			}
		}
		switch {
		case p.err == nil && p.uid == me:
		case p.err == nil:
			http.Error(w, fmt.Sprintf("forbidden: this mcpgw daemon belongs to uid %d, and the connection comes from uid %d; run your own daemon", me, p.uid), http.StatusForbidden)
			return
		case !tokenSet:
			http.Error(w, "forbidden: cannot tell which user is connecting, and the daemon has no token; give it one (--token-file FILE or $MCPGW_TOKEN) to use it from here", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
