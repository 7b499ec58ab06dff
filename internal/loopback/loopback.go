// Package loopback says whether a host names this machine: "localhost",
// an IPv6 loopback address, or an IPv4 one in any form the C library
// accepts (127.0.0.1, but also 127.1, 0x7f.1 or 2130706433, which
// net.ParseIP refuses).
package loopback

import (
	"net"
	"strconv"
	"strings"
)

// IsHost reports whether host (without a port; IPv6 may be bracketed)
// names a loopback address.
func IsHost(host string) bool {
	switch host {
	case "127.0.0.1", "localhost", "[::1]", "::1":
		return true // what clients send on every request, read without parsing
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ParseIP parses an IP address as net.ParseIP does, and besides the IPv4
// forms of inet_aton(3): one to four parts, each decimal, octal (leading 0)
// or hexadecimal (0x), the last filling the remaining bytes. It returns
// nil for anything else.
func ParseIP(host string) net.IP {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip := net.ParseIP(host); ip != nil {
		return ip
	}
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return nil
	}
	var ip [4]byte
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil || p == "" || p[0] == '+' || strings.Contains(p, "_") {
			return nil
		}
		last := i == len(parts)-1
		if !last {
			if n > 0xff {
				return nil
			}
			ip[i] = byte(n)
			continue
		}
		room := 4 - i // bytes the last part fills
		if room < 4 && n>>(8*room) != 0 {
			return nil
		}
		for j := 3; j >= i; j-- {
			ip[j] = byte(n)
			n >>= 8
		}
	}
	return net.IPv4(ip[0], ip[1], ip[2], ip[3])
}
