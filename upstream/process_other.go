//go:build !unix

package upstream

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// Stdio upstreams need process groups and signals; mcpgw runs them on
// Linux and macOS only. HTTP upstreams work everywhere.

var (
	terminateGrace = 5 * time.Second
	drainGrace     = time.Second
	exitWait       = 2 * time.Second
)

var errNoStdio = errors.New("stdio upstreams are not supported on this platform")

type process struct {
	pid    int
	exited chan struct{}
}

func (p *Pool) startProcess(*registry.Server, *slog.Logger) (*process, error) { return nil, errNoStdio }
func (pr *process) Close() error                                              { return nil }
func (pr *process) hasExited() bool                                           { return true }
func (pr *process) exitError(context.Context, time.Duration) *ExitError       { return nil }
func (pr *process) stderrTail() string                                        { return "" }
func (pr *process) readInput() bool                                           { return true }
func (pr *process) stderrLines(int) []string                                  { return nil }

type stdioTransport struct {
	proc *process
	log  *slog.Logger
	conn *lineConn
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) { return nil, errNoStdio }

type reaper struct{ log *slog.Logger }

func (r *reaper) add(int)    {}
func (r *reaper) remove(int) {}
func (r *reaper) close()     {}
func (r *reaper) pid() int   { return 0 }

func (p *Pool) spawn(*exec.Cmd) error { return errNoStdio }
func (p *Pool) stopSpawner()          { close(p.spawnStop) }
