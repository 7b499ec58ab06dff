package deploy

import "golang.org/x/sys/unix"

// ProtectProcess makes the daemon not dumpable (prctl PR_SET_DUMPABLE 0):
// its /proc/PID/environ and /proc/PID/mem, its open files and a ptrace
// attach become root's alone, so the processes it starts — upstreams run
// as the same user — cannot read the token in its environment nor
// anything in its memory (OAuth tokens, other sessions' calls). It also
// means no core dump. /proc/PID/status and stat stay readable to all, so
// memory and CPU can still be watched from outside. What the daemon
// starts is dumpable again once it executes (execve resets the flag), so
// nothing of it is inherited.
func ProtectProcess() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
