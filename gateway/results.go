package gateway

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/spill"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
)

// Results too big for the model are saved whole (gateway/spill) rather
// than thrown away: the cut answer says where, and mcp({read}) reads on.

// saveResult is the content.Saver of results: nil when they are not kept.
// The age and size limits are the daemon's settings as they are now.
func (s *Server) saveResult(data []byte, mimeType string) (string, string, error) {
	st := s.catalog.View().Config.Settings
	s.results.SetLimits(st.SavedResultsMaxAge, st.SavedResultsMaxBytes)
	saved, err := s.results.Save(data, mimeType)
	if err != nil {
		s.log.Warn("saving a large result", "err", err)
		return "", "", err
	}
	return saved.ID, saved.Path, nil
}

// readResult is mcp({read: id, offset, limit}): a range of a saved
// result, at most the output limit, saying where the next one starts.
func (s *Server) readResult(v *registry.View, id string, offset, limit int) *mcp.CallToolResult {
	if s.results == nil {
		return surface.Errorf("This daemon keeps no saved results.")
	}
	if !strings.HasSuffix(id, ".txt") && !strings.HasSuffix(id, ".json") {
		if strings.HasPrefix(id, "r-") && !strings.Contains(id, "/") {
			return surface.Errorf("%s is binary data: read the file %s/%s with a tool that handles its type.", id, s.results.Dir(), id)
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
		return surface.Errorf("No saved result %q: saved results are kept for a while (settings.savedResultsMaxAge), then removed.", id)
	case err != nil:
		return surface.Errorf("Reading %s: %v", id, err)
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
	head := fmt.Sprintf("[%s: bytes %d–%d of %d", id, offset, offset+len(data), size)
	if next := int64(offset + len(data)); next < size {
		head += fmt.Sprintf("; read on with mcp({read: %q, offset: %d})", id, next)
	}
	return surface.Text(head + "]\n" + string(data))
}
