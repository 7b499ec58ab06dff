package deploy

import (
	"bytes"
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
