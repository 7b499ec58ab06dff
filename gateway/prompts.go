package gateway

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/registry"
)

// Prompts, resources and resource templates of every server are offered in
// every mode, prompts under gateway names as tools are, resources under
// their own URIs (rewritten only when two servers offer the same one). The
// SDK announces changes to each session with list_changed.

// syncPrompts brings the session's prompts, resources and templates in line
// with v. The caller holds ss.mu.
func (ss *session) syncPromptsLocked(v *registry.View) {
	syncOffered(ss.prompts, v.Prompts,
		func(p *registry.Prompt) (string, any) { return p.Name, p.Def },
		func(gone []string) { ss.server.RemovePrompts(gone...) },
		func(name string, p *registry.Prompt) bool {
			def := *p.Def
			def.Name = name
			ss.server.AddPrompt(&def, ss.getPrompt(name))
			return true
		})
	syncOffered(ss.resources, v.Resources,
		func(r *registry.Resource) (string, any) { return r.URI, r.Def },
		func(gone []string) { ss.server.RemoveResources(gone...) },
		func(uri string, r *registry.Resource) bool {
			def := *r.Def
			def.URI = uri
			ss.server.AddResource(&def, ss.readResource)
			return true
		})
	syncOffered(ss.templates, v.Templates,
		func(t *registry.Template) (string, any) { return t.URITemplate, t.Def },
		func(gone []string) { ss.server.RemoveResourceTemplates(gone...) },
		func(tmpl string, t *registry.Template) bool {
			def := *t.Def
			def.URITemplate = tmpl
			if err := addTemplate(ss.server, &def, ss.readTemplate(tmpl)); err != nil {
				ss.gw.log.Warn("resource template not offered", "server", t.Server, "template", t.Original, "err", err)
				return false
			}
			return true
		})
}

// syncOffered makes have (what a session's Server offers, by key) match
// want: entries no longer wanted are removed in one call, new or changed
// ones (another definition) added; add reports whether the Server took it.
func syncOffered[T any](have map[string]T, want []T, keyDef func(T) (string, any),
	remove func([]string), add func(string, T) bool) {
	wanted := make(map[string]T, len(want))
	for _, x := range want {
		k, _ := keyDef(x)
		wanted[k] = x
	}
	var gone []string
	for k := range have {
		if _, ok := wanted[k]; !ok {
			gone = append(gone, k)
			delete(have, k)
		}
	}
	if len(gone) > 0 {
		remove(gone)
	}
	for k, x := range wanted {
		if old, ok := have[k]; ok {
			_, oldDef := keyDef(old)
			if _, def := keyDef(x); oldDef == def {
				continue
			}
		}
		if add(k, x) {
			have[k] = x
		}
	}
}

// addTemplate adds a template, which the SDK refuses (panics on) when its
// URI template does not parse.
func addTemplate(s *mcp.Server, t *mcp.ResourceTemplate, h mcp.ResourceHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("refused by the MCP SDK: %v", r)
		}
	}()
	s.AddResourceTemplate(t, h)
	return nil
}

// upstreamFor returns the server called name in v, refusing one that may
// not run (untrusted, disabled) with the reason a person needs.
func (ss *session) upstreamFor(v *registry.View, name string) (*registry.Server, error) {
	return dispatch.UsableServer(v, name)
}

func (ss *session) getPrompt(name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		v := ss.View()
		p, ok := v.Prompt(name)
		if !ok {
			return nil, fmt.Errorf("unknown prompt %q", name)
		}
		srv, err := ss.upstreamFor(v, p.Server)
		if err != nil {
			return nil, err
		}
		return ss.gw.upstreamFor(ss, srv).GetPrompt(ctx, p.Original, req.Params.Arguments)
	}
}

func (ss *session) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	v := ss.View()
	r, ok := v.Resource(req.Params.URI)
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	return ss.read(ctx, v, r.Server, r.Original, r.URI)
}

func (ss *session) readTemplate(tmpl string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		v := ss.View()
		t, uri, ok := v.TemplateFor(tmpl, req.Params.URI)
		if !ok {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		return ss.read(ctx, v, t.Server, uri, req.Params.URI)
	}
}

// read reads uri on server and reports its contents under gwURI.
func (ss *session) read(ctx context.Context, v *registry.View, server, uri, gwURI string) (*mcp.ReadResourceResult, error) {
	srv, err := ss.upstreamFor(v, server)
	if err != nil {
		return nil, err
	}
	res, err := ss.gw.upstreamFor(ss, srv).ReadResource(ctx, uri)
	if err != nil {
		return nil, err
	}
	if uri != gwURI {
		for _, c := range res.Contents {
			if c != nil && c.URI == uri {
				c.URI = gwURI
			}
		}
	}
	return res, nil
}

// complete forwards completion/complete to the server whose prompt or
// resource template the reference names.
func (ss *session) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	v := ss.View()
	ref := req.Params.Ref
	if ref == nil {
		return nil, fmt.Errorf("completion without a reference")
	}
	params := *req.Params
	r := *ref
	params.Ref = &r
	var server string
	switch ref.Type {
	case "ref/prompt":
		p, ok := v.Prompt(ref.Name)
		if !ok {
			return nil, fmt.Errorf("unknown prompt %q", ref.Name)
		}
		server, r.Name = p.Server, p.Original
	case "ref/resource":
		found := false
		for _, t := range v.Templates {
			if t.URITemplate == ref.URI {
				server, r.URI, found = t.Server, t.Original, true
				break
			}
		}
		if !found {
			if res, ok := v.Resource(ref.URI); ok {
				server, r.URI, found = res.Server, res.Original, true
			}
		}
		if !found {
			return nil, mcp.ResourceNotFoundError(ref.URI)
		}
	default:
		return nil, fmt.Errorf("unknown reference type %q", ref.Type)
	}
	srv, err := ss.upstreamFor(v, server)
	if err != nil {
		return nil, err
	}
	return ss.gw.upstreamFor(ss, srv).Complete(ctx, &params)
}
