package registry

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTrustStore(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	proj := filepath.Join(root, "src", "proj")
	other := filepath.Join(root, "src", "other")
	for _, d := range []string{filepath.Join(proj, "sub"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	linkIn := filepath.Join(root, "link-in")   // -> proj/sub
	linkOut := filepath.Join(proj, "link-out") // -> other
	if err := os.Symlink(filepath.Join(proj, "sub"), linkIn); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, linkOut); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "state", "mcpgw", "trust.json")

	ts, err := LoadTrust(path)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Trusted(proj) || len(ts.Dirs()) != 0 {
		t.Fatalf("a missing store trusts %v", ts.Dirs())
	}
	if added, err := ts.Add(proj); !added || err != nil {
		t.Fatalf("Add(proj) = %v, %v", added, err)
	}
	if added, err := ts.Add(filepath.Join(proj, "sub")); added || err != nil {
		t.Errorf("Add(proj/sub) = %v, %v; want false: already covered", added, err)
	}
	if _, err := ts.Add(filepath.Join(root, "nope")); err == nil {
		t.Error("Add of a missing directory: no error")
	}
	if err := ts.Save(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved store: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if want := "{\n  \"version\": 1,\n  \"trusted\": [\n    \"" + proj + "\"\n  ]\n}\n"; string(data) != want {
		t.Errorf("file:\n%s\nwant:\n%s", data, want)
	}

	ts, err = LoadTrust(path)
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{
		proj:                             true,
		filepath.Join(proj, "sub"):       true,
		filepath.Join(proj, "sub", "x"):  true, // need not exist
		proj + "-evil":                   false,
		filepath.Join(proj, ".."):        false,
		filepath.Join(proj, "..", "..."): false,
		other:                            false,
		linkIn:                           true,  // a link into proj
		linkOut:                          false, // a link out of proj
		filepath.Join(linkOut, "x"):      false,
		"":                               false,
	} {
		if got := ts.Trusted(dir); got != want {
			t.Errorf("Trusted(%q) = %v, want %v", dir, got, want)
		}
	}
	var nilStore *TrustStore
	if nilStore.Trusted(proj) {
		t.Error("a nil store trusts")
	}

	if ts.Remove(filepath.Join(proj, "sub")) {
		t.Error("Remove(proj/sub) = true; it was never added")
	}
	if by := ts.TrustedBy(filepath.Join(proj, "sub")); by != proj {
		t.Errorf("TrustedBy(proj/sub) = %q, want %q", by, proj)
	}
	if !ts.Remove(proj) || ts.Trusted(proj) {
		t.Error("Remove(proj) did not untrust it")
	}
	if err := ts.Save(); err != nil {
		t.Fatal(err)
	}
	if ts, err = LoadTrust(path); err != nil || len(ts.Dirs()) != 0 {
		t.Errorf("after untrust: %v, %v", ts.Dirs(), err)
	}
}

func TestTrustStoreRefused(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, data string
		mode       os.FileMode
		want       string // FILE stands for the path
	}{
		{"group writable", `{"version": 1, "trusted": []}`, 0o620, "trust store FILE has mode -rw--w----, writable by others; refusing it (chmod 600 FILE)"},
		{"world writable", `{"version": 1, "trusted": []}`, 0o602, "trust store FILE has mode -rw-----w-, writable by others; refusing it (chmod 600 FILE)"},
		{"syntax", `{"version": 1, "trusted": [}`, 0o600, "FILE: invalid character '}' looking for beginning of value"},
		{"version", `{"version": 2, "trusted": []}`, 0o600, "FILE: version 2 is not supported (want 1)"},
		{"relative", `{"version": 1, "trusted": ["src"]}`, 0o600, `FILE: trusted[0]: "src" is not an absolute path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".json")
			if err := os.WriteFile(path, []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			_, err := LoadTrust(path)
			want := strings.ReplaceAll(tt.want, "FILE", path)
			if err == nil || err.Error() != want {
				t.Errorf("LoadTrust: %v\nwant: %s", err, want)
			}
		})
	}
}

// TestTrustInConfig: the trust store named in LoadOptions is part of the
// Config: in Files, in Hash, and an unusable store fails the load.
func TestTrustInConfig(t *testing.T) {
	dir := t.TempDir()
	config := writeFile(t, dir, "mcp.json", `{}`)
	trustPath := filepath.Join(dir, "state", "trust.json")
	opts := &LoadOptions{Home: dir, Getenv: func(string) string { return "" }, TrustFile: trustPath}
	c0, err := Load(config, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c0.Files, []string{config, trustPath}) || c0.Trust == nil || c0.Trust.Path() != trustPath {
		t.Fatalf("Files %q, Trust %v", c0.Files, c0.Trust)
	}
	ts := c0.Trust
	if _, err := ts.Add(dir); err != nil {
		t.Fatal(err)
	}
	if err := ts.Save(); err != nil {
		t.Fatal(err)
	}
	c1, err := Load(config, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c1.Hash == c0.Hash || !c1.Trust.Trusted(dir) {
		t.Errorf("after trust: hash changed %v, trusted %v", c1.Hash != c0.Hash, c1.Trust.Trusted(dir))
	}
	// A store someone else could have written trusts nothing, with a
	// warning; the config still loads.
	if err := os.Chmod(trustPath, 0o666); err != nil {
		t.Fatal(err)
	}
	c2, err := Load(config, opts)
	if err != nil {
		t.Fatalf("Load with a world-writable trust store: %v", err)
	}
	want := "trust store " + trustPath + " has mode -rw-rw-rw-, writable by others; refusing it (chmod 600 " + trustPath + "); no project is trusted"
	if c2.Trust.Trusted(dir) || !slices.Equal(c2.Warnings, []string{want}) || c2.Hash == c1.Hash {
		t.Errorf("world-writable store: trusted %v, warnings %q, hash changed %v", c2.Trust.Trusted(dir), c2.Warnings, c2.Hash != c1.Hash)
	}
}
