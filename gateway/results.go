package gateway

import (
	"errors"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/spill"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
)

// Results too big for the model are saved whole (gateway/spill) rather
// than thrown away: the cut answer says where, and mcp({read}) reads on.

// A saved result is read through mcp({read}) only by the session it was
// given to (its ID is in a cut result's text, which the model, a script
// or a log may pass on; the file is the user's to read, by its path, as
// `mcpgw call` users do). Which results a session was given is kept in
// memory: after a daemon restart, a resumed session reads its earlier
// results by their paths.

// maxOwnedResults bounds the saved results a session remembers being
// given; past it, the oldest are forgotten (mcp({read}) of them says
// they are gone, as for a removed file).
const maxOwnedResults = 1024

// ownedResults are the IDs of the saved results given to one session.
type ownedResults struct {
	mu    sync.Mutex
	ids   map[string]bool
	order []string // oldest first
}

func (o *ownedResults) add(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ids == nil {
		o.ids = make(map[string]bool)
	}
	if o.ids[id] {
		return
	}
	if len(o.order) == maxOwnedResults {
		delete(o.ids, o.order[0])
		o.order = append(o.order[:0], o.order[1:]...)
	}
	o.ids[id] = true
	o.order = append(o.order, id)
}

func (o *ownedResults) has(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.ids[id]
}

// saverFor is the dispatcher's SaverFor: the calling session's saver.
func saverFor(c dispatch.Caller) content.Saver {
	if ss, ok := c.(*session); ok {
		return ss.saver
	}
	return nil
}

// saveResult is the session's content.Saver: the result is saved, and
// the session may read it.
func (ss *session) saveResult(data []byte, mimeType string) (string, string, error) {
	id, path, err := ss.gw.saveResult(data, mimeType)
	if err == nil {
		ss.results.add(id)
	}
	return id, path, err
}

// saveResult saves a result too big to show. The age and size limits are
// the daemon's settings as they are now.
func (s *Hub) saveResult(data []byte, mimeType string) (string, string, error) {
	st := s.catalog.View().Config.Settings
	s.results.SetLimits(st.SavedResultsMaxAge, st.SavedResultsMaxBytes)
	saved, err := s.results.Save(data, mimeType)
	if err != nil {
		s.log.Warn("saving a large result", "err", err)
		return "", "", err
	}
	return saved.ID, saved.Path, nil
}

// readResult is mcp({read: id, offset, limit}) in the session ss: a
// range of a saved result ss was given, at most the output limit, saying
// where the next one starts.
func (s *Hub) readResult(ss *session, id string, offset, limit int) *mcp.CallToolResult {
	if s.results == nil {
		return surface.NoSavedResults()
	}
	if !ss.results.has(id) {
		// Another session's result reads as one that does not exist.
		return surface.NotSaved(id)
	}
	v := ss.View()
	if !strings.HasSuffix(id, ".txt") && !strings.HasSuffix(id, ".json") {
		if strings.HasPrefix(id, "r-") && !strings.Contains(id, "/") {
			return surface.BinaryResult(id, s.results.Dir())
		}
	}
	most := surface.OutputLimit(v.Config.Settings.MaxOutputBytes)
	if most <= 0 {
		most = registry.DefaultMaxOutputBytes
	}
	if limit <= 0 || limit > most {
		limit = most
	}
	data, size, err := s.results.Read(id, int64(offset), int64(limit))
	switch {
	case errors.Is(err, spill.ErrNotFound):
		return surface.NotSaved(id)
	case err != nil:
		return surface.ReadFailed(id, err)
	}
	// Whole characters only: a range that ends inside one stops before it.
	if int64(offset+len(data)) < size {
		for range utf8.UTFMax - 1 {
			if r, n := utf8.DecodeLastRune(data); len(data) == 0 || r != utf8.RuneError || n > 1 {
				break
			}
			data = data[:len(data)-1]
		}
	}
	return surface.ResultRange(id, offset, data, size)
}
