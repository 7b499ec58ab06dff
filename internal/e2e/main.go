//go:build unix

package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestServerBin is the running test binary: run with the single argument
// "testserver" it serves fakeupstream's server on stdin/stdout (see Main),
// so the test server never ships in mcpgw itself.
var TestServerBin = func() string {
	p, err := filepath.Abs(os.Args[0])
	if err != nil {
		panic(err)
	}
	return p
}()

// Main is the TestMain of every package of end-to-end tests:
//
//	func TestMain(m *testing.M) { e2e.Main(m, nil) }
//
// Run as `TESTBINARY MODE [ARG]`, the test binary is a helper process
// instead of running tests: "testserver" serves fakeupstream's test
// server over stdio; "conformance-upstream [ARGS]" the conformance
// server over stdio; "conformance-upstream-http ADDR" the same over HTTP,
// its MCP URL printed first; and each of modes, with its one argument,
// exits 1 on an error. Otherwise the tests run, four per CPU at once
// unless -parallel is given (see parallelByDefault).
func Main(m *testing.M, modes map[string]func(arg string) error) {
	if len(os.Args) >= 2 {
		mode, args := os.Args[1], os.Args[2:]
		run := func(err error) {
			if err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(os.Stderr, "%s: %v\n", mode, err)
				os.Exit(1)
			}
			os.Exit(0)
		}
		switch {
		case mode == "testserver" && len(args) == 0:
			run(fakeupstream.ServeStdio(context.Background()))
		case mode == "conformance-upstream":
			run(fakeupstream.ConformanceServer(args...).Run(context.Background(), &mcp.StdioTransport{}))
		case mode == "conformance-upstream-http" && len(args) == 1:
			ready := func(url string) { fmt.Println(url) }
			run(fakeupstream.ServeConformance(context.Background(), args[0], ready))
		case modes[mode] != nil && len(args) == 1:
			run(modes[mode](args[0]))
		}
	}
	flag.Parse()
	parallelByDefault()
	os.Exit(m.Run())
}

// parallelByDefault lets four tests per CPU run at once unless -parallel
// was given. The end-to-end tests spend most of their time waiting on the
// processes they start (node, daemons, browsers), so go test's default of
// one per CPU leaves the machine idle while the package runs past its
// time limit; each test has its own ports, directories and daemons.
func parallelByDefault() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}

// Heavy takes one of the machine's heavy slots and returns its release:
// the heaviest peers — a Pi process, an agent, a Chromium — run one per
// CPU at once, in every package of tests together, while the lighter
// end-to-end tests fill the rest of -parallel. Pi gives its MCP servers a
// fixed 10 s to connect before its first prompt: with every test's node
// and browser starting at once on a busy machine, that was spent before
// mcpgw's first answer.
//
// The slots are files locked with flock(2) in a per-user directory, so
// that go test's packages, which run as processes of their own at the
// same time, share them; a lock ends with the process that held it.
func Heavy() (release func()) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("mcpgw-test-heavy-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		panic(err)
	}
	slots := max(2, runtime.NumCPU())
	for {
		for i := range slots {
			f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(i)), os.O_CREATE|os.O_RDWR, 0o600)
			if err != nil {
				panic(err)
			}
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
				return func() { f.Close() } // closing the file releases its lock
			}
			f.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
}
