package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcpgw/mcpgw/internal/fdpass"
	"github.com/mcpgw/mcpgw/internal/shim/wire"
)

// pipedClient is a client's stdin and stdout as a shim hands them over:
// the test writes the client's lines to in and reads the daemon's from
// out.
type pipedClient struct {
	in  *os.File
	out *bufio.Reader
}

// sendHello sends hello with files (their descriptors, SCM_RIGHTS) and
// closes this process's copies of them, as a shim does.
func sendHello(t *testing.T, s *shim, hello wire.Hello, files ...*os.File) {
	t.Helper()
	data, _ := json.Marshal(hello)
	var rights []byte
	if len(files) > 0 {
		fds := make([]int, len(files))
		for i, f := range files {
			fds[i] = int(f.Fd())
		}
		rights = syscall.UnixRights(fds...)
	}
	if _, _, err := s.conn.WriteMsgUnix(append(data, '\n'), rights, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		f.Close()
	}
}

// readWelcome reads the daemon's welcome and the descriptors with it.
func readWelcome(t *testing.T, s *shim) (string, []int) {
	t.Helper()
	buf, oob := make([]byte, 4096), make([]byte, fdpass.OOBSize)
	n, oobn, _, _, err := s.conn.ReadMsgUnix(buf, oob)
	if err != nil {
		t.Fatal(err)
	}
	fds := fdpass.Parse(oob[:oobn])
	t.Cleanup(func() { fdpass.Close(fds) })
	return string(buf[:n]), fds
}

// startPiped starts a shim session whose client's pipes are handed over
// with hello, and returns the shim, the client, and the in-flight table
// the daemon shares.
func startPiped(t *testing.T, ctx context.Context, hub *fakeHub, hello wire.Hello) (*shim, *pipedClient, []byte) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inW.Close(); outR.Close() })
	s := startShim(t, ctx, hub, Options{})
	hello.Protocol, hello.Pipes = 1, true
	sendHello(t, s, hello, inR, outW)
	welcome, fds := readWelcome(t, s)
	if welcome != `{"ok":true,"version":"test","pipes":true,"inFlight":true}`+"\n" || len(fds) != 1 {
		t.Fatalf("welcome %q with %d descriptors", welcome, len(fds))
	}
	table, err := unix.Mmap(fds[0], 0, wire.InFlightTableSize, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Munmap(table) })
	return s, &pipedClient{in: inW, out: bufio.NewReader(outR)}, table
}

func (c *pipedClient) send(t *testing.T, line string) {
	t.Helper()
	if _, err := c.in.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// line is the next line the client reads, "" at the end of its stdout.
func (c *pipedClient) line(t *testing.T) string {
	t.Helper()
	l, _ := c.out.ReadString('\n')
	return l
}

func inFlight(table []byte) []string {
	var ids []string
	for _, id := range wire.InFlightIDs(table) {
		ids = append(ids, string(id))
	}
	slices.Sort(ids)
	return ids
}

const (
	initializeLine  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// With the client's pipes handed over, the daemon reads and writes them
// itself: the client's initialize and initialized lines are passed to the
// shim for a later daemon to replay, the in-flight table holds the
// requests not yet answered, and the session's end tells the shim it is
// done.
func TestShimPipes(t *testing.T) {
	t.Parallel()
	received := make(chan string, 8)
	hub := &fakeHub{}
	hub.serve = echo(nil, received)
	s, client, table := startPiped(t, context.Background(), hub, wire.Hello{Session: "S1", Cwd: "/p"})

	client.send(t, initializeLine)
	if got := client.line(t); got != `{"jsonrpc":"2.0","id":1,"result":{"echo":"initialize"}}`+"\n" {
		t.Errorf("initialize answered %q", got)
	}
	client.send(t, initializedLine)
	if got := <-received + "," + <-received; got != "initialize,notifications/initialized" {
		t.Errorf("the session received %s", got)
	}
	client.send(t, `{"jsonrpc":"2.0","id":"h1","method":"hold"}`)
	<-received
	client.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if got := client.line(t); got != `{"jsonrpc":"2.0","id":2,"result":{"echo":"ping"}}`+"\n" {
		t.Errorf("ping answered %q", got)
	}
	if got := inFlight(table); !slices.Equal(got, []string{`"h1"`}) {
		t.Errorf("in flight %q, want the held request only", got)
	}
	client.send(t, "not json")
	if got := client.line(t); got != parseErrorLine {
		t.Errorf("a stray line answered %q", got)
	}

	client.in.Close() // the client ends the session
	<-s.done
	var notes []string
	for l := s.line(t); l != ""; l = s.line(t) {
		notes = append(notes, l)
	}
	want := []string{
		`{"replay":` + quote(initializeLine) + "}\n",
		`{"replay":` + quote(initializedLine) + "}\n",
		`{"done":true}` + "\n",
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes to the shim %q, want %q", notes, want)
	}
	if _, served, _ := hub.record(); len(served) != 1 || served[0] != (SessionOptions{Cwd: "/p", ID: "S1"}) {
		t.Errorf("served %+v", served)
	}
	if l := client.line(t); l != "" {
		t.Errorf("the client's stdout still open: %q", l)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A resumed session replays the client's initialize and initialized from
// the hello; the client, initialized already, does not see the second
// answer to its initialize.
func TestShimPipesResume(t *testing.T) {
	t.Parallel()
	received := make(chan string, 8)
	hub := &fakeHub{}
	hub.serve = echo(nil, received)
	s, client, _ := startPiped(t, context.Background(), hub,
		wire.Hello{Session: "S1", Resume: true, Replay: []string{initializeLine, initializedLine + "\n"}})
	client.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if got := client.line(t); got != `{"jsonrpc":"2.0","id":2,"result":{"echo":"ping"}}`+"\n" {
		t.Errorf("the client's first line %q, want the answer to its ping", got)
	}
	if got := []string{<-received, <-received, <-received}; !slices.Equal(got, []string{"initialize", "notifications/initialized", "ping"}) {
		t.Errorf("the session received %q", got)
	}
	client.in.Close()
	<-s.done
	if l := s.line(t); l != `{"done":true}`+"\n" {
		t.Errorf("the shim was sent %q, want done only (it has the handshake lines)", l)
	}
	if _, served, _ := hub.record(); len(served) != 1 || served[0] != (SessionOptions{ID: "S1", Resume: true}) {
		t.Errorf("served %+v", served)
	}
}

// A daemon that stops answers the requests it read and did not answer
// with the restart error, writes nothing more, and does not tell the
// shim the session is done (the next daemon takes it).
func TestShimPipesDrain(t *testing.T) {
	t.Parallel()
	received := make(chan string, 8)
	hub := &fakeHub{}
	hub.serve = echo(nil, received)
	ctx, stop := context.WithCancel(context.Background())
	s, client, table := startPiped(t, ctx, hub, wire.Hello{Session: "S1"})
	client.send(t, `{"jsonrpc":"2.0","id":"h1","method":"hold"}`)
	<-received
	if got := inFlight(table); !slices.Equal(got, []string{`"h1"`}) {
		t.Errorf("in flight %q", got)
	}
	stop()
	<-s.done
	if got := client.line(t); got != string(wire.RestartedAnswer([]byte(`"h1"`))) {
		t.Errorf("the held request answered %q", got)
	}
	if l := client.line(t); l != "" {
		t.Errorf("then %q", l)
	}
	if l := s.line(t); l != "" {
		t.Errorf("the shim was sent %q, want nothing", l)
	}
	if got := inFlight(table); len(got) != 0 {
		t.Errorf("in flight after the drain %q", got)
	}
}

// Descriptors that are not the client's two pipes are not taken: the
// session is the byte stream, and the daemon keeps none of them.
func TestShimPipesRefused(t *testing.T) {
	t.Parallel()
	file := func() *os.File {
		f, err := os.CreateTemp(t.TempDir(), "regular")
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name  string
		pipes bool
		files func() (passed []*os.File, write *os.File) // write: the write end of a passed pipe
	}{
		{name: "one pipe", pipes: true, files: func() ([]*os.File, *os.File) {
			r, w, _ := os.Pipe()
			return []*os.File{r}, w
		}},
		{name: "three pipes", pipes: true, files: func() ([]*os.File, *os.File) {
			r, w, _ := os.Pipe()
			r2, w2, _ := os.Pipe()
			r3, w3, _ := os.Pipe()
			t.Cleanup(func() { w2.Close(); w3.Close() })
			return []*os.File{r, r2, r3}, w
		}},
		{name: "regular files", pipes: true, files: func() ([]*os.File, *os.File) { return []*os.File{file(), file()}, nil }},
		{name: "pipes, not asked for", pipes: false, files: func() ([]*os.File, *os.File) {
			r, w, _ := os.Pipe()
			_, w2, _ := os.Pipe()
			t.Cleanup(func() { w2.Close() })
			return []*os.File{r, w2}, w
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			received := make(chan string, 4)
			hub := &fakeHub{}
			hub.serve = echo(nil, received)
			s := startShim(t, context.Background(), hub, Options{})
			passed, w := tc.files()
			sendHello(t, s, wire.Hello{Protocol: 1, Pipes: tc.pipes}, passed...)
			if welcome, fds := readWelcome(t, s); welcome != `{"ok":true,"version":"test"}`+"\n" || len(fds) != 0 {
				t.Errorf("welcome %q with %d descriptors; want the byte stream's", welcome, len(fds))
			}
			if w != nil {
				defer w.Close()
				if _, err := w.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
					t.Errorf("writing to the passed pipe: %v; want EPIPE, the daemon holding no reader", err)
				}
			}
			s.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
			if got := s.line(t); got != `{"jsonrpc":"2.0","id":1,"result":{"echo":"ping"}}`+"\n" {
				t.Errorf("ping answered %q on the connection", got)
			}
			_ = s.conn.CloseWrite()
			<-s.done
		})
	}
}
