package surface

import (
	"strings"

	"github.com/mcpgw/mcpgw/registry"
)

// Servers' instructions (their initialize result's "instructions": how to
// use their tools) reach the model wherever it meets the server: all of
// them in a direct-mode session's initialize; a server's own with its
// tool list (mcp({server}), mcp({connect})); in toolsearch mode, with the
// tools ToolSearch activates, and ToolSearch's description names the
// servers that have some.

// Bounds: one server's instructions, and all of them in an initialize.
const (
	maxServerInstructions = 4 << 10
	maxAllInstructions    = 16 << 10
)

// Instructions returns sv's instructions, trimmed and bounded; "" when
// it has none (or it is disabled).
func Instructions(sv *registry.ServerView) string {
	if sv == nil || !sv.Server.Enabled || sv.Listing == nil {
		return ""
	}
	text := strings.TrimSpace(sv.Listing.Instructions)
	if len(text) > maxServerInstructions {
		text = Truncate(text, maxServerInstructions) + " [cut]"
	}
	return text
}

// WithInstructions lists the servers of v that have instructions, in
// v's order (by name).
func WithInstructions(v *registry.View) []string {
	var out []string
	for _, sv := range v.Servers {
		if Instructions(sv) != "" {
			out = append(out, sv.Server.Name)
		}
	}
	return out
}

// AllInstructions renders every server's instructions under its name, in
// a stable order, within maxAllInstructions; those that do not fit are
// named with where to read them.
func AllInstructions(v *registry.View) string {
	var b strings.Builder
	var left []string
	for _, sv := range v.Servers {
		text := Instructions(sv)
		if text == "" {
			continue
		}
		section := "## " + sv.Server.Name + "\n" + text + "\n\n"
		if b.Len()+len(section) > maxAllInstructions {
			left = append(left, sv.Server.Name)
			continue
		}
		b.WriteString(section)
	}
	if len(left) > 0 {
		b.WriteString("Instructions of " + strings.Join(left, ", ") + " did not fit here.\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// SessionInstructions is what a new session's initialize says, by mode.
func SessionInstructions(v *registry.View, mode registry.Mode) string {
	var head string
	switch mode {
	case registry.ModeToolSearch:
		head = "More tools than those listed are available: use ToolSearch to find and activate them."
	case registry.ModeDirect:
		if all := AllInstructions(v); all != "" {
			return "Instructions of the MCP servers behind this gateway, each under its name:\n\n" + all
		}
		return ""
	default:
		head = "Tools of many MCP servers are reachable through the `mcp` tool: search them, describe one, then call it."
	}
	if names := WithInstructions(v); len(names) > 0 {
		head += " Servers with usage instructions, shown with their tools: " + strings.Join(names, ", ") + "."
	}
	return head
}
