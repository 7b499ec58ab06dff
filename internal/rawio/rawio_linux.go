package rawio

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// WakeMonitor wakes the runtime's monitor if it sleeps, for work about to
// hold the CPU for long (a script): the monitor is what preempts a
// goroutine that has run for 10 ms so that others get their turn, and the
// raw reads and writes that started the work did not wake it. (Any system
// call made the runtime's way wakes it; getpid is the cheapest.)
func WakeMonitor() {
	syscall.Syscall(syscall.SYS_GETPID, 0, 0, 0)
}

// Conn returns c with Read and Write made as raw system calls when c is a
// *net.TCPConn or a *net.UnixConn; any other connection as it is. The
// connection returned has c's other methods (deadlines, CloseWrite,
// SyscallConn), and NetConn returns c.
func Conn(c net.Conn) net.Conn {
	switch c := c.(type) {
	case *net.TCPConn:
		if rc, err := c.SyscallConn(); err == nil {
			return &tcpConn{TCPConn: c, rc: rc}
		}
	case *net.UnixConn:
		if rc, err := c.SyscallConn(); err == nil {
			return &unixConn{UnixConn: c, rc: rc}
		}
	}
	return c
}

type tcpConn struct {
	*net.TCPConn
	rc syscall.RawConn
}

func (c *tcpConn) Read(b []byte) (int, error) {
	n, err := read(c.rc, b)
	return n, netErr(c, "read", err)
}

func (c *tcpConn) Write(b []byte) (int, error) {
	n, err := write(c.rc, b)
	return n, netErr(c, "write", err)
}

// NetConn is the connection c wraps.
func (c *tcpConn) NetConn() net.Conn { return c.TCPConn }

type unixConn struct {
	*net.UnixConn
	rc syscall.RawConn
}

func (c *unixConn) Read(b []byte) (int, error) {
	n, err := read(c.rc, b)
	return n, netErr(c, "read", err)
}

func (c *unixConn) Write(b []byte) (int, error) {
	n, err := write(c.rc, b)
	return n, netErr(c, "write", err)
}

// NetConn is the connection c wraps.
func (c *unixConn) NetConn() net.Conn { return c.UnixConn }

// netErr is err as the net package gives it for op on c: io.EOF as it
// is, anything else in a *net.OpError (net.ErrClosed and
// os.ErrDeadlineExceeded within it, as for the connection itself).
func netErr(c net.Conn, op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	var oe *net.OpError
	var errno syscall.Errno
	switch {
	case errors.As(err, &oe): // from the RawConn: "raw-read", "raw-write"
		err = oe.Err
	case errors.As(err, &errno):
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: op, Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// File returns f's Read and Write made as raw system calls when f is a
// non-blocking descriptor (a pipe from os.Pipe, or a pipe or socket made
// non-blocking before os.NewFile); otherwise f itself. f still owns the
// descriptor: its Close and deadlines end a read or write in progress.
func File(f *os.File) io.ReadWriter {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	nonblock := false
	if err := rc.Control(func(fd uintptr) {
		fl, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblock = errno == 0 && fl&syscall.O_NONBLOCK != 0
	}); err != nil || !nonblock {
		return f
	}
	return &file{f: f, rc: rc}
}

type file struct {
	f  *os.File
	rc syscall.RawConn
}

func (f *file) Read(b []byte) (int, error) {
	n, err := read(f.rc, b)
	return n, f.pathErr("read", err)
}

func (f *file) Write(b []byte) (int, error) {
	n, err := write(f.rc, b)
	return n, f.pathErr("write", err)
}

// pathErr is err as *os.File gives it for op: io.EOF as it is, anything
// else in an *os.PathError, a closed file's as os.ErrClosed.
func (f *file) pathErr(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) && !errors.Is(err, os.ErrDeadlineExceeded) {
		// The RawConn's only other error: the file is closed (or closing).
		err = os.ErrClosed
	}
	return &os.PathError{Op: op, Path: f.f.Name(), Err: err}
}

// read reads into b, waiting on the runtime's poller while there is
// nothing to read. It returns io.EOF at the end, as Read does.
func read(rc syscall.RawConn, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, errno
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// write writes all of b, waiting on the runtime's poller while the
// descriptor is full. The RawConn holds its write lock throughout, so
// writes from several goroutines do not interleave, as with Write.
func write(rc syscall.RawConn, b []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n))
			switch e {
			case 0:
				if r == 0 {
					errno = syscall.EIO // no progress and no error: never loop
					return true
				}
				n += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, errno
	}
	return n, nil
}
