//go:build unix && !linux

package upstream

import (
	"os/exec"
	"syscall"
)

// childSysProcAttr puts a child in its own process group, so closing it can
// signal everything it started. There is no parent-death signal outside
// Linux; the reaper (see reaper.go) ends the group if mcpgw dies.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

func (p *Pool) spawn(cmd *exec.Cmd) error {
	select {
	case <-p.spawnStop:
		return ErrClosed
	default:
	}
	return cmd.Start()
}

func (p *Pool) stopSpawner() { close(p.spawnStop) }
