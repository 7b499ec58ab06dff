package gateway

import (
	"runtime"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// Sessions that list the same tools share one table; a session whose list
// is its own — another mode, other direct tools, ToolSearch activations —
// gets its own, and what one session activated never shows on another's
// list.
func TestSessionsShareTheirToolTable(t *testing.T) {
	t.Parallel()
	gw := bigDirectHub(t, 20)
	open := func(opts SessionOptions) *session {
		ss := gw.newSession(opts, nil, false)
		t.Cleanup(ss.cancel)
		ss.syncTools(ss.View())
		return ss
	}
	names := func(ss *session) []string {
		var out []string
		for _, d := range ss.tools.Load().list {
			out = append(out, d.Name)
		}
		return out
	}

	d1, d2 := open(SessionOptions{}), open(SessionOptions{})
	if d1.tools.Load() != d2.tools.Load() {
		t.Error("two direct sessions alike do not share their table")
	}
	if n := len(names(d1)); n != 20 {
		t.Errorf("a direct session lists %d tools, want 20", n)
	}
	few := open(SessionOptions{Mode: ModeProxy, DirectTools: "big/tool_0003"})
	if got, want := names(few), []string{"big_tool_0003", "mcp"}; !slices.Equal(got, want) {
		t.Errorf("a proxy session with one direct tool lists %v, want %v", got, want)
	}
	if few.tools.Load() == open(SessionOptions{Mode: ModeProxy}).tools.Load() {
		t.Error("sessions with different direct tools share a table")
	}

	s1, s2 := open(SessionOptions{Mode: ModeToolSearch}), open(SessionOptions{Mode: ModeToolSearch})
	if s1.tools.Load() != s2.tools.Load() {
		t.Error("two ToolSearch sessions that activated nothing do not share their table")
	}
	v := s1.View()
	tool, ok := v.Lookup("big_tool_0007")
	if !ok {
		t.Fatal("no big_tool_0007 in the catalogue")
	}
	s1.activate([]*registry.Tool{tool}, v)
	if got := names(s1); !slices.Contains(got, "big_tool_0007") {
		t.Errorf("the session that activated big_tool_0007 lists %v", got)
	}
	if got := names(s2); slices.Contains(got, "big_tool_0007") {
		t.Errorf("a session that activated nothing lists another's activation: %v", got)
	}
	if s3 := open(SessionOptions{Mode: ModeToolSearch}); s3.tools.Load() != s2.tools.Load() || slices.Contains(names(s3), "big_tool_0007") {
		t.Errorf("a new ToolSearch session lists %v, not the shared table without activations", names(s3))
	}

	// Each session's own tools answer for that session.
	res, err := few.tools.Load().own["mcp"](few, t.Context(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "mcp", Arguments: []byte(`{"tool":"big_tool_0003"}`)}})
	if err != nil || res == nil {
		t.Fatalf("the mcp tool of a session with a shared table: %v, %v", res, err)
	}
}

// BenchmarkDirectSessionsHeld measures the heap a direct-mode session over
// 1,600 tools holds while it is open, 20 sessions at once.
func BenchmarkDirectSessionsHeld(b *testing.B) {
	gw := bigDirectHub(b, 1600)
	const sessions = 20
	var held int64
	for b.Loop() {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := int64(ms.HeapAlloc)
		open := make([]*session, 0, sessions)
		for range sessions {
			ss := gw.newSession(SessionOptions{}, nil, false)
			ss.syncTools(ss.View())
			open = append(open, ss)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		held += int64(ms.HeapAlloc) - before
		for _, ss := range open {
			ss.cancel()
		}
	}
	b.ReportMetric(float64(held)/float64(b.N)/sessions, "heldB/session")
}
