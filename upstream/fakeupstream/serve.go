package fakeupstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// EnvServe, set to "stdio" in the environment of a test binary whose
// TestMain calls testmain.Run, makes that binary serve the test server on
// stdin/stdout instead of running tests.
const EnvServe = "MCPGW_TESTSERVER"

// ServeStdio runs the test server on stdin/stdout until stdin closes or ctx
// is done. Options come from EnvPageSize and EnvInstructions; if EnvPIDFile
// is set, the process's PID is appended to that file first.
func ServeStdio(ctx context.Context) error {
	if path := os.Getenv(EnvPIDFile); path != "" {
		if err := appendPID(path); err != nil {
			return err
		}
	}
	if msg := os.Getenv(EnvFailStart); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
	if gate := os.Getenv(EnvStartGate); gate != "" {
		for {
			if _, err := os.Stat(gate); err == nil {
				break
			}
			select {
			case <-time.After(10 * time.Millisecond):
			case <-ctx.Done():
				return nil
			}
		}
	}
	if v := os.Getenv(EnvStartDelay); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", EnvStartDelay, err)
		}
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			return nil
		}
	}
	opts, err := OptionsFromEnv()
	if err != nil {
		return err
	}
	err = NewServer(opts).Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func appendPID(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("opening pid file: %w", err)
	}
	_, err = fmt.Fprintf(f, "%d\n", os.Getpid())
	return errors.Join(err, f.Close())
}

// ReadPIDs returns the PIDs appended to a pid file (see EnvPIDFile), in order.
// A missing file means none.
func ReadPIDs(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("pid file %s: %w", path, err)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// Handler serves one test server over HTTP: Streamable HTTP at /mcp and
// legacy SSE at /sse. Every session shares the same *mcp.Server.
func Handler(opts *Options) http.Handler {
	srv := NewServer(opts)
	get := func(*http.Request) *mcp.Server { return srv }
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(get, nil))
	mux.Handle("/sse", mcp.NewSSEHandler(get, nil))
	return mux
}

// ServeHTTP listens on addr (e.g. "127.0.0.1:0") and serves Handler until
// ctx is done. If ready is non-nil it is called with the base URL
// ("http://host:port") once the listener is open.
func ServeHTTP(ctx context.Context, addr string, opts *Options, ready func(baseURL string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: Handler(opts)}
	if ready != nil {
		ready("http://" + ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case <-ctx.Done():
		_ = hs.Close()
		<-errc
		return nil
	case err := <-errc:
		return err
	}
}

// Command returns the command line that re-runs the current binary (a test
// binary whose TestMain calls testmain.Run) as the stdio test server, and the
// environment entry that selects it.
func Command() (command string, args []string, env map[string]string) {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exe, nil, map[string]string{EnvServe: "stdio"}
}

// Server returns a stdio registry.Server named name that runs the current
// test binary as the test server (see testmain.Run), with extra environment
// variables env (e.g. EnvPIDFile). Its Hash is derived from the command and
// environment, so equal arguments give equal hashes.
func Server(name string, env map[string]string) *registry.Server {
	cmd, args, base := Command()
	for k, v := range env {
		base[k] = v
	}
	return &registry.Server{
		Name:      name,
		Command:   cmd,
		Args:      args,
		Env:       base,
		Enabled:   true,
		Lifecycle: registry.LifecycleLazy,
		Hash:      Hash(cmd, args, base),
	}
}

// Hash is a stand-in identity hash for servers built by tests.
func Hash(command string, args []string, env map[string]string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q", command, args)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(h, " %q=%q", k, env[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
