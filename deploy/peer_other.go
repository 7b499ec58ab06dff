//go:build !linux

package deploy

import "net"

const peerUIDSupported = false

// peerUID is not implemented here: the caller decides (mcpgw then relies
// on the bearer token).
func peerUID(local, remote *net.TCPAddr) (int, error) { return -1, ErrPeerUnknown }
