//go:build unix

package upstream

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/registry"
)

// The reaper ends upstream process groups when mcpgw dies without closing
// them (kill -9, OOM kill, crash).
//
// A parent-death signal (Linux only) reaches a server, but not what the
// server started: npx's node, a shell's children. So the pool runs one small
// helper, its own binary re-executed with reaperEnv set, in a process group
// of its own. The pool writes "+PGID" and "-PGID" lines to the helper's
// stdin as groups start and end. When stdin reaches EOF, because the pool
// closed it or because mcpgw died and the kernel closed it, the helper sends
// SIGKILL to every group still listed, then exits.
//
// The helper runs from this package's init, before main, in any binary that
// imports the package.
const reaperEnv = "MCPGW_UPSTREAM_REAPER"

func init() {
	if os.Getenv(reaperEnv) == "1" {
		runReaper(os.Stdin)
		os.Exit(0)
	}
}

// runReaper is the helper's main loop.
//
// A server's descendant that leaves its process group (setsid, as daemons
// and some browsers do) escapes a group kill. So while groups are listed,
// the helper also notes every descendant of their members, every
// trackInterval, and kills those still alive (the same process: its start
// time is checked) when their group ends or at EOF. Only Linux can list a
// process's children; elsewhere, and for a descendant that lived less
// than trackInterval, the group kill is all there is. Under systemd, the
// unit's cgroup (KillMode=control-group, the default) covers every case.
func runReaper(in io.Reader) {
	// Only EOF ends the reaper: signals meant for mcpgw (a terminal's ^C,
	// a service manager's SIGTERM) must not stop it before it has worked.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	// It lives as long as the daemon and runs a small loop: the pages the
	// runtime's start touched go back, and, mapped, would keep their part
	// of the executable in the page cache for the daemon to map around
	// its own faults (deploy.EvictText).
	deploy.TrimText()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	groups := map[int]map[int]uint64{} // pgid → escaped descendants (pid → start time)
	tick := time.NewTicker(trackInterval)
	defer tick.Stop()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				for pgid, escaped := range groups {
					_ = syscall.Kill(-pgid, syscall.SIGKILL)
					killEscaped(escaped)
				}
				return
			}
			if len(line) < 2 {
				continue
			}
			pgid, err := strconv.Atoi(line[1:])
			if err != nil || pgid <= 1 {
				continue
			}
			switch line[0] {
			case '+':
				groups[pgid] = map[int]uint64{}
			case '-':
				killEscaped(groups[pgid])
				delete(groups, pgid)
			}
		case <-tick.C:
			for pgid, escaped := range groups {
				for pid, start := range descendants(pgid) {
					if processGroup(pid) != pgid {
						escaped[pid] = start
					}
				}
			}
		}
	}
}

// trackInterval is how often the reaper notes the descendants of its
// groups.
const trackInterval = time.Second

// killEscaped kills the noted processes that are still the ones noted.
func killEscaped(escaped map[int]uint64) {
	for pid, start := range escaped {
		if st, ok := startTime(pid); ok && st == start {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// reaper is the pool's side of the helper. Its methods are safe for
// concurrent use; failures are logged once and otherwise ignored (the
// parent-death signal still covers direct children on Linux).
type reaper struct {
	log *slog.Logger

	mu     sync.Mutex
	groups map[int]bool
	cmd    *exec.Cmd
	w      *os.File
	failed bool // could not start the helper; don't retry
	closed bool
}

func (r *reaper) add(pgid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if r.groups == nil {
		r.groups = map[int]bool{}
	}
	r.groups[pgid] = true
	r.sendLocked(fmt.Sprintf("+%d\n", pgid))
}

func (r *reaper) remove(pgid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	delete(r.groups, pgid)
	r.sendLocked(fmt.Sprintf("-%d\n", pgid))
}

// sendLocked writes line to the helper, (re)starting it as needed; a
// restarted helper is sent every live group.
func (r *reaper) sendLocked(line string) {
	if r.failed {
		return
	}
	if r.w != nil {
		if _, err := io.WriteString(r.w, line); err == nil {
			return
		}
		// The helper died (someone killed it): reap it and start another.
		r.w.Close()
		_ = r.cmd.Wait()
		r.w, r.cmd = nil, nil
	}
	if err := r.startLocked(); err != nil {
		r.failed = true
		r.log.Warn("cannot start the upstream reaper; a killed mcpgw may leave grandchild processes behind", "error", err)
		return
	}
	// startLocked sent every live group, which covers line.
}

func (r *reaper) startLocked() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe)
	// Without mcpgw's own variables, the daemon's token first: the reaper
	// is dumpable like any process the daemon starts, so any process of
	// the user could read them in /proc/PID/environ.
	cmd.Env = append(registry.WithoutOwnVars(os.Environ()), reaperEnv+"=1")
	cmd.Stdin = pr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	pr.Close()
	if err != nil {
		pw.Close()
		return err
	}
	r.cmd, r.w = cmd, pw
	for pgid := range r.groups {
		if _, err := fmt.Fprintf(pw, "+%d\n", pgid); err != nil {
			return err
		}
	}
	return nil
}

// close ends the helper, which kills any group still listed (none after a
// clean pool shutdown), and waits for it.
func (r *reaper) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.w != nil {
		r.w.Close()
		_ = r.cmd.Wait()
		r.w, r.cmd = nil, nil
	}
}

// pid returns the helper's PID (0 if not running); for tests.
func (r *reaper) pid() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return 0
	}
	return r.cmd.Process.Pid
}
