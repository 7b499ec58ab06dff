package gateway

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/cachefile"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/fakeupstream"
)

// A cache entry written by another program can hold a tool the SDK refuses
// to serve (here an x-mcp-header that is not a header name, and a null
// entry). Such tools are skipped; the rest of the server's tools are
// offered, and the daemon keeps running.
func TestCachedToolTheSDKRefusesIsSkipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := fakeupstream.Server("alpha", nil)
	cfg := &registry.Config{Servers: map[string]*registry.Server{"alpha": srv},
		Settings: registry.Settings{ToolPrefix: registry.PrefixServer, Mode: ModeDirect}}
	path := filepath.Join(dir, "mcp-cache.json")
	doc := `{"version":1,"servers":{"alpha":{"configHash":"` + srv.Hash + `","cachedAt":` +
		strconv.FormatInt(time.Now().UnixMilli(), 10) + `,"resources":[],"tools":[
		{"name":"good","description":"Fine.","inputSchema":{"type":"object"}},
		null,
		{"name":"bad","description":"Header with a space.","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"bad header"}}}},
		{"name":"worse","inputSchema":{"type":"object","properties":{"n":{"type":"object","x-mcp-header":"X-N"}}}}
	]}}}`
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := New(cfg, &Options{NoBootstrap: true, Cache: registry.NewListingCache(cachefile.Open(path, nil))})
	t.Cleanup(func() { gw.Close() })
	gw.Start()

	sv, _ := gw.Catalog().View().Server("alpha")
	if sv.Listing == nil || len(sv.Listing.Rejected) != 2 {
		t.Fatalf("listing = %+v, want 2 rejected tools (the null entry is dropped by the cache reader)", sv.Listing)
	}
	var rejected []string
	for _, r := range sv.Listing.Rejected {
		rejected = append(rejected, r.Name+": "+r.Err.Error())
	}
	joined := strings.Join(rejected, "\n")
	for _, want := range []string{"bad: refused by the MCP SDK", "worse: refused by the MCP SDK"} {
		if !strings.Contains(joined, want) {
			t.Errorf("rejections %q lack %q", joined, want)
		}
	}
	c := connect(t, gw, SessionOptions{})
	if got := c.tools(t); !slices.Equal(got, []string{"alpha_good"}) {
		t.Fatalf("direct session lists %v, want [alpha_good]", got)
	}
}
