// Package rawio reads and writes the daemon's sockets and pipes as raw
// system calls.
//
// Go makes a read or write on a network connection or an *os.File as a
// system call the runtime is told of (entersyscall), in case it blocks.
// Telling it has a cost the relaying of small messages pays on every
// call: when every P has been idle (a daemon waiting for a client or for
// an upstream), the runtime's monitor thread (sysmon) sleeps, and the
// next such system call wakes it, two more context switches, and it then
// polls every 20 µs until the process is idle again. A call through the
// daemon is two waits (for the client, for the upstream), so the monitor
// is woken and put back to sleep twice a call: on Linux, 7.5 context
// switches a call at concurrency 1 instead of 3.5.
//
// The descriptors here are non-blocking and polled by the runtime: a read
// or write returns at once, with data or EAGAIN, and the waiting is done
// by the runtime's poller (syscall.RawConn), as for any Go connection. So
// the system call needs no telling, and deadlines and Close still end a
// wait as they do for the connection itself. Where that cannot be known
// (a descriptor in blocking mode, a connection type other than TCP or a
// unix socket, a platform other than Linux), the connection or file is
// returned as it is.
//
// The monitor still runs whenever anything else wakes it (a timer, a
// collection, any other system call); what it is not woken for is each
// message.
package rawio
