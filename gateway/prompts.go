package gateway

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// Prompts, resources and resource templates of every server are offered in
// every mode, prompts under gateway names as tools are, resources under
// their own URIs (rewritten only when two servers offer the same one). The
// SDK announces changes to each session with list_changed.

// syncPrompts brings the session's prompts, resources and templates in line
// with v. The caller holds ss.mu.
func (ss *session) syncPromptsLocked(v *registry.View) {
	wantP := make(map[string]*registry.Prompt, len(v.Prompts))
	for _, p := range v.Prompts {
		wantP[p.Name] = p
	}
	var goneP []string
	for name := range ss.prompts {
		if _, ok := wantP[name]; !ok {
			goneP = append(goneP, name)
			delete(ss.prompts, name)
		}
	}
	if len(goneP) > 0 {
		ss.server.RemovePrompts(goneP...)
	}
	for name, p := range wantP {
		if old, ok := ss.prompts[name]; ok && old.Def == p.Def {
			continue
		}
		def := *p.Def
		def.Name = name
		ss.server.AddPrompt(&def, ss.getPrompt(name))
		ss.prompts[name] = p
	}

	wantR := make(map[string]*registry.Resource, len(v.Resources))
	for _, r := range v.Resources {
		wantR[r.URI] = r
	}
	var goneR []string
	for uri := range ss.resources {
		if _, ok := wantR[uri]; !ok {
			goneR = append(goneR, uri)
			delete(ss.resources, uri)
		}
	}
	if len(goneR) > 0 {
		ss.server.RemoveResources(goneR...)
	}
	for uri, r := range wantR {
		if old, ok := ss.resources[uri]; ok && old.Def == r.Def {
			continue
		}
		def := *r.Def
		def.URI = uri
		ss.server.AddResource(&def, ss.readResource)
		ss.resources[uri] = r
	}

	wantT := make(map[string]*registry.Template, len(v.Templates))
	for _, t := range v.Templates {
		wantT[t.URITemplate] = t
	}
	var goneT []string
	for tmpl := range ss.templates {
		if _, ok := wantT[tmpl]; !ok {
			goneT = append(goneT, tmpl)
			delete(ss.templates, tmpl)
		}
	}
	if len(goneT) > 0 {
		ss.server.RemoveResourceTemplates(goneT...)
	}
	for tmpl, t := range wantT {
		if old, ok := ss.templates[tmpl]; ok && old.Def == t.Def {
			continue
		}
		def := *t.Def
		def.URITemplate = tmpl
		if err := addTemplate(ss.server, &def, ss.readTemplate(tmpl)); err != nil {
			ss.gw.log.Warn("resource template not offered", "server", t.Server, "template", t.Original, "err", err)
			continue
		}
		ss.templates[tmpl] = t
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

// upstreamFor returns the upstream of server name in v, refusing servers
// that may not run.
func (ss *session) upstreamFor(v *registry.View, name string) (*registry.Server, error) {
	sv, ok := v.Server(name)
	if !ok {
		return nil, fmt.Errorf("server %q is no longer configured", name)
	}
	srv := sv.Server
	switch {
	case srv.Untrusted:
		return nil, fmt.Errorf("server %q comes from %s, in a project you have not trusted; run `mcpgw trust DIR` on the project directory to allow it", srv.Name, srv.Source)
	case !srv.Enabled:
		return nil, fmt.Errorf("server %q is disabled in %s", srv.Name, srv.Source)
	}
	return srv, nil
}

func (ss *session) getPrompt(name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		v := ss.view()
		p, ok := v.Prompt(name)
		if !ok {
			return nil, fmt.Errorf("unknown prompt %q", name)
		}
		srv, err := ss.upstreamFor(v, p.Server)
		if err != nil {
			return nil, err
		}
		return ss.gw.pool.Upstream(srv).GetPrompt(ctx, p.Original, req.Params.Arguments)
	}
}

func (ss *session) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	v := ss.view()
	r, ok := v.Resource(req.Params.URI)
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	return ss.read(ctx, v, r.Server, r.Original, r.URI)
}

func (ss *session) readTemplate(tmpl string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		v := ss.view()
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
	res, err := ss.gw.pool.Upstream(srv).ReadResource(ctx, uri)
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
	v := ss.view()
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
	return ss.gw.pool.Upstream(srv).Complete(ctx, &params)
}
