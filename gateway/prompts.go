package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/gateway/surface"
	"github.com/mcpgw/mcpgw/gateway/transport"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// Prompts, resources and resource templates of every server are offered in
// every mode, prompts under gateway names as tools are, resources under
// their own URIs (rewritten only when two servers offer the same one). The
// SDK announces changes to each session with list_changed. One exception:
// a proxy-mode session of a client that makes tools of resources lists
// none (resourceListMiddleware).

// resourceListMiddleware answers resources/list with no resources for a
// proxy-mode session whose client makes a tool of each listed resource
// (pi-mcp-adapter does, from its cache, on every start after the first).
// Proxy mode promises the model one tool, and reaches resources through
// it (mcp({tool: "SERVER_read_NAME"})); such a client would offer one
// more tool per resource. Other clients list them as in every mode: they
// show resources to the person, not to the model. The resources stay
// offered: a read, subscription or completion by URI is answered as for
// any session.
func (ss *session) resourceListMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "resources/list" && ss.mode.Name() == ModeProxy && ss.namingOf(req).ResourcesAsTools() {
			return &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}, nil
		}
		return next(ctx, method, req)
	}
}

// syncPrompts brings the session's prompts, resources and templates in line
// with v. The caller holds ss.mu.
func (ss *session) syncPromptsLocked(v *registry.View) {
	syncOffered(ss.listing.prompts, v.Prompts,
		func(p *registry.Prompt) (string, any) { return p.Name, p.Def },
		func(gone []string) { ss.server.RemovePrompts(gone...) },
		func(name string, p *registry.Prompt) bool {
			ss.server.AddPrompt(p.Exposed(), ss.getPrompt(name))
			return true
		})
	syncOffered(ss.listing.resources, v.Resources,
		func(r *registry.Resource) (string, any) { return r.URI, r.Def },
		func(gone []string) { ss.server.RemoveResources(gone...) },
		func(uri string, r *registry.Resource) bool {
			ss.server.AddResource(r.Exposed(), ss.readResource)
			return true
		})
	syncOffered(ss.listing.templates, v.Templates,
		func(t *registry.Template) (string, any) { return t.URITemplate, t.Def },
		func(gone []string) { ss.server.RemoveResourceTemplates(gone...) },
		func(tmpl string, t *registry.Template) bool {
			if err := addTemplate(ss.server, t.Exposed(), ss.readTemplate(tmpl)); err != nil {
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
	if len(have) == 0 {
		// A new session's first sync: nothing to remove or compare, so
		// no map of what is wanted (a session offering 220 resources
		// made one of 22 KB).
		for _, x := range want {
			if k, _ := keyDef(x); add(k, x) {
				have[k] = x
			}
		}
		return
	}
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

// Every request below reaches its upstream through the dispatcher
// (dispatch.Forward): audited, whoever made it, and a resource read or a
// prompt get asked about where approveTools covers it, as the mcp tool's
// read of the same resource is.

func (ss *session) getPrompt(name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		in := clientRound(req, req.Params.InputResponses, req.Params.RequestState)
		return ss.promptGet(ctx, ss.View(), name, req.Params.Arguments, in)
	}
}

// clientRound is the round of protocol 2026-07-28's input_required
// exchange that req, a prompt get or a resource read, is: as for a tool
// (sdkToolCall), a client of that protocol answers the upstream's input
// requests itself, and retries its request with the answers and the
// upstream's requestState (SEP-2322); its capabilities go with it, so
// that the upstream asks for nothing the client did not declare. Nil for
// an older client, whose session is asked by request (elicitation,
// sampling, roots) as it declared it can be, and which gets an error
// naming what it did not declare.
func clientRound(req mcp.Request, responses mcp.InputResponseMap, state string) *upstream.InputRound {
	if sessionProtocol(req) < transport.FirstSessionless {
		return nil
	}
	return &upstream.InputRound{Responses: responses, State: state,
		Capabilities: req.GetParams().GetMeta()[mcp.MetaKeyClientCapabilities]}
}

// promptGet gets prompt name of v with args, through the dispatcher; in is
// the caller's round of the input_required exchange, if it answers input
// requests itself.
func (ss *session) promptGet(ctx context.Context, v *registry.View, name string, args map[string]string, in *upstream.InputRound) (*mcp.GetPromptResult, error) {
	raw, _ := json.Marshal(args)
	p, ok := v.Prompt(name)
	if !ok {
		ss.gw.calls.Refused(ss, dispatch.MethodGetPrompt, name, raw, "unknown")
		return nil, fmt.Errorf("unknown prompt %s", surface.Quote(name))
	}
	var res *mcp.GetPromptResult
	err := ss.gw.calls.Forward(ctx, &dispatch.Request{Caller: ss, Method: dispatch.MethodGetPrompt,
		Server: p.Server, Name: p.Original, Args: raw, Gate: v.PromptTool(p)},
		func(ctx context.Context, u *upstream.Upstream) (err error) {
			res, err = u.GetPrompt(ctx, p.Original, args, in)
			return err
		})
	return res, err
}

func (ss *session) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	v := ss.View()
	r, ok := v.Resource(req.Params.URI)
	if !ok {
		ss.gw.calls.Refused(ss, dispatch.MethodReadResource, req.Params.URI, nil, "unknown")
		return nil, resourceNotFound(req.Params.URI)
	}
	return ss.read(ctx, v, r.Server, r.Original, r.URI, r.Original, r.Def.Name, true, readRound(req))
}

// readRound is the input_required round a resources/read is (clientRound).
func readRound(req *mcp.ReadResourceRequest) *upstream.InputRound {
	return clientRound(req, req.Params.InputResponses, req.Params.RequestState)
}

func (ss *session) readTemplate(tmpl string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		v := ss.View()
		t, uri, ok := v.TemplateFor(tmpl, req.Params.URI)
		if !ok {
			ss.gw.calls.Refused(ss, dispatch.MethodReadResource, req.Params.URI, nil, "unknown")
			return nil, resourceNotFound(req.Params.URI)
		}
		return ss.read(ctx, v, t.Server, uri, req.Params.URI, t.Original, t.Def.Name, true, readRound(req))
	}
}

// read reads uri on server and reports its contents under gwURI. listed
// is what the server lists (the resource's URI or the template), name
// the resource's or template's name; gate says whether the read passes
// the approval gate (an app's UI resource, which its host reads to show
// a tool's result, does not); in is the caller's round of the
// input_required exchange, if it answers input requests itself (a result
// that asks for input is then returned as the upstream wrote it).
func (ss *session) read(ctx context.Context, v *registry.View, server, uri, gwURI, listed, name string, gate bool, in *upstream.InputRound) (*mcp.ReadResourceResult, error) {
	args, _ := json.Marshal(map[string]string{"uri": uri})
	r := &dispatch.Request{Caller: ss, Method: dispatch.MethodReadResource, Server: server, Name: listed, Args: args}
	if gate {
		r.Gate = v.ResourceTool(server, name, uri)
	}
	var res *mcp.ReadResourceResult
	err := ss.gw.calls.Forward(ctx, r, func(ctx context.Context, u *upstream.Upstream) (err error) {
		res, err = u.ReadResource(ctx, uri, in)
		return err
	})
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
	arg, _ := json.Marshal(params.Argument)
	switch ref.Type {
	case "ref/prompt":
		p, ok := v.Prompt(ref.Name)
		if !ok {
			ss.gw.calls.Refused(ss, dispatch.MethodComplete, ref.Name, arg, "unknown")
			return nil, fmt.Errorf("unknown prompt %s", surface.Quote(ref.Name))
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
			ss.gw.calls.Refused(ss, dispatch.MethodComplete, ref.URI, arg, "unknown")
			return nil, resourceNotFound(ref.URI)
		}
	default:
		return nil, fmt.Errorf("unknown reference type %s", surface.Quote(ref.Type))
	}
	name := r.Name
	if ref.Type == "ref/resource" {
		name = r.URI
	}
	var res *mcp.CompleteResult
	err := ss.gw.calls.Forward(ctx, &dispatch.Request{Caller: ss, Method: dispatch.MethodComplete, Server: server, Name: name, Args: arg},
		func(ctx context.Context, u *upstream.Upstream) (err error) {
			res, err = u.Complete(ctx, &params)
			return err
		})
	return res, err
}

// resourceNotFound is the SDK's error for a URI no server offers the
// caller (mcp.ResourceNotFoundError), its data the URI: at most
// maxEchoedURI bytes of it, so that a caller that sends a megabyte is not
// sent it back, and encoded as JSON (the SDK's Go quoting is not JSON for
// a control character or invalid UTF-8).
func resourceNotFound(uri string) error {
	msg := "Resource not found"
	if len(uri) > maxEchoedURI {
		msg += ": a URI of " + strconv.Itoa(len(uri)) + " bytes"
		uri = surface.Truncate(uri, maxEchoedURI)
	}
	return &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: msg, Data: uriData(uri)}
}

// uriData is the data of a resource-not-found error: {"uri": uri}.
func uriData(uri string) json.RawMessage {
	data, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{uri})
	return data
}

// maxEchoedURI is the longest URI an error gives back whole.
const maxEchoedURI = 1024
