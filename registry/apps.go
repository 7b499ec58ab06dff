package registry

import (
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Apps (the io.modelcontextprotocol/ui extension): a tool names an
// HTML resource (a ui:// URI) the host renders for it, in _meta.ui
// (resourceUri, visibility). The catalogue keeps those references true
// across servers: a ui:// resource is readable by URI whether or not its
// server lists it, and when two servers use the same URI the second's is
// renamed (gatewayURI) in the resource and in the tool's _meta alike.

// The extension's name and the MIME type of its resources.
const (
	UIExtension = "io.modelcontextprotocol/ui"
	UIMimeType  = "text/html;profile=mcp-app"
)

// uiMeta returns a tool's UI resource URI and visibility ("" and nil for
// a tool without a UI). The older flat key "ui/resourceUri" counts too.
func uiMeta(def *mcp.Tool) (uri string, visibility []string, ok bool) {
	if def == nil || def.Meta == nil {
		return "", nil, false
	}
	if ui, isMap := def.Meta["ui"].(map[string]any); isMap {
		uri, _ = ui["resourceUri"].(string)
		if vis, isList := ui["visibility"].([]any); isList {
			for _, x := range vis {
				if s, isStr := x.(string); isStr {
					visibility = append(visibility, s)
				}
			}
		}
	}
	if uri == "" {
		uri, _ = def.Meta["ui/resourceUri"].(string)
	}
	return uri, visibility, uri != "" || visibility != nil
}

// AppOnly reports whether the tool is for its app alone: its visibility
// is given and leaves out the model. Such a tool is never shown to a model
// (search, describe, the mcp tool, ToolSearch) and is listed only to
// clients that declared the extension.
func (t *Tool) AppOnly() bool {
	_, vis, ok := uiMeta(t.Def)
	return ok && vis != nil && !slices.Contains(vis, "model")
}

// linkUI makes every tool's ui:// resource readable under the URI the
// gateway offers it by, and rewrites the tool's reference where that is
// not the upstream's own.
func (v *View) linkUI() {
	for _, sv := range v.Servers {
		for _, t := range sv.Tools {
			uri, _, ok := uiMeta(t.Def)
			if !ok || uri == "" {
				continue
			}
			gw := v.uiResource(t.Server, uri)
			if gw == uri {
				continue
			}
			def := *t.Def
			def.Meta = maps.Clone(t.Def.Meta)
			if ui, isMap := def.Meta["ui"].(map[string]any); isMap {
				ui = maps.Clone(ui)
				ui["resourceUri"] = gw
				def.Meta["ui"] = ui
			}
			if _, flat := def.Meta["ui/resourceUri"]; flat {
				def.Meta["ui/resourceUri"] = gw
			}
			t.Def = &def
		}
	}
}

// uiResource returns the gateway URI of server's resource uri, adding a
// readable, unlisted resource for one the server does not list.
func (v *View) uiResource(server, uri string) string {
	for gw, r := range v.byURI { // listed resources and those added here
		if r.Server == server && r.Original == uri {
			return gw
		}
	}
	gw := uri
	if _, taken := v.byURI[gw]; taken {
		gw = gatewayURI(server, uri)
	}
	v.byURI[gw] = &Resource{URI: gw, Server: server, Original: uri, Unlisted: true,
		Def: &mcp.Resource{URI: gw, Name: uri, MIMEType: UIMimeType}}
	return gw
}
