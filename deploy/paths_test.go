package deploy

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestRuntimeDir(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/4242")
	if got := RuntimeDir(); got != "/run/user/4242/mcpgw" {
		t.Errorf("with XDG_RUNTIME_DIR: %q", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	runUser = t.TempDir() // no directory of ours in it
	t.Cleanup(func() { runUser = "/run/user" })
	other := t.TempDir()
	t.Setenv("TMPDIR", "/tmp/x")
	if got, want := RuntimeDir(), "/tmp/x/mcpgw-"+strconv.Itoa(os.Getuid()); got != want {
		t.Errorf("without XDG_RUNTIME_DIR nor /run/user/UID: %q, want %q", got, want)
	}
	mine := filepath.Join(runUser, strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(mine, 0o700); err != nil {
		t.Fatal(err)
	}
	if got := RuntimeDir(); got != filepath.Join(mine, "mcpgw") {
		t.Errorf("with /run/user/UID ours: %q", got)
	}
	if ownedDir(other, os.Getuid()+1) {
		t.Error("a directory of another uid counted as ours")
	}
}

// A client whose environment lacks XDG_RUNTIME_DIR and has another TMPDIR
// than the daemon (a trimmed environment) finds the daemon's socket through
// the advertisement under the home directory.
func TestTrimmedEnvironmentFindsTheDaemon(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	runUser = t.TempDir()
	t.Cleanup(func() { runUser = "/run/user" })

	// The daemon, as systemd runs it.
	daemonRun := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", daemonRun)
	sock := DefaultSocket()
	ln, release, err := ListenSocket(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, _, err := ListenSocket(sock); err == nil {
		t.Fatal("a second daemon took the same socket")
	}

	// The client: no XDG_RUNTIME_DIR, another TMPDIR.
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", t.TempDir())
	if got := DefaultSocket(); got != sock {
		t.Fatalf("trimmed client's socket = %q, want the daemon's %q", got, sock)
	}
	conn, err := net.Dial("unix", DefaultSocket())
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	_ = ln

	// Once the daemon is gone, the advertisement goes with it.
	release()
	if got := Advertised(); got != "" {
		t.Errorf("advertised after release: %q", got)
	}
}

// TestServicePATH reads back the PATH that install writes, quoting and all.
func TestServicePATH(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		u := defaultServiceUnit(goos)
		u.Path = `/opt/a b/bin:/home/u/100%/bin:/x"y&z/bin`
		data, err := renderService(goos, u)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := servicePATH(goos, data)
		if !ok || got != u.Path {
			t.Errorf("%s: servicePATH = %q, %v; want %q", goos, got, ok, u.Path)
		}
	}
	if _, ok := servicePATH("linux", []byte("[Service]\nExecStart=/bin/true\n")); ok {
		t.Error("a unit without PATH gave one")
	}
}
