package oauth

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
)

// HTTPClient returns the client OAuth requests use (metadata, registration,
// tokens, and the login's first request to the server): public addresses
// and loopback (development servers, test suites) are reachable; other
// private and link-local addresses (10.x, 192.168.x, 169.254.x, fc00::/7)
// only when allowPrivate, a per-server choice, since an authorization
// server's metadata names URLs that mcpgw then fetches. The check is made
// on the address actually dialled, after DNS.
func HTTPClient(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 30 * time.Second}
	if !allowPrivate {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip := net.ParseIP(host)
			if ip != nil && !ip.IsLoopback() && (ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified()) {
				return fmt.Errorf("%s is a private address; OAuth endpoints there need \"allowPrivateNetwork\": true in the server's oauth block", ip)
			}
			return nil
		}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: t, Timeout: 60 * time.Second}
}
