package deploy

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"
)

// TestLogDurations: durations read as durations in every log format, not
// as nanoseconds.
func TestLogDurations(t *testing.T) {
	for _, format := range []string{"json", "text", "auto"} {
		var buf bytes.Buffer
		log, err := NewLogger(&buf, "info", format)
		if err != nil {
			t.Fatal(err)
		}
		log.Info("call", "duration", 1234567*time.Nanosecond, "took", 2*time.Second+345*time.Millisecond+6*time.Microsecond)
		out := buf.String()
		for _, want := range []string{"1.23ms", "2.345s"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %q lacks %s", format, out, want)
			}
		}
		if strings.Contains(out, "1234567") {
			t.Errorf("%s: nanoseconds in %q", format, out)
		}
	}
}

// Loopback addresses in any form the C library takes are accepted and
// spelled out for net.Listen (127.1 used to be refused as non-loopback);
// other addresses need --allow-remote.
func TestListenAddr(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		remote   bool
		err      string
	}{
		{in: "127.0.0.1:7332", want: "127.0.0.1:7332"},
		{in: "127.1:7332", want: "127.0.0.1:7332"},
		{in: "[::1]:7332", want: "[::1]:7332"},
		{in: "localhost:7332", want: "localhost:7332"},
		{in: "10.0.0.1:7332", err: "not a loopback address"},
		{in: "0.0.0.0:7332", err: "not a loopback address"},
		{in: "0.0.0.0:7332", remote: true, want: "0.0.0.0:7332"},
		{in: "7332", err: "missing port"},
	} {
		got, err := ListenAddr(tc.in, tc.remote)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ListenAddr(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if ln, err := net.Listen("tcp", net.JoinHostPort(strings.Split(got, ":")[0], "0")); err == nil {
			ln.Close()
		} else if !strings.HasPrefix(got, "[") {
			t.Errorf("net.Listen cannot use %q: %v", got, err)
		}
	}
}
