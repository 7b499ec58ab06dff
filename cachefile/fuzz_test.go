package cachefile

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead: whatever another program left in the cache file, reading it
// never panics; a file that is not a cache is an empty one.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		`{"version":1,"servers":{"a":{"configHash":"h","cachedAt":1,"tools":[{"name":"t","inputSchema":{"type":"object"}}],"resources":[]}}}`,
		`{"version":1,"servers":{"a":{"tools":[{"name":1}]},"b":null,"c":[]}}`,
		`{"version":2}`, `[]`, `{"version":1,"servers":{"a":{"tools":[{"name":"x","inputSchema":{"x-mcp-header":{}}}]}}}`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "cache.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c := Open(path, nil)
		entries, err := c.Read()
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		for name, e := range entries {
			if e == nil {
				t.Fatalf("nil entry %q", name)
			}
			c.Lookup(name, e.ConfigHash)
		}
	})
}
