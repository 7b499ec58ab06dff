package dispatch

import (
	"strings"
	"testing"
)

func TestArgsSummary(t *testing.T) {
	long := strings.Repeat("x", 300)
	got := argsSummary([]byte(`{"path":"/etc/hosts","apiToken":"hunter2","Password":"p","body":"` + long + `","n":3}`))
	want := "  Password: \"••••\"\n  apiToken: \"••••\"\n  body: \"" + strings.Repeat("x", 116) + "…\n  n: 3\n  path: \"/etc/hosts\""
	if got != want {
		t.Errorf("argsSummary:\n got %q\nwant %q", got, want)
	}
	if got := argsSummary(nil); got != "  (none)" {
		t.Errorf("no arguments: %q", got)
	}
	if got := argsSummary([]byte(`"{\"a\":1}"`)); got != "  a: 1" {
		t.Errorf("arguments as a JSON string: %q", got)
	}
}
