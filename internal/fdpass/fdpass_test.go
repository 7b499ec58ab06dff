//go:build unix

package fdpass

import (
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReceivedDescriptorsAreCloseOnExec: a pipe passed over a unix
// socket arrives close-on-exec (FD_CLOEXEC is set when Reader returns,
// with nothing of the caller's in between), and the message's bytes
// are read whole after it.
func TestReceivedDescriptorsAreCloseOnExec(t *testing.T) {
	pair, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(pair[0])
	f := os.NewFile(uintptr(pair[1]), "receiver")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	// The sender's copies are not close-on-exec: the flag must come from
	// the receiving side.
	if _, err := unix.FcntlInt(pr.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Sendmsg(pair[0], []byte("hello\n"), syscall.UnixRights(int(pr.Fd()), int(pw.Fd())), nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := syscall.Write(pair[0], []byte("more\n")); err != nil {
		t.Fatal(err)
	}
	syscall.Shutdown(pair[0], syscall.SHUT_WR)

	r, fds, err := Reader(c.(*net.UnixConn), 64)
	if err != nil {
		t.Fatal(err)
	}
	defer Close(fds)
	if len(fds) != 2 {
		t.Fatalf("received %d descriptors, want 2", len(fds))
	}
	for _, fd := range fds {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			t.Fatal(err)
		}
		if flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("received descriptor %d: flags %#x, not close-on-exec", fd, flags)
		}
	}
	if data, _ := io.ReadAll(r); string(data) != "hello\nmore\n" {
		t.Errorf("read %q, want the message and what followed", data)
	}
}
