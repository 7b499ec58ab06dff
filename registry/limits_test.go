package registry

import (
	"strings"
	"testing"
)

// The limits in settings: read, defaulted, and refused when not a whole
// non-negative number, with the field named.
func TestSettingsLimits(t *testing.T) {
	cfg, err := Parse([]byte(`{"settings": {"scriptsPerSession": 3, "scriptsPerDaemon": 0, "scriptArgsBytes": 1048576,
		"scriptResultsBytes": 2048, "approvalsPerSession": 1, "approvalsPerDaemon": 5}}`), "mcp.json", &LoadOptions{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.Settings.Limits.Resolved()
	want := Limits{ScriptsPerSession: 3, ScriptsPerDaemon: DefaultScriptsPerDaemon, ScriptArgsBytes: 1 << 20,
		ScriptResultsBytes: 2048, ApprovalsPerSession: 1, ApprovalsPerDaemon: 5}
	if got != want {
		t.Errorf("limits %+v, want %+v", got, want)
	}
	if d := (Limits{}).Resolved(); d.ScriptsPerSession != 2 || d.ScriptsPerDaemon != 8 || d.ScriptArgsBytes != 16<<20 ||
		d.ScriptResultsBytes != 16<<20 || d.ApprovalsPerSession != 8 || d.ApprovalsPerDaemon != 64 {
		t.Errorf("defaults %+v", d)
	}
	for in, want := range map[string]string{
		`{"scriptsPerSession": -1}`:      "settings.scriptsPerSession: must not be negative",
		`{"scriptArgsBytes": 1.5}`:       "settings.scriptArgsBytes: must be a whole number",
		`{"approvalsPerSession": "two"}`: "settings.approvalsPerSession: must be a number",
		`{"approvalsPerDaemon": 1e12}`:   "settings.approvalsPerDaemon: must be a whole number up to 2147483647",
	} {
		_, err := Parse([]byte(`{"settings": `+in+`}`), "mcp.json", &LoadOptions{Home: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}
