package registry

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Files mcpgw reads as configuration are bounded before they are parsed: a
// deeply nested file (which would overflow the parser's stack and kill the
// daemon), a FIFO or a device (which would block or never end) and a huge
// file are refused with an error naming the file and the limit.
func TestHostileConfigFiles(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "deep.json")
	if err := os.WriteFile(deep, []byte(strings.Repeat("[", 620000)), 0o600); err != nil {
		t.Fatal(err)
	}
	deepObj := filepath.Join(dir, "deep-obj.json")
	if err := os.WriteFile(deepObj, []byte(`{"mcpServers": `+strings.Repeat(`{"a": `, 300)+`1`+strings.Repeat("}", 301)), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxConfigBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	// Brackets inside strings and comments do not count.
	fine := filepath.Join(dir, "fine.json")
	if err := os.WriteFile(fine, []byte("// [[[[\n{\"mcpServers\": {\"a\": {\"command\": \"x\", \"args\": [\""+strings.Repeat("[", 1000)+"\"]}}}"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct{ path, want string }{
		{deep, "nested more than 256 levels deep"},
		{deepObj, "nested more than 256 levels deep"},
		{fifo, "not a regular file"},
		{"/dev/zero", "not a regular file"},
		{huge, "over the 64 MiB limit"},
	} {
		_, err := Load(tc.path, &LoadOptions{Home: dir})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("Load(%s) = %v, want an error naming the file and %q", filepath.Base(tc.path), err, tc.want)
		}
	}
	if _, err := Parse([]byte(strings.Repeat("{\"a\":", 100000)), "mem.json", nil); err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("Parse of deep bytes = %v", err)
	}
	cfg, err := Load(fine, &LoadOptions{Home: dir})
	if err != nil || cfg.Servers["a"] == nil || len(cfg.Servers["a"].Args[0]) != 1000 {
		t.Errorf("Load of a file with brackets in strings and comments: %v", err)
	}
}

// A hostile project file gives an error for that project, never a crash.
func TestHostileProjectFile(t *testing.T) {
	f := newProjectFixture(t)
	if err := os.WriteFile(filepath.Join(f.proj, ".mcp.json"), []byte(strings.Repeat("[", 620000)), 0o600); err != nil {
		t.Fatal(err)
	}
	base := f.load(t)
	_, err := base.WithProject(f.proj, base.Trust, f.opts)
	if err == nil || !strings.Contains(err.Error(), "nested more than 256 levels deep") {
		t.Errorf("WithProject with a deeply nested .mcp.json: %v", err)
	}
}

// A trust store that is a FIFO trusts nothing, says so, and does not hang
// the load (its bytes were read with os.ReadFile, which blocked).
func TestTrustStoreFIFO(t *testing.T) {
	dir := t.TempDir()
	trust := filepath.Join(dir, "trust.json")
	if err := syscall.Mkfifo(trust, 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfgPath, []byte(`{"mcpServers": {"a": {"command": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan *Config, 1)
	go func() {
		cfg, err := Load(cfgPath, &LoadOptions{Home: dir, TrustFile: trust})
		if err != nil {
			t.Error(err)
		}
		done <- cfg
	}()
	select {
	case cfg := <-done:
		if cfg == nil || cfg.Servers["a"] == nil || !strings.Contains(strings.Join(cfg.Warnings, "\n"), "no project is trusted") {
			t.Errorf("config with a FIFO trust store: %+v", cfg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Load blocked on a FIFO trust store")
	}
}
