package deploy

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

const peerUIDSupported = true

// peerUID asks the kernel for the peer's socket by its addresses
// (sock_diag: one lookup, whatever the number of sockets), and falls back
// to reading /proc/net/tcp and tcp6 where netlink is not available.
func peerUID(local, remote *net.TCPAddr) (int, error) {
	if uid, err := diagUID(remote, local); err == nil {
		return uid, nil
	}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if uid, ok := scanTCPTable(file, remote, local); ok {
			return uid, nil
		}
	}
	return -1, ErrPeerUnknown
}

// Netlink sock_diag (linux/inet_diag.h): a SOCK_DIAG_BY_FAMILY request
// with the exact addresses of one socket, answered with its inet_diag_msg.
const (
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	diagReqLen       = syscall.NLMSG_HDRLEN + 56
	diagMsgUID       = 64 // offset of idiag_uid in inet_diag_msg
	diagNoCookie     = 0xFFFFFFFF
)

// diagUID returns the owner of the TCP socket whose local address is
// sockLocal and remote address sockRemote.
func diagUID(sockLocal, sockRemote *net.TCPAddr) (int, error) {
	family := uint8(syscall.AF_INET)
	src, dst := sockLocal.IP.To4(), sockRemote.IP.To4()
	if src == nil || dst == nil {
		family = syscall.AF_INET6
		src, dst = sockLocal.IP.To16(), sockRemote.IP.To16()
	}
	if src == nil || dst == nil {
		return -1, ErrPeerUnknown
	}
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, syscall.NETLINK_INET_DIAG)
	if err != nil {
		return -1, err
	}
	defer syscall.Close(fd)
	tv := syscall.Timeval{Sec: 1}
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return -1, err
	}

	var req [diagReqLen]byte
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], diagReqLen)       // nlmsg_len
	ne.PutUint16(req[4:], sockDiagByFamily) // nlmsg_type
	ne.PutUint16(req[6:], syscall.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // nlmsg_seq
	b := req[syscall.NLMSG_HDRLEN:]
	b[0], b[1] = family, syscall.IPPROTO_TCP // sdiag_family, sdiag_protocol
	ne.PutUint32(b[4:], 0xFFFFFFFF)          // idiag_states: any
	id := b[8:]                              // inet_diag_sockid
	binary.BigEndian.PutUint16(id[0:], uint16(sockLocal.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(sockRemote.Port))
	copy(id[4:20], src)
	copy(id[20:36], dst)
	ne.PutUint32(id[40:], diagNoCookie)
	ne.PutUint32(id[44:], diagNoCookie)
	if err := syscall.Sendto(fd, req[:], 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return -1, err
	}

	var resp [512]byte
	n, _, err := syscall.Recvfrom(fd, resp[:], 0)
	if err != nil {
		return -1, err
	}
	msgs, err := syscall.ParseNetlinkMessage(resp[:n])
	if err != nil {
		return -1, err
	}
	for _, m := range msgs {
		switch m.Header.Type {
		case syscall.NLMSG_ERROR:
			if len(m.Data) >= 4 {
				if errno := -int32(ne.Uint32(m.Data)); errno != 0 {
					return -1, syscall.Errno(errno)
				}
			}
			return -1, ErrPeerUnknown
		case sockDiagByFamily:
			if len(m.Data) < diagMsgUID+4 {
				return -1, ErrPeerUnknown
			}
			return int(ne.Uint32(m.Data[diagMsgUID:])), nil
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
