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
// OAuth sessions), so without a bearer token only its owner may use /mcp
// and the control endpoints. The unix socket has file permissions; for
// loopback TCP the owner of the connection's other end is looked up (on
// Linux, in /proc/net/tcp). /healthz and /metrics stay open to local
// scrapers: they carry no secrets.

type peerKey struct{}

type peer struct {
	uid int
	err error
}

// ConnContext is for http.Server.ConnContext: it finds the owner of a TCP
// connection's other end once per connection, rather than per request.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	uid, err := deploy.PeerUID(c.LocalAddr(), c.RemoteAddr())
	return context.WithValue(ctx, peerKey{}, peer{uid, err})
}

// ownerOnly refuses requests from another user's connection.
func ownerOnly(next http.Handler) http.Handler {
	me := os.Getuid()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := r.Context().Value(peerKey{}).(peer)
		if !ok {
			local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
			remote, err := net.ResolveTCPAddr("tcp", r.RemoteAddr)
			p = peer{uid: -1, err: err}
			if err == nil && local != nil {
				p.uid, p.err = deploy.PeerUID(local, remote)
			}
		}
		switch {
		case p.err == nil && p.uid == me:
		case p.err == nil:
			http.Error(w, fmt.Sprintf("forbidden: this mcpgw daemon belongs to uid %d, and the connection comes from uid %d; run your own daemon, or give this one a token (--token)", me, p.uid), http.StatusForbidden)
			return
		case deploy.PeerUIDSupported:
			http.Error(w, "forbidden: cannot tell which user is connecting, and no token is set; give the daemon a token (--token) to use it from here", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
