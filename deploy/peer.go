package deploy

import (
	"errors"
	"net"
)

// ErrPeerUnknown is returned when the owner of a connection's other end
// cannot be found (not a loopback TCP connection, or not supported here).
var ErrPeerUnknown = errors.New("the owner of the connection's other end is unknown")

// PeerUID returns the user ID that owns the other end of a loopback TCP
// connection, given the connection's local and remote addresses as this
// process sees them. The unix socket has file permissions; a loopback TCP
// port has none, so any local account could otherwise use a daemon that
// holds the owner's credentials.
func PeerUID(local, remote net.Addr) (int, error) {
	l, ok1 := local.(*net.TCPAddr)
	r, ok2 := remote.(*net.TCPAddr)
	if !ok1 || !ok2 || !r.IP.IsLoopback() {
		return -1, ErrPeerUnknown
	}
	return peerUID(l, r)
}

// PeerUIDSupported reports whether PeerUID can answer on this system.
const PeerUIDSupported = peerUIDSupported
