package registry

import (
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompt is one upstream prompt as the gateway offers it: named like a tool
// (<server>_<prompt>, following toolPrefix).
type Prompt struct {
	Name     string // gateway name, unique in a View
	Server   string
	Original string // the prompt's name on the upstream
	Def      *mcp.Prompt

	exposed exposed[mcp.Prompt]
}

// Exposed is the prompt's definition as sessions offer it: the upstream's,
// under its gateway name. It is made once per catalogue view and shared
// by every session that offers the prompt; nothing may modify it.
func (p *Prompt) Exposed() *mcp.Prompt {
	return p.exposed.get(p.Def, p.Def.Name != p.Name, func(d *mcp.Prompt) { d.Name = p.Name })
}

// exposed is a definition as sessions offer it, made once: the upstream's
// own, or a copy renamed when the gateway offers it under another name.
type exposed[T any] struct {
	once sync.Once
	def  *T
}

func (e *exposed[T]) get(def *T, renamed bool, rename func(*T)) *T {
	e.once.Do(func() {
		e.def = def
		if renamed {
			c := *def
			rename(&c)
			e.def = &c
		}
	})
	return e.def
}

// Resource is one upstream resource as the gateway offers it. URI is the
// upstream's URI unless another server (earlier in name order) offers the
// same one; then it is rewritten (see gatewayURI) and mapped back on read.
type Resource struct {
	URI      string
	Server   string
	Original string // the upstream's URI
	Def      *mcp.Resource
	// Unlisted: a tool's UI resource its server does not list; readable,
	// not in View.Resources.
	Unlisted bool

	exposed exposed[mcp.Resource]
}

// Exposed is the resource's definition as sessions offer it, under its
// gateway URI; made once and shared as Prompt.Exposed is.
func (r *Resource) Exposed() *mcp.Resource {
	return r.exposed.get(r.Def, r.Def.URI != r.URI, func(d *mcp.Resource) { d.URI = r.URI })
}

// Template is one upstream resource template as the gateway offers it,
// under the same collision rule as Resource.
type Template struct {
	URITemplate string
	Server      string
	Original    string
	Def         *mcp.ResourceTemplate

	exposed exposed[mcp.ResourceTemplate]
}

// Exposed is the template's definition as sessions offer it, under its
// gateway URI template; made once and shared as Prompt.Exposed is.
func (t *Template) Exposed() *mcp.ResourceTemplate {
	return t.exposed.get(t.Def, t.Def.URITemplate != t.URITemplate, func(d *mcp.ResourceTemplate) { d.URITemplate = t.URITemplate })
}

// gatewayURI is the URI under which a server's resource whose URI another
// server already offers is exposed: unambiguous, and reversible.
func gatewayURI(server, uri string) string {
	return "mcpgw://" + url.PathEscape(server) + "/" + uri
}

// buildPromptsAndResources fills v's prompts, resources and templates from
// the enabled servers' listings. names lists the servers in order.
func (v *View) buildPromptsAndResources(names []string) {
	var reqs []NameRequest
	var pending []*Prompt
	seenURI := map[string]bool{}
	seenTmpl := map[string]bool{}
	v.byPrompt = map[string]*Prompt{}
	v.byURI = map[string]*Resource{}
	for _, name := range names {
		sv := v.byServer[name]
		srv := sv.Server
		if !srv.Enabled || sv.Listing == nil {
			continue
		}
		prefix := v.Config.Settings.PrefixOf(srv)
		for _, p := range sv.Listing.Prompts {
			if p == nil || p.Name == "" {
				continue
			}
			pending = append(pending, &Prompt{Server: name, Original: p.Name, Def: p})
			reqs = append(reqs, NameRequest{Server: name, Tool: p.Name, Prefix: prefix})
		}
		for _, r := range sv.Listing.Resources {
			if r == nil || r.URI == "" {
				continue
			}
			gw := r.URI
			if seenURI[gw] {
				gw = gatewayURI(name, r.URI)
			}
			seenURI[gw] = true
			res := &Resource{URI: gw, Server: name, Original: r.URI, Def: r}
			v.Resources = append(v.Resources, res)
			v.byURI[gw] = res
		}
		for _, t := range sv.Listing.Templates {
			if t == nil || t.URITemplate == "" {
				continue
			}
			gw := t.URITemplate
			if seenTmpl[gw] {
				gw = gatewayURI(name, t.URITemplate)
			}
			seenTmpl[gw] = true
			v.Templates = append(v.Templates, &Template{URITemplate: gw, Server: name, Original: t.URITemplate, Def: t})
		}
	}
	for i, n := range AssignNames(reqs) {
		pending[i].Name = n
		v.byPrompt[n] = pending[i]
	}
	v.Prompts = pending
}

// Prompt finds a prompt by gateway name, or by "server/prompt".
func (v *View) Prompt(name string) (*Prompt, bool) {
	if p, ok := v.byPrompt[name]; ok {
		return p, true
	}
	if srv, orig, ok := strings.Cut(name, "/"); ok {
		for _, p := range v.Prompts {
			if p.Server == srv && p.Original == orig {
				return p, true
			}
		}
	}
	return nil, false
}

// Resource finds a resource by the URI the gateway offers it under.
func (v *View) Resource(uri string) (*Resource, bool) {
	r, ok := v.byURI[uri]
	return r, ok
}

// TemplateFor returns the template a URI read through gateway template
// tmpl belongs to, and the URI to read on its upstream.
func (v *View) TemplateFor(tmpl, uri string) (*Template, string, bool) {
	for _, t := range v.Templates {
		if t.URITemplate != tmpl {
			continue
		}
		if t.URITemplate != t.Original {
			return t, strings.TrimPrefix(uri, "mcpgw://"+url.PathEscape(t.Server)+"/"), true
		}
		return t, uri, true
	}
	return nil, "", false
}

// PromptTool is getting prompt p as the approval gate sees it: a tool of
// the prompt's names, read-only (a prompt's messages change nothing), so
// approveTools true, or a glob naming the prompt, asks about it and
// "destructive" does not.
func (v *View) PromptTool(p *Prompt) *Tool {
	return &Tool{Name: p.Name, Server: p.Server, Original: p.Original, Def: &mcp.Tool{
		Name: p.Original, Description: p.Def.Description, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}}
}

// ResourceTool is reading uri (a resource's or one of a template's) on
// server as the approval gate sees it: the resource's read_ tool, the one
// the mcp tool calls to read it, so one rule and one grant hold for both
// ways to read it. name is the resource's or the template's name.
func (v *View) ResourceTool(server, name, uri string) *Tool {
	rname := ResourceToolName(name)
	if sv, ok := v.byServer[server]; ok {
		for _, t := range sv.Tools {
			if t.Resource != nil && t.Resource.URI == uri {
				return t
			}
		}
	}
	srv := v.Config.Servers[server]
	prefix := ""
	if srv != nil {
		prefix = v.Config.Settings.PrefixOf(srv)
	}
	r := &mcp.Resource{Name: name, URI: uri}
	return &Tool{Name: ToolName(prefix, server, rname), Server: server, Original: rname, Resource: r, Def: resourceTool(rname, r)}
}
