package registry

import (
	"reflect"
	"testing"
)

func TestInterpolate(t *testing.T) {
	env := map[string]string{
		"A":     "alpha",
		"B_2":   "beta",
		"CHAIN": "{env:A}",
		"DOLL":  "${A}",
		"EMPTY": "",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want string
		missing  []string
	}{
		{"plain", "plain", nil},
		{"${A}", "alpha", nil},
		{"$env:A", "alpha", nil},
		{"{env:A}", "alpha", nil},
		{"x${A}y$env:B_2-z{env:A}", "xalphaybeta-zalpha", nil},
		{"$env:B_2.suffix", "beta.suffix", nil}, // names are \w+
		{"$env:A_B", "", []string{"A_B"}},       // greedy: A_B, not A
		{"${UNSET}|$env:UNSET|{env:OTHER}", "||", []string{"UNSET", "OTHER"}},
		{"${A-B} ${} $env: {env:} $A", "${A-B} ${} $env: {env:} $A", nil},
		{"$${A}", "$alpha", nil},
		// The three passes run in turn, so a substituted value is scanned by
		// the later passes (pi-mcp-adapter's behaviour), not the earlier ones.
		{"${CHAIN}", "alpha", nil},
		{"$env:DOLL", "${A}", nil},
	}
	for _, tt := range tests {
		var missing []string
		got := interpolate(tt.in, lookup, &missing)
		if got != tt.want || !reflect.DeepEqual(missing, tt.missing) {
			t.Errorf("interpolate(%q) = %q, missing %q; want %q, missing %q", tt.in, got, missing, tt.want, tt.missing)
		}
	}
}

func TestInterpolateSecret(t *testing.T) {
	lookup := func(k string) (string, bool) { return map[string]string{"T": "tok"}[k], k == "T" }
	tests := []struct {
		in, want string
		missing  []string
	}{
		{"Bearer ${T}", "Bearer tok", nil},
		// A command: left for the upstream to run, not interpolated.
		{"!op read op://vault/${U}", "!op read op://vault/${U}", nil},
		// An escaped "!": interpolated, the escape kept for the upstream.
		{"!!literal-${T}-${U}", "!!literal-tok-", []string{"U"}},
		{"!!!x", "!!!x", nil},
		{"", "", nil},
	}
	for _, tt := range tests {
		var missing []string
		if got := interpolateSecret(tt.in, lookup, &missing); got != tt.want || !reflect.DeepEqual(missing, tt.missing) {
			t.Errorf("interpolateSecret(%q) = %q, missing %q; want %q, missing %q", tt.in, got, missing, tt.want, tt.missing)
		}
	}
}

func TestExpandHome(t *testing.T) {
	tests := []struct{ in, want string }{
		{"~", "/home/u"},
		{"~/", "/home/u"},
		{"~/src/x", "/home/u/src/x"},
		{`~\src`, "/home/u/src"},
		{"~other/src", "~other/src"},
		{"/abs/~/x", "/abs/~/x"},
		{"rel", "rel"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := expandHome(tt.in, "/home/u"); got != tt.want {
			t.Errorf("expandHome(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
