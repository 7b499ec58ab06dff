package deploy

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// TrimText drops the pages of the daemon's own executable (its code and
// read-only data) from its resident set and marks them for random access.
// They are clean file pages: the kernel reads them back from the page
// cache when they are next used, one at a time, instead of the 64 KiB
// around each fault it maps by default. Start-up touches code (package
// initialisation, config and cache loading) a long-lived, mostly idle
// daemon never runs again; without this they count in its RSS for weeks.
// Writable mappings are never touched.
func TrimText() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != exe {
			continue
		}
		if perms := fields[1]; perms != "r-xp" && perms != "r--p" {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		madvise(uintptr(start), uintptr(end-start), syscall.MADV_RANDOM)
		madvise(uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}

func madvise(addr, length uintptr, advice int) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, length, uintptr(advice))
}
