package hangup

import (
	"sync"
	"syscall"
)

// poller is the one epoll instance that watches every connection, and
// the goroutine that waits on it (started with the first watch).
type poller struct {
	once sync.Once
	fd   int
	err  error

	mu      sync.Mutex
	next    uint64
	watches map[uint64]func() // by token: what to call when it fires
	dead    bool              // the loop failed: watch with goroutines
}

var watcher poller

// epollRDHUP is EPOLLRDHUP: the peer closed its end (or shut down its
// writing).
const epollRDHUP = 0x2000

func watchRaw(rc syscall.RawConn, data bool, gone func()) (stop func(), ok bool) {
	p := &watcher
	p.once.Do(p.start)
	if p.err != nil {
		return nil, false
	}
	p.mu.Lock()
	if p.dead {
		p.mu.Unlock()
		return nil, false
	}
	p.next++
	tok := p.next
	p.watches[tok] = gone
	p.mu.Unlock()
	ev := syscall.EpollEvent{Events: epollRDHUP | syscall.EPOLLHUP | syscall.EPOLLERR | syscall.EPOLLONESHOT}
	if data {
		ev.Events |= syscall.EPOLLIN
	}
	// The event carries the token, not the descriptor: a descriptor's
	// number is reused once it is closed.
	ev.Fd, ev.Pad = int32(uint32(tok)), int32(uint32(tok>>32))
	var addErr error
	if err := rc.Control(func(fd uintptr) {
		addErr = syscall.EpollCtl(p.fd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	}); err != nil || addErr != nil {
		p.mu.Lock()
		delete(p.watches, tok)
		p.mu.Unlock()
		return nil, false
	}
	return func() {
		p.mu.Lock()
		delete(p.watches, tok)
		p.mu.Unlock()
		// Closed already: closing took it out of the epoll set.
		_ = rc.Control(func(fd uintptr) {
			_ = syscall.EpollCtl(p.fd, syscall.EPOLL_CTL_DEL, int(fd), nil)
		})
	}, true
}

func (p *poller) start() {
	p.fd, p.err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if p.err != nil {
		return
	}
	p.watches = map[uint64]func(){}
	go p.loop()
}

// loop waits for connections to end and calls what was asked for each.
// It blocks in the kernel, on a thread of its own, not on the scheduler.
func (p *poller) loop() {
	evs := make([]syscall.EpollEvent, 32)
	for {
		n, err := syscall.EpollWait(p.fd, evs, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			// Not expected of a valid epoll descriptor: fail every watch
			// rather than leave them unwatched.
			p.mu.Lock()
			all := p.watches
			p.watches, p.dead = map[uint64]func(){}, true
			p.mu.Unlock()
			for _, gone := range all {
				gone()
			}
			return
		}
		for _, ev := range evs[:n] {
			tok := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			p.mu.Lock()
			gone := p.watches[tok]
			delete(p.watches, tok)
			p.mu.Unlock()
			if gone != nil {
				gone()
			}
		}
	}
}
