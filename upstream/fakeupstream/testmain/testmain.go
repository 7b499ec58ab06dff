// Package testmain is the TestMain glue of fakeupstream: a test binary
// that calls Run doubles as the stdio test server. It is apart from
// fakeupstream so that nothing but tests links package testing
// (cmd/mcpgw-bench uses fakeupstream's servers).
package testmain

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// Run is for a TestMain: when fakeupstream.EnvServe is "stdio" it serves
// the test server on stdin/stdout and exits; otherwise it runs the tests.
//
//	func TestMain(m *testing.M) { testmain.Run(m) }
func Run(m *testing.M) {
	if os.Getenv(fakeupstream.EnvServe) == "stdio" {
		os.Unsetenv(fakeupstream.EnvServe)
		if err := fakeupstream.ServeStdio(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
