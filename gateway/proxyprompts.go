package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/registry"
)

// getPromptText answers mcp({prompt, args}): the prompt's messages, each
// under its role, images kept, other content as text.
func (ss *session) getPromptText(ctx context.Context, v *registry.View, name string, rawArgs json.RawMessage) *mcp.CallToolResult {
	p, ok := v.Prompt(name)
	if !ok {
		msg := fmt.Sprintf("Unknown prompt %q.", name)
		var names []string
		for _, q := range v.Prompts {
			if strings.Contains(q.Name, name) || strings.Contains(name, q.Original) {
				names = append(names, q.Name)
			}
		}
		if len(names) > 0 {
			msg += " Did you mean: " + strings.Join(names, ", ") + "?"
		}
		return surface.Errorf("%s List prompts with mcp({prompts:true}).", msg)
	}
	args := map[string]string{}
	if len(rawArgs) > 0 && !surface.IsEmptyJSON(rawArgs) {
		var raw map[string]any
		if err := json.Unmarshal(rawArgs, &raw); err != nil {
			return surface.Errorf("Invalid args for prompt %s: %v (want an object of strings).", name, err)
		}
		for k, val := range raw {
			if s, ok := val.(string); ok {
				args[k] = s
			} else {
				data, _ := json.Marshal(val)
				args[k] = string(data)
			}
		}
	}
	res, err := ss.getPrompt(p.Name)(ctx, &mcp.GetPromptRequest{Params: &mcp.GetPromptParams{Name: p.Name, Arguments: args}})
	if err != nil {
		return surface.Errorf("Getting prompt %s: %v", name, err)
	}
	out := &mcp.CallToolResult{}
	if res.Description != "" {
		out.Content = append(out.Content, &mcp.TextContent{Text: res.Description})
	}
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		c := content.ForModelContent(m.Content)
		if t, ok := c.(*mcp.TextContent); ok {
			c = &mcp.TextContent{Text: fmt.Sprintf("[%s] %s", m.Role, t.Text)}
		} else {
			out.Content = append(out.Content, &mcp.TextContent{Text: fmt.Sprintf("[%s]", m.Role)})
		}
		out.Content = append(out.Content, c)
	}
	if len(out.Content) == 0 {
		out.Content = []mcp.Content{&mcp.TextContent{Text: "(the prompt has no messages)"}}
	}
	return out
}
