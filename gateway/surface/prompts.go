package surface

import (
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/content"
	"github.com/mcpgw/mcpgw/registry"
)

// UnknownPrompt answers mcp({prompt}) for a prompt v does not have: the
// prompts whose names contain it (or whose original name it contains),
// and how to list them.
func UnknownPrompt(v *registry.View, name string) *mcp.CallToolResult {
	msg := "Unknown prompt " + Quote(name) + "."
	var names []string
	for _, q := range v.Prompts {
		if strings.Contains(q.Name, name) || strings.Contains(name, q.Original) {
			names = append(names, q.Name)
		}
	}
	if len(names) > 0 {
		msg += " Did you mean: " + strings.Join(names, ", ") + "?"
	}
	return Errorf("%s List prompts with mcp({prompts:true}).", msg)
}

// InvalidPromptArgs says a prompt's args are not an object.
func InvalidPromptArgs(name string, err error) *mcp.CallToolResult {
	return Errorf("Invalid args for prompt %s: %v (want an object of strings).", name, err)
}

// PromptFailed says getting a prompt failed, and why.
func PromptFailed(name string, err error) *mcp.CallToolResult {
	return Errorf("Getting prompt %s: %v", name, err)
}

// PromptMessages answers mcp({prompt, args}): the prompt's description,
// then its messages, each under its role; images kept, other content as
// the mcp tool renders it.
func PromptMessages(res *mcp.GetPromptResult) *mcp.CallToolResult {
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
