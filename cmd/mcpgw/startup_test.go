//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/cachefile"
	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/registry"
)

// warmCache writes a config of n stdio servers with toolsEach cached tools
// each, and a cache file valid for them.
func warmCache(t testing.TB, dir, bin string, n, toolsEach int) (config, cache string) {
	t.Helper()
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("srv%02d", i)] = map[string]any{
			"command": e2e.TestServerBin, "args": []string{"testserver"},
			"env": map[string]string{"MCPGW_TESTSERVER_INSTRUCTIONS": strconv.Itoa(i)},
		}
	}
	config = e2e.WriteConfig(t, dir, servers, nil)
	cfg, err := registry.Load(config, nil)
	if err != nil {
		t.Fatal(err)
	}
	cache = filepath.Join(dir, "cache.json")
	entries := map[string]*cachefile.Entry{}
	for name, srv := range cfg.Servers {
		var tools []*mcp.Tool
		for j := range toolsEach {
			tools = append(tools, &mcp.Tool{
				Name:        fmt.Sprintf("%s_action_%d", name, j),
				Description: fmt.Sprintf("Performs action %d on the %s service and returns the outcome as text.", j, name),
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{
					"target": map[string]any{"type": "string", "description": "What to act on"},
					"force":  map[string]any{"type": "boolean"},
				}, "required": []any{"target"}},
			})
		}
		entries[name] = &cachefile.Entry{ConfigHash: srv.Hash, Tools: tools, CachedAt: time.Now()}
	}
	if err := cachefile.Open(cache, nil).Put(entries); err != nil {
		t.Fatal(err)
	}
	return config, cache
}

func rssKB(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return -1
}

// startWarm starts a daemon with a warm cache of 50 servers and 2,000 tools
// and returns the time from exec to the first answer of mcp({}), that
// answer, and the daemon's PID.
func startWarm(t testing.TB) (elapsed time.Duration, text string, pid int) {
	bin := e2e.BuildMcpgw(t)
	dir := t.TempDir()
	config, cache := warmCache(t, dir, bin, 50, 40)
	port := e2e.FreePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)

	start := time.Now()
	cmd := exec.Command(bin, "serve", "--config", config, "--cache", cache, "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--socket", filepath.Join(dir, "run", "sock"), "--log-level", "warn")
	cmd.Env = append(os.Environ(), "HOME="+dir)
	p := e2e.StartProcess(t, cmd)

	ctx, cancel := context.WithTimeout(context.Background(), e2e.WaitLimit)
	defer cancel()
	for {
		client := mcp.NewClient(&mcp.Implementation{Name: "startup", Version: "1"}, nil)
		sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err == nil {
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{}})
			sess.Close()
			if err != nil {
				t.Fatal(err)
			}
			text = res.Content[0].(*mcp.TextContent).Text
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("daemon never answered: %v", err)
		}
		time.Sleep(2 * time.Millisecond) // bounded by ctx: the daemon is starting
	}
	return time.Since(start), text, p.Cmd.Process.Pid
}

// TestStartupWarmCache50x40: a daemon with a warm cache of 50 servers and
// 2,000 tools answers mcp({}) with all of them and starts no process.
func TestStartupWarmCache50x40(t *testing.T) {
	t.Parallel()
	_, text, pid := startWarm(t)
	if !strings.HasPrefix(text, "MCP: 0/50 servers, 2000 tools") {
		t.Fatalf("first status = %q", firstLine(text))
	}
	if kids := children(pid); len(kids) != 0 {
		t.Errorf("daemon with a warm cache runs child processes %v", kids)
	}
}

// BenchmarkStartupWarmCache50x40 reports the time from exec to the first
// answer of a daemon with a warm cache of 50 servers and 2,000 tools, and
// its RSS once start-up garbage has settled.
//
//	go test -run '^$' -bench StartupWarmCache -benchtime 5x ./cmd/mcpgw
func BenchmarkStartupWarmCache50x40(b *testing.B) {
	var total time.Duration
	var rss int
	for range b.N {
		elapsed, _, pid := startWarm(b)
		total += elapsed
		time.Sleep(200 * time.Millisecond) // let start-up garbage settle before reading RSS
		rss = rssKB(pid)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/first-answer")
	b.ReportMetric(float64(rss), "KiB-RSS")
}
