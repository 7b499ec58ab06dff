package gateway

import (
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/registry"
)

// paramsLine lists a tool's parameters on one line: "owner*, repo*, page".
func paramsLine(t *registry.Tool) string {
	m := registry.SchemaMap(t.Def.InputSchema)
	props, _ := m["properties"].(map[string]any)
	req := map[string]bool{}
	if list, ok := m["required"].([]any); ok {
		for _, r := range list {
			if s, ok := r.(string); ok {
				req[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		if req[n] {
			n += "*"
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
