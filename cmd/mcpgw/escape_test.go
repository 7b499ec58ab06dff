package main

import (
	"encoding/json"
	"testing"
)

func TestEscapeText(t *testing.T) {
	for _, tc := range []struct{ in, one, many string }{
		{"claude-code", "claude-code", "claude-code"},
		{"café 東京 — ok", "café 東京 — ok", "café 東京 — ok"},
		{`back\slash "quoted"`, `back\slash "quoted"`, `back\slash "quoted"`},
		{"a\nb\tc", `a\nb\tc`, "a\nb\tc"},
		{"x\x1b[2Jy\r", `x\u001b[2Jy\r`, `x\u001b[2Jy\r`},
		{"bell\a del\x7f c1\u009b[31m", `bell\u0007 del\u007f c1\u009b[31m`, `bell\u0007 del\u007f c1\u009b[31m`},
		{"rtl\u202eevil\u2028next\u200b", `rtl\u202eevil\u2028next\u200b`, `rtl\u202eevil\u2028next\u200b`},
		{"bad\xffutf8", `bad\ufffdutf8`, `bad\ufffdutf8`},
		{"tag\U000E0041", `tag\udb40\udc41`, `tag\udb40\udc41`},
	} {
		if got := oneLine(tc.in); got != tc.one {
			t.Errorf("oneLine(%q) = %q, want %q", tc.in, got, tc.one)
		}
		if got := lines(tc.in); got != tc.many {
			t.Errorf("lines(%q) = %q, want %q", tc.in, got, tc.many)
		}
	}
	// An escaped JSON line is the same JSON.
	in := map[string]string{"client": "a\u009b\u202e\u2028b\x1b"}
	line, _ := json.Marshal(in)
	var out map[string]string
	if err := json.Unmarshal([]byte(oneLine(string(line))), &out); err != nil || out["client"] != in["client"] {
		t.Errorf("escaped JSON %s decodes to %q, %v", oneLine(string(line)), out, err)
	}
}
