package deploy

import (
	"bufio"
	"encoding/hex"
	"net"
	"os"
	"strconv"
	"strings"
)

const peerUIDSupported = true

// peerUID finds the peer's socket in /proc/net/tcp and tcp6: its local
// address is our remote one and its remote address our local one; the
// line's uid column is its owner.
func peerUID(local, remote *net.TCPAddr) (int, error) {
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if uid, ok := scanTCPTable(file, remote, local); ok {
			return uid, nil
		}
	}
	return -1, ErrPeerUnknown
}

func scanTCPTable(file string, sockLocal, sockRemote *net.TCPAddr) (int, bool) {
	f, err := os.Open(file)
	if err != nil {
		return -1, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		if !addrMatches(fields[1], sockLocal) || !addrMatches(fields[2], sockRemote) {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		if err != nil {
			return -1, false
		}
		return uid, true
	}
	return -1, false
}

// addrMatches compares a /proc/net/tcp address ("0100007F:1F90": the IP
// as 32-bit words in host byte order, the port big-endian) with a.
func addrMatches(field string, a *net.TCPAddr) bool {
	ipHex, portHex, ok := strings.Cut(field, ":")
	if !ok {
		return false
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil || int(port) != a.Port {
		return false
	}
	raw, err := hex.DecodeString(ipHex)
	if err != nil || len(raw)%4 != 0 {
		return false
	}
	for i := 0; i < len(raw); i += 4 { // each word is little-endian
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	return net.IP(raw).Equal(a.IP)
}
