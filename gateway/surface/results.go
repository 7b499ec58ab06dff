package surface

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The answers of mcp({read}): a range of a result too big to show whole,
// saved for the session it was given to.

// NoSavedResults says the daemon saves no results to read.
func NoSavedResults() *mcp.CallToolResult {
	return Errorf("This daemon keeps no saved results.")
}

// NotSaved says the session has no saved result id: none was saved
// under it, it was removed, or it is another session's (which reads the
// same, so that IDs tell nothing).
func NotSaved(id string) *mcp.CallToolResult {
	return Errorf("No saved result %s in this session: saved results are kept for a while (settings.savedResultsMaxAge), then removed; a session reads only those it was given.", Quote(id))
}

// BinaryResult says saved result id is binary data, to read from its
// file in dir with a tool that handles its type.
func BinaryResult(id, dir string) *mcp.CallToolResult {
	return Errorf("%s is binary data: read the file %s/%s with a tool that handles its type.", id, dir, id)
}

// ReadFailed says reading saved result id failed, and why.
func ReadFailed(id string, err error) *mcp.CallToolResult {
	return Errorf("Reading %s: %v", id, err)
}

// ResultRange is data, the bytes of saved result id (size bytes in all)
// from offset, under a head that says which, and where to read on.
func ResultRange(id string, offset int, data []byte, size int64) *mcp.CallToolResult {
	head := fmt.Sprintf("[%s: bytes %d–%d of %d", id, offset, offset+len(data), size)
	if next := int64(offset + len(data)); next < size {
		head += fmt.Sprintf("; read on with mcp({read: %q, offset: %d})", id, next)
	}
	return Text(head + "]\n" + string(data))
}
