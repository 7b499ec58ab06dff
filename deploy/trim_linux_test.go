package deploy

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cachedPages counts the pages of the file at path the page cache holds,
// without reading them.
func cachedPages(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	c := 0
	for _, v := range vec {
		c += int(v & 1)
	}
	return c
}

// presentPages counts the pages of m this process has mapped.
func presentPages(t *testing.T, m []byte) int {
	t.Helper()
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	page := os.Getpagesize()
	buf := make([]byte, len(m)/page*8)
	if _, err := pm.ReadAt(buf, int64(uintptr(unsafe.Pointer(&m[0]))/uintptr(page)*8)); err != nil {
		t.Fatal(err)
	}
	c := 0
	for i := 0; i < len(buf); i += 8 {
		c += int(binary.LittleEndian.Uint64(buf[i:]) >> 63)
	}
	return c
}

// vmFlags is the VmFlags line of this process's mapping that starts at m.
func vmFlags(t *testing.T, m []byte) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := strconv.FormatUint(uint64(uintptr(unsafe.Pointer(&m[0]))), 16)
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		// A mapping's first line: start-end perms offset dev inode [path];
		// the others: Key: value.
		if fields := strings.Fields(line); len(fields) >= 5 && !strings.HasSuffix(fields[0], ":") {
			lo, _, _ := strings.Cut(fields[0], "-")
			in = strings.TrimLeft(lo, "0") == start
			continue
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return flags
		}
	}
	t.Fatalf("no mapping at %s in /proc/self/smaps", start)
	return ""
}

// randomFile writes pages pages of random bytes to a file named name in a
// temporary directory, and returns its path, its bytes and the file opened
// for reading (closed when the test ends).
func randomFile(t *testing.T, name string, pages int) (path string, want []byte, f *os.File) {
	t.Helper()
	want = make([]byte, pages*os.Getpagesize())
	_, _ = rand.Read(want)
	path = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, want, f
}

// trimFile, as EvictText runs it on the executable: the process's
// read-only mapping of the file loses its pages and is marked for random
// access, what it held reads back the same, and the page cache keeps none
// of the file that no process maps.
func TestTrimFileEvicts(t *testing.T) {
	page := os.Getpagesize()
	path, want, f := randomFile(t, "exe", 64)
	m, err := unix.Mmap(int(f.Fd()), 0, len(want), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	for i := 0; i < len(m); i += page {
		if m[i] != want[i] {
			t.Fatalf("byte %d of the mapping differs from the file's", i)
		}
	}
	if got := presentPages(t, m); got != len(m)/page {
		t.Fatalf("%d of %d pages mapped after reading them all", got, len(m)/page)
	}
	if got := cachedPages(t, path); got != len(m)/page {
		t.Skipf("%d of %d pages of a file just read are cached: the machine is short of memory", got, len(m)/page)
	}

	trimFile(path, true)
	if got := presentPages(t, m); got != 0 {
		t.Errorf("%d pages still mapped after trimFile; want 0", got)
	}
	if flags := vmFlags(t, m); !strings.Contains(" "+flags+" ", " rr ") {
		t.Errorf("VmFlags %q; want rr (random access)", flags)
	}
	// Part of what was just unmapped can be held for a moment; the second
	// pass, a second later, drops it.
	deadline := time.Now().Add(10 * time.Second)
	for got := cachedPages(t, path); got != 0; got = cachedPages(t, path) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pages nobody maps are still cached 10 s after trimFile", got, len(m)/page)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// One page used maps that page, read back alone: not the 64 KiB
	// around it, which is not cached.
	if m[20*page] != want[20*page] {
		t.Fatal("the page read back differs")
	}
	if got := presentPages(t, m); got != 1 {
		t.Errorf("%d pages mapped after using one; want 1", got)
	}
	if !bytes.Equal(m, want) {
		t.Error("the mapping reads back other bytes than the file's")
	}
}

// trimFile, given the executable, also drops the code of the shared
// libraries the process has loaded, which reads back the same; a
// library's mapping written since it was mapped (its relocations, after
// the loader made them read-only) keeps what was written, and its other
// read-only data stays mapped.
func TestTrimFileDropsLibraryCode(t *testing.T) {
	page := os.Getpagesize()
	path, want, f := randomFile(t, "libtrimtest.so.1", 16)
	mmap := func(prot int) []byte {
		t.Helper()
		m, err := unix.Mmap(int(f.Fd()), 0, len(want), prot, unix.MAP_PRIVATE)
		if err != nil {
			t.Skipf("mapping %s: %v", path, err) // a noexec file system
		}
		t.Cleanup(func() { _ = unix.Munmap(m) })
		return m
	}
	code := mmap(unix.PROT_READ | unix.PROT_EXEC)
	data := mmap(unix.PROT_READ)
	// Written, then made read-only: as the loader leaves relocations
	// (RELRO), and text relocations in code.
	written := func(prot int) []byte {
		m := mmap(unix.PROT_READ | unix.PROT_WRITE)
		copy(m, "relocated")
		if err := unix.Mprotect(m, prot); err != nil {
			t.Fatal(err)
		}
		return m
	}
	relro, textrel := written(unix.PROT_READ), written(unix.PROT_READ|unix.PROT_EXEC)
	for _, m := range [][]byte{code, data} {
		if !bytes.Equal(m, want) {
			t.Fatal("a mapping differs from the file")
		}
	}
	all := len(want) / page
	for name, m := range map[string][]byte{"code": code, "data": data} {
		if got := presentPages(t, m); got != all {
			t.Fatalf("%s: %d of %d pages mapped after reading them all", name, got, all)
		}
	}

	trimFile(filepath.Join(t.TempDir(), "exe"), false)
	if got := presentPages(t, code); got != 0 {
		t.Errorf("the library's code: %d pages still mapped; want 0", got)
	}
	if got := presentPages(t, data); got != all {
		t.Errorf("the library's read-only data: %d of %d pages mapped; want all", got, all)
	}
	for name, m := range map[string][]byte{"relocations": relro, "code with relocations": textrel} {
		if !bytes.HasPrefix(m, []byte("relocated")) || !bytes.Equal(m[len("relocated"):], want[len("relocated"):]) {
			t.Errorf("%s: the written bytes were lost", name)
		}
	}
	if !bytes.Equal(code, want) {
		t.Error("the library's code reads back other bytes than the file's")
	}
}
