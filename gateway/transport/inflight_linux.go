package transport

import (
	"github.com/mcpgw/mcpgw/internal/shim/wire"
	"golang.org/x/sys/unix"
)

// The in-flight table: a piped session's requests awaiting an answer, in
// memory the shim shares (a memfd passed with the wire.Welcome). A daemon that
// stops answers them itself (pipedSession.drain); one that is killed
// cannot, and the shim reads the table after the connection ends and
// answers what is left, as it would have with the byte pipe. The daemon
// writes it, the shim reads it only once the daemon is gone, so it needs
// no locking: a slot's ID is written before its used byte, and a slot
// half written by a daemon killed in between reads as free.

type inFlightTable struct {
	fd   int
	mem  []byte
	slot map[string]int
	free []int
}

// newInFlightTable makes a table, or returns nil when the system offers no
// memfd.
func newInFlightTable() *inFlightTable {
	fd, err := unix.MemfdCreate("mcpgw-inflight", unix.MFD_CLOEXEC)
	if err != nil {
		return nil
	}
	size := wire.InFlightTableSize
	if unix.Ftruncate(fd, int64(size)) != nil {
		unix.Close(fd)
		return nil
	}
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil
	}
	t := &inFlightTable{fd: fd, mem: mem, slot: map[string]int{}, free: make([]int, 0, wire.InFlightSlots)}
	for i := wire.InFlightSlots - 1; i >= 0; i-- {
		t.free = append(t.free, i)
	}
	return t
}

func (t *inFlightTable) add(id string) {
	if t == nil || len(id) > wire.InFlightSlotSize-2 || len(t.free) == 0 {
		return
	}
	if _, ok := t.slot[id]; ok {
		return
	}
	i := t.free[len(t.free)-1]
	t.free = t.free[:len(t.free)-1]
	s := t.mem[i*wire.InFlightSlotSize : (i+1)*wire.InFlightSlotSize]
	s[1] = byte(len(id))
	copy(s[2:], id)
	s[0] = 1
	t.slot[id] = i
}

func (t *inFlightTable) remove(id string) {
	if t == nil {
		return
	}
	i, ok := t.slot[id]
	if !ok {
		return
	}
	t.mem[i*wire.InFlightSlotSize] = 0
	delete(t.slot, id)
	t.free = append(t.free, i)
}

func (t *inFlightTable) clear() {
	if t == nil {
		return
	}
	for id := range t.slot {
		t.remove(id)
	}
}

// close unmaps the table; the shim's descriptor keeps the memory.
func (t *inFlightTable) close() {
	if t == nil {
		return
	}
	_ = unix.Munmap(t.mem)
	_ = unix.Close(t.fd)
}

// rights is the descriptor to pass to the shim.
func (t *inFlightTable) rights() []byte {
	if t == nil {
		return nil
	}
	return unix.UnixRights(t.fd)
}
