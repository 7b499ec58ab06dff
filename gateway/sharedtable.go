package gateway

import (
	"sync"

	"github.com/mcpgw/mcpgw/registry"
)

// A session's tool table depends on its view of the catalogue, its mode,
// whether its client declared MCP Apps and its direct tools — and, in
// ToolSearch mode, on what it activated. Sessions alike in the first four
// that activated nothing list the same tools, so they share one table:
// sixty-four direct sessions over a 1,600-tool catalogue hold one map of
// 1,600 entries and one sorted list, not sixty-four of each (about 64 KB
// a session).

// tableKey is what a table without activations depends on.
type tableKey struct {
	v      *registry.View
	mode   registry.Mode
	ui     bool   // the client declared MCP Apps
	direct string // the direct tools, as given
}

// maxSharedTables bounds the tables kept: one per view, mode, client kind
// and direct-tools spec in use is a handful; past the bound (a client
// that gives each session its own spec) they are made again.
const maxSharedTables = 64

// sharedTables are the tables of the current catalogue's views, by key.
// Tables are immutable, so a session holds its own as long as it lists
// it, whatever becomes of the cache. mu is a leaf.
type sharedTables struct {
	mu   sync.Mutex
	base *registry.View // the catalogue's view the tables were made under
	m    map[tableKey]*toolTable
}

// get returns the table for key, made by build if there is none yet.
// base is the catalogue's current view: a new one (a reload, a server's
// tools listed) means new views, and the tables of the old ones go.
func (s *sharedTables) get(base *registry.View, key tableKey, build func() *toolTable) *toolTable {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.base != base || len(s.m) >= maxSharedTables {
		s.base, s.m = base, nil
	}
	if t, ok := s.m[key]; ok {
		return t
	}
	t := build()
	if s.m == nil {
		s.m = map[tableKey]*toolTable{}
	}
	s.m[key] = t
	return t
}
