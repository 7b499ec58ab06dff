package gateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// TestProgressBeforeItsResult: a call that asks for progress gets every
// notification its stdio upstream sent before the result, in order, and
// then the result, on the shim's connection (one stream: what is written
// first is read first). The upstream sends its four at once with its
// result, as a tool that reports progress and returns does: the race the
// result's wait is for.
func TestProgressBeforeItsResult(t *testing.T) {
	t.Parallel()
	cfg := &registry.Config{Servers: map[string]*registry.Server{"a": fakeupstream.Server("a", nil)},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: registry.ModeDirect, DiscoveryTimeout: 2 * waitBound}}
	gw := New(cfg, &Options{NoBootstrap: true})
	gw.Start()
	defer gw.Close()
	connectNow(t, gw, "a")

	write, br := dialShim(t, gw)
	// until sends line and returns what comes back up to the answer with
	// ID id, that answer's text last.
	until := func(line string, id int) []string {
		t.Helper()
		write(line)
		var got []string
		for {
			data, err := br.ReadBytes('\n')
			if err != nil {
				t.Fatalf("after %s: %v", line, err)
			}
			var m struct {
				ID     *int
				Method string
				Params struct {
					ProgressToken string
					Progress      float64
				}
				Result *struct{ Content []struct{ Text string } }
			}
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			switch {
			case m.Method == "notifications/progress":
				got = append(got, fmt.Sprintf("%s %v", m.Params.ProgressToken, m.Params.Progress))
			case m.ID != nil && *m.ID == id:
				if m.Result != nil && len(m.Result.Content) > 0 {
					return append(got, m.Result.Content[0].Text)
				}
				return append(got, string(data))
			}
		}
	}
	until(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, 0)
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range 20 {
		got := until(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"a_sleep","arguments":{"ms":0},"_meta":{"progressToken":"p%d"}}}`, 10+i, i), 10+i)
		want := []string{fmt.Sprintf("p%d 1", i), fmt.Sprintf("p%d 2", i), fmt.Sprintf("p%d 3", i), fmt.Sprintf("p%d 4", i), "slept 0 ms"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("call %d: the connection carried\n%s\nwant\n%s", i, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
