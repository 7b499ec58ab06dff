package cachefile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// A FIFO, a device or a symlink loop in the cache's place is a miss too:
// a lookup returns at once instead of blocking on the FIFO or reading
// /dev/zero forever, and a write replaces it with a real cache file.
func TestCacheFileNotRegularIsAMiss(t *testing.T) {
	for name, create := range map[string]func(path string) error{
		"fifo":         func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"/dev/zero":    func(p string) error { return os.Symlink("/dev/zero", p) },
		"symlink loop": func(p string) error { return os.Symlink(p, p) },
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mcp-cache.json")
			if err := create(path); err != nil {
				t.Fatal(err)
			}
			f := Open(path, nil)
			done := make(chan bool)
			go func() {
				_, ok := f.Lookup("a", "h")
				done <- ok
			}()
			select {
			case ok := <-done:
				if ok {
					t.Fatal("Lookup found an entry")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Lookup blocked for 10 s")
			}
		})
	}
}
