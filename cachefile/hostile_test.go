package cachefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cache file written by someone else may be anything: deeply nested,
// or not JSON at all. Reading it is a miss, never a crash.
func TestHostileCacheIsAMiss(t *testing.T) {
	for name, data := range map[string]string{
		"deep array":  strings.Repeat("[", 620000),
		"deep object": `{"version":1,"servers":{"a":` + strings.Repeat(`{"x":`, 200000),
		"deep tools":  `{"version":1,"servers":{"a":{"configHash":"h","tools":[{"name":"t","inputSchema":` + strings.Repeat(`{"a":`, 200000) + `}]}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mcp-cache.json")
			if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			f := Open(path, nil)
			if e, ok := f.Lookup("a", "h"); ok {
				t.Errorf("Lookup in a hostile file found %+v", e)
			}
		})
	}
}
