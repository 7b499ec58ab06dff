package upstream

import (
	"os/exec"
	"runtime"
	"syscall"
)

// childSysProcAttr puts a child in its own process group (so closing it can
// signal everything it started) and asks the kernel to SIGKILL it when its
// parent dies, so a kill -9 of mcpgw leaves no server behind. The reaper
// (see reaper.go) ends the rest of the group.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// spawn starts cmd on the pool's spawner goroutine. Linux delivers the
// parent-death signal when the *thread* that forked the child exits, and Go
// retires threads freely; the spawner stays locked to one thread until the
// pool is closed, so Pdeathsig means "when mcpgw dies".
func (p *Pool) spawn(cmd *exec.Cmd) error {
	p.spawnOnce.Do(func() {
		p.spawnReqs = make(chan spawnRequest)
		p.spawnDone = make(chan struct{})
		go p.spawner()
	})
	req := spawnRequest{cmd: cmd, reply: make(chan error, 1)}
	select {
	case p.spawnReqs <- req:
		return <-req.reply
	case <-p.spawnStop:
		return ErrClosed
	}
}

func (p *Pool) spawner() {
	// Never unlocked: when this goroutine returns, its thread exits, and any
	// child still alive gets its parent-death signal.
	runtime.LockOSThread()
	defer close(p.spawnDone)
	for {
		select {
		case req := <-p.spawnReqs:
			req.reply <- req.cmd.Start()
		case <-p.spawnStop:
			return
		}
	}
}

// stopSpawner ends the spawner goroutine (after every child has exited).
func (p *Pool) stopSpawner() {
	close(p.spawnStop)
	p.spawnOnce.Do(func() {}) // no spawner was started: nothing to wait for
	if p.spawnDone != nil {
		<-p.spawnDone
	}
}
