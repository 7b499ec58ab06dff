package loopback

import "testing"

func TestParseIP(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1":  "127.0.0.1",
		"127.1":      "127.0.0.1",
		"127.0.1":    "127.0.0.1",
		"2130706433": "127.0.0.1",
		"0x7f.1":     "127.0.0.1",
		"0177.0.0.1": "127.0.0.1",
		"10.1.2":     "10.1.0.2",
		"::1":        "::1",
		"[::1]":      "::1",
		"127.256":    "127.0.1.0",
		"1.2.3.4.5":  "",
		"256.1":      "",
		"1.2.3.256":  "",
		"127.":       "",
		"":           "",
		"x":          "",
		"+1.2.3.4":   "",
		"1_0.0.0.1":  "",
		"4294967296": "",
		"localhost":  "",
	} {
		ip := ParseIP(in)
		got := ""
		if ip != nil {
			got = ip.String()
		}
		if got != want {
			t.Errorf("ParseIP(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.1": true, "127.0.0.1": true, "::1": true, "[::1]": true,
		"127.255.255.254": true, "128.0.0.1": false, "10.0.0.1": false, "example.com": false, "": false,
		"localhost.evil.com": false,
	} {
		if got := IsHost(host); got != want {
			t.Errorf("IsHost(%q) = %v, want %v", host, got, want)
		}
	}
}
