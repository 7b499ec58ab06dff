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

// loopbackPair returns both ends of a loopback TCP connection of network.
func loopbackPair(t testing.TB, network, addr string) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("%s: %v", network, err)
	}
	defer ln.Close()
	dialed := make(chan net.Conn, 1)
	go func() {
		c, err := net.Dial(network, ln.Addr().String())
		if err != nil {
			c = nil
		}
		dialed <- c
	}()
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	client = <-dialed
	if client == nil {
		t.Fatal("dial failed")
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// The kernel's answer (sock_diag) is the one /proc/net/tcp gives, for
// IPv4 and IPv6, and a socket that does not exist has no owner.
func TestDiagUIDAgreesWithTheTCPTable(t *testing.T) {
	for _, tc := range []struct{ network, addr, table string }{
		{"tcp4", "127.0.0.1:0", "/proc/net/tcp"},
		{"tcp6", "[::1]:0", "/proc/net/tcp6"},
	} {
		t.Run(tc.network, func(t *testing.T) {
			server, _ := loopbackPair(t, tc.network, tc.addr)
			local, remote := server.LocalAddr().(*net.TCPAddr), server.RemoteAddr().(*net.TCPAddr)
			got, err := diagUID(remote, local)
			if err != nil {
				t.Fatalf("diagUID: %v", err)
			}
			want, ok := scanTCPTable(tc.table, remote, local)
			if !ok || got != want || got != os.Getuid() {
				t.Errorf("diagUID = %d; %s says %d (found %v); our uid %d", got, tc.table, want, ok, os.Getuid())
			}
			// The same ports the other way round name no socket.
			gone := &net.TCPAddr{IP: remote.IP, Port: remote.Port}
			if uid, err := diagUID(&net.TCPAddr{IP: local.IP, Port: 1}, gone); err == nil {
				t.Errorf("a socket that does not exist: uid %d, no error", uid)
			}
		})
	}
}

// BenchmarkPeerUID finds the owner of one connection among 2,000 others:
// by sock_diag, and by reading the socket table.
func BenchmarkPeerUID(b *testing.B) {
	var server net.Conn
	for range 1000 {
		server, _ = loopbackPair(b, "tcp4", "127.0.0.1:0")
	}
	local, remote := server.LocalAddr().(*net.TCPAddr), server.RemoteAddr().(*net.TCPAddr)
	b.Run("sock_diag", func(b *testing.B) {
		for b.Loop() {
			if _, err := diagUID(remote, local); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proc", func(b *testing.B) {
		for b.Loop() {
			if _, ok := scanTCPTable("/proc/net/tcp", remote, local); !ok {
				b.Fatal("not found")
			}
		}
	})
}
