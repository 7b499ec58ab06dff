//go:build linux

package deploy

import (
	"net"
	"os"
	"testing"
)

func TestPeerUIDOfOwnConnection(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp6"} {
		addr := "127.0.0.1:0"
		if network == "tcp6" {
			addr = "[::1]:0"
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Logf("%s: %v", network, err)
			continue
		}
		defer ln.Close()
		go func() {
			c, err := net.Dial(network, ln.Addr().String())
			if err == nil {
				defer c.Close()
				var b [1]byte
				c.Read(b[:])
			}
		}()
		conn, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		uid, err := PeerUID(conn.LocalAddr(), conn.RemoteAddr())
		conn.Close()
		if err != nil || uid != os.Getuid() {
			t.Errorf("%s: PeerUID = %d, %v; want our uid %d", network, uid, err, os.Getuid())
		}
	}
	if _, err := PeerUID(&net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 1}, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 2}); err != ErrPeerUnknown {
		t.Errorf("a non-loopback peer: %v, want ErrPeerUnknown", err)
	}
}
