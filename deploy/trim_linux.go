package deploy

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// TrimText drops the pages of the program's own executable (its code and
// read-only data) from its resident set and marks them for random access.
// They are clean file pages: the kernel maps them back from the page cache
// when they are next used. Start-up touches code (package initialisation,
// config and cache loading) a long-lived, mostly idle daemon never runs
// again; without this they count in its RSS for weeks. Writable mappings
// are never touched.
//
// What comes back is more than what is used. A fault maps, besides its
// page, every page of the 64 KiB around it that the page cache holds
// (fault-around), whatever the mapping's advice; and a fault that reads
// code reads ahead of it (random access stops that for read-only data,
// not for code, on Linux 6.18). With the whole executable cached, as it is
// once it has been built, installed or run, one byte used maps 64 KiB:
// the daemon's hot code and data are spread over 14 MB of text and 14 MB
// of read-only data and tables, and under the proxy bench's 64 sessions
// 12.4 MB of its 25 MB peak VmRSS was its executable, 7.5 MB of it read-only
// data of which it used a fraction. EvictText stops that.
func TrimText() { trimExecutable(false) }

// EvictText does what TrimText does, then drops from the page cache the
// executable's pages that no process maps (POSIX_FADV_DONTNEED), so that a
// page of read-only data the program uses from then on is read back alone
// and fault-around finds, around it, only pages used since. It costs one
// read per page the next burst of work needs, once: the daemon calls it
// the first time it is quiet after it starts.
func EvictText() { trimExecutable(true) }

func trimExecutable(evict bool) {
	if exe, err := os.Executable(); err == nil {
		trimFile(exe, evict)
	}
}

// trimFile drops this process's read-only mappings of the file at path,
// marked for random access, and with evict the file's pages no process
// maps from the page cache. It also drops the code of the shared libraries
// the process has loaded (a build with cgo links the C library): 1 MB of
// libc's and the loader's, mostly mapped by fault-around at start-up, of
// which the daemon then uses a few pages. Their other read-only mappings
// are left alone: those hold relocations the loader wrote (RELRO), which
// dropping would take back to the file's bytes. Their page cache is left
// alone too: every process shares it.
func trimFile(path string, evict bool) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return
	}
	defer f.Close()
	var cur mapping // the mapping whose fields are being read
	trim := func() {
		// A page written since it was mapped (a relocation, a
		// debugger's breakpoint) would be lost: such a mapping is left.
		if cur.end > cur.start && cur.clean {
			if cur.own {
				madvise(cur.start, cur.end-cur.start, syscall.MADV_RANDOM)
			}
			madvise(cur.start, cur.end-cur.start, syscall.MADV_DONTNEED)
		}
		cur = mapping{}
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		// A private mapping's pages written since they were mapped are
		// copies of the file's, anonymous memory (Private_Dirty also
		// counts file pages not yet written back).
		if v, ok := strings.CutPrefix(line, "Anonymous:"); ok {
			cur.clean = strings.TrimSpace(v) == "0 kB"
			continue
		}
		// A mapping's first line: start-end perms offset dev inode path;
		// the others are Key: value.
		fields := strings.Fields(line)
		if len(fields) < 5 || strings.HasSuffix(fields[0], ":") {
			continue
		}
		trim()
		if len(fields) < 6 {
			continue
		}
		perms, own := fields[1], fields[5] == path
		switch {
		case own && (perms == "r-xp" || perms == "r--p"):
		case !own && perms == "r-xp" && sharedObject(fields[5]):
		default:
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		cur = mapping{start: uintptr(start), end: uintptr(end), own: own}
	}
	trim()
	if evict {
		evictFile(path)
		// Some of what was just unmapped stays held for a moment (13 of
		// 40 MB, on Linux 6.18): a second pass drops it.
		time.AfterFunc(time.Second, func() { evictFile(path) })
	}
}

// mapping is one of the process's mappings trimFile may drop.
type mapping struct {
	start, end uintptr
	own        bool // of the file trimFile was given
	clean      bool // no page of it written since it was mapped
}

// sharedObject reports whether path names a shared library (libc.so.6,
// ld-linux-x86-64.so.2, libfoo.so).
func sharedObject(path string) bool {
	base := filepath.Base(path)
	return strings.HasSuffix(base, ".so") || strings.Contains(base, ".so.")
}

// evictFile drops the clean pages of the file at path that no process
// maps from the page cache.
func evictFile(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

func madvise(addr, length uintptr, advice int) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, length, uintptr(advice))
}
