package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/tailscale/hujson"
)

// loadConfigSchema reads the JSON Schema published for mcp.json.
func loadConfigSchema(t *testing.T) (*jsonschema.Resolved, map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "schema", "mcp.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("schema/mcp.schema.json: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("schema/mcp.schema.json: %v", err)
	}
	var raw map[string]any
	_ = json.Unmarshal(data, &raw)
	return rs, raw
}

// TestConfigSchemaNamesEveryField: the schema describes exactly the fields
// the parser reads, so that it cannot fall behind the parser.
func TestConfigSchemaNamesEveryField(t *testing.T) {
	_, raw := loadConfigSchema(t)
	props := func(obj any) []string {
		m, _ := obj.(map[string]any)["properties"].(map[string]any)
		var names []string
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		return names
	}
	defs := raw["$defs"].(map[string]any)
	for _, tc := range []struct {
		what   string
		schema any
		fields []string
	}{
		{"top level", raw, append(slices.Clone(topFields), "$schema")},
		{"a server", defs["server"], serverFields},
		{"settings", defs["settings"], settingsFields},
		{"oauth", defs["oauth"], oauthFields},
		{"team", defs["team"], teamFields},
	} {
		want := slices.Clone(tc.fields)
		sort.Strings(want)
		if got := props(tc.schema); !slices.Equal(got, want) {
			t.Errorf("schema properties of %s:\n  %s\nthe parser reads:\n  %s", tc.what, strings.Join(got, " "), strings.Join(want, " "))
		}
	}
}

// TestConfigSchemaValidates: the configurations the parser accepts pass
// the schema, and those with a wrong type or value fail it.
func TestConfigSchemaValidates(t *testing.T) {
	rs, _ := loadConfigSchema(t)
	check := func(name string) error {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.ContainsAny(string(data), "{[") {
			data = []byte("{}") // nothing but comments: an empty configuration
		}
		if data, err = hujson.Standardize(data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return rs.Validate(v)
	}
	valid, _ := filepath.Glob(filepath.Join("testdata", "valid-*.json"))
	if len(valid) < 5 {
		t.Fatalf("only %d valid configurations found", len(valid))
	}
	for _, path := range valid {
		if filepath.Base(path) == "valid-warnings.json" {
			continue // values the parser accepts with a warning ("directTools": "search") may fail it
		}
		if err := check(filepath.Base(path)); err != nil {
			t.Errorf("%s fails the schema: %v", filepath.Base(path), err)
		}
	}
	for _, name := range []string{
		"invalid-args-element.json", "invalid-args-string.json", "invalid-auth.json", "invalid-auth-true.json",
		"invalid-direct-tools.json", "invalid-enabled-string.json", "invalid-env-number.json",
		"invalid-headers-array.json", "invalid-idle-negative.json", "invalid-imports.json",
		"invalid-lifecycle.json", "invalid-server-string.json", "invalid-server-tool-prefix.json",
		"invalid-servers-array.json", "invalid-settings-mode.json", "invalid-settings-object.json",
		"invalid-settings-tool-prefix.json", "invalid-timeout-string.json", "invalid-top-level-array.json",
		"invalid-team-issuer-http.json", "invalid-team-no-audience.json",
	} {
		if err := check(name); err == nil {
			t.Errorf("%s passes the schema; the parser refuses it", name)
		}
	}
}
