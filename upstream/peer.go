//lint:file-ignore SA1019 sampling and roots are deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; a gateway forwards them.

package upstream

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// A Peer answers the requests an upstream server makes of its client while
// it serves a call: sampling, elicitation and roots. The gateway's
// downstream sessions are peers. Each call carries its caller's (WithPeer),
// and a request from the upstream goes to the peer whose call caused it:
//
//   - on Streamable HTTP, the request travels on the response stream of the
//     call that caused it, which names the peer exactly;
//   - otherwise (stdio, legacy SSE, the standalone GET stream) it is the
//     only peer with a call in flight on that upstream;
//   - when several peers have calls in flight there, the request is
//     ambiguous: the upstream gets an error (its call goes on), never
//     another session's answer. A server with "isolation": "session" has an
//     upstream per session and is never ambiguous.
//
// roots/list with no single peer answers with the roots of every peer
// using the upstream (Options.Roots).
type Peer interface {
	// CreateMessage asks the peer's client to sample its model.
	CreateMessage(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	// Elicit asks the peer's user for input.
	Elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// ElicitationComplete tells the peer that a URL elicitation finished.
	ElicitationComplete(ctx context.Context, p *mcp.ElicitationCompleteParams)
	// Roots returns the peer's roots.
	Roots(ctx context.Context) ([]*mcp.Root, error)
}

type peerKey struct{}

type nameKey struct{}

// WithName returns ctx naming the configured server a request is made
// under. An upstream that serves several names (aliases of one identity)
// counts each request under the name it came by (Status.ByName).
func WithName(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, nameKey{}, name)
}

// nameFrom returns the name of ctx (WithName), or "".
func nameFrom(ctx context.Context) string {
	n, _ := ctx.Value(nameKey{}).(string)
	return n
}

// WithPeer returns ctx carrying p: the upstream calls made with it route
// the upstream's requests to p.
func WithPeer(ctx context.Context, p Peer) context.Context {
	return context.WithValue(ctx, peerKey{}, p)
}

// PeerContext is a context carrying Peer, as WithPeer's does, for a
// caller that makes it part of an allocation of its own (a fast call).
type PeerContext struct {
	context.Context
	Peer Peer
}

// Value implements context.Context.
func (c *PeerContext) Value(key any) any {
	if key == (peerKey{}) {
		return c.Peer
	}
	return c.Context.Value(key)
}

// PeerFrom returns the peer of ctx (WithPeer), or nil.
func PeerFrom(ctx context.Context) Peer {
	p, _ := ctx.Value(peerKey{}).(Peer)
	return p
}

// metaKeyPeer tags a request that arrived on the response stream of a call:
// the value is the peer's number (see Upstream.peerIDs). It is set by the
// HTTP transport (relatedStream) and removed before the request is
// forwarded.
const metaKeyPeer = "io.mcpgw/peer"

// inFlightPeer is a peer's count of calls in flight on one upstream, and
// the number its related-stream tag carries.
type inFlightPeer struct {
	calls int
	id    int64
}

// addPeer counts a call of p in flight.
func (u *Upstream) addPeer(p Peer) {
	u.peerMu.Lock()
	defer u.peerMu.Unlock()
	if u.peers == nil {
		u.peers = map[Peer]inFlightPeer{}
		u.peerIDs = map[int64]Peer{}
	}
	e, ok := u.peers[p]
	if !ok {
		u.lastPeerID++
		e.id = u.lastPeerID
		u.peerIDs[e.id] = p
	}
	e.calls++
	u.peers[p] = e // by value: a peer that comes and goes with each call costs no allocation
}

// removePeer ends a call counted by addPeer.
func (u *Upstream) removePeer(p Peer) {
	u.peerMu.Lock()
	defer u.peerMu.Unlock()
	e, ok := u.peers[p]
	if !ok {
		return
	}
	if e.calls--; e.calls <= 0 {
		delete(u.peers, p)
		delete(u.peerIDs, e.id)
	} else {
		u.peers[p] = e
	}
}

// peerTag is the related-stream tag of p's calls (0: none in flight).
func (u *Upstream) peerTag(p Peer) int64 {
	u.peerMu.Lock()
	defer u.peerMu.Unlock()
	return u.peers[p].id // 0 when none
}

// peerFor finds the peer a request of the upstream (method) is for: the
// caller of the call it is part of (a multi-round-trip call of protocol
// 2026-07-28 fulfils its input requests on the call's context), else the
// one its related stream names, else the only one with calls in flight.
func (u *Upstream) peerFor(ctx context.Context, meta mcp.Meta, method string) (Peer, error) {
	if p := PeerFrom(ctx); p != nil {
		return p, nil
	}
	u.peerMu.Lock()
	defer u.peerMu.Unlock()
	if id, ok := taggedPeer(meta); ok {
		if p := u.peerIDs[id]; p != nil {
			return p, nil
		}
	}
	switch len(u.peers) {
	case 1:
		for p := range u.peers {
			return p, nil
		}
	case 0:
		return nil, fmt.Errorf("mcpgw: no session has a call in flight on server %q; %s is answered only for the session whose call caused it", u.name(), method)
	}
	return nil, fmt.Errorf("mcpgw: %d sessions have calls in flight on server %q and the %s request does not say which one it is for; set \"isolation\": \"session\" on the server for an instance per session", len(u.peers), u.name(), method)
}

func (u *Upstream) name() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.srv.Name
}

// taggedPeer reads and removes the related-stream tag of meta.
func taggedPeer(meta mcp.Meta) (int64, bool) {
	v, ok := meta[metaKeyPeer]
	if !ok {
		return 0, false
	}
	delete(meta, metaKeyPeer)
	f, ok := v.(float64)
	return int64(f), ok
}

// clientHandlers are the upstream client's handlers of sampling,
// elicitation and roots requests, routed to peers.
func (p *Pool) clientHandlers(u *Upstream, opts *mcp.ClientOptions) {
	opts.Capabilities = &mcp.ClientCapabilities{
		RootsV2:     &mcp.RootCapabilities{},
		Sampling:    &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}, Context: &mcp.SamplingContextCapabilities{}},
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		// MCP Apps: the connection is shared, so the extension is declared
		// for every client; the gateway keeps app-only tools from clients
		// that did not declare it (see registry/apps.go).
		Extensions: map[string]any{registry.UIExtension: map[string]any{"mimeTypes": []string{registry.UIMimeType}}},
	}
	opts.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		peer, err := u.peerFor(ctx, req.Params.Meta, "sampling/createMessage")
		if err != nil {
			return nil, err
		}
		return peer.CreateMessage(ctx, req.Params)
	}
	opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		peer, err := u.peerFor(ctx, req.Params.Meta, "elicitation/create")
		if err != nil {
			return nil, err
		}
		if req.Params.ElicitationID != "" {
			u.peerMu.Lock()
			if u.elicitations == nil {
				u.elicitations = map[string]Peer{}
			}
			u.elicitations[req.Params.ElicitationID] = peer
			u.peerMu.Unlock()
		}
		return peer.Elicit(ctx, req.Params)
	}
	opts.ElicitationCompleteHandler = func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
		if req.Params == nil {
			return
		}
		u.peerMu.Lock()
		peer := u.elicitations[req.Params.ElicitationID]
		delete(u.elicitations, req.Params.ElicitationID)
		u.peerMu.Unlock()
		if peer != nil {
			peer.ElicitationComplete(ctx, req.Params)
		}
	}
}

// rootsMiddleware answers the upstream's roots/list (listRoots).
func (p *Pool) rootsMiddleware(u *Upstream) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			var meta mcp.Meta
			if params, ok := req.GetParams().(*mcp.ListRootsParams); ok && params != nil {
				meta = params.Meta
			}
			return u.listRoots(ctx, meta)
		}
	}
}

// listRoots answers roots/list with the roots of the peer it is for, or,
// when that is not one peer, of every peer using the upstream
// (Options.Roots).
func (u *Upstream) listRoots(ctx context.Context, meta mcp.Meta) (*mcp.ListRootsResult, error) {
	if peer, err := u.peerFor(ctx, meta, "roots/list"); err == nil {
		roots, err := peer.Roots(ctx)
		if err != nil {
			return nil, err
		}
		return &mcp.ListRootsResult{Roots: nonNil(roots)}, nil
	}
	var roots []*mcp.Root
	if f := u.pool.opts.Roots; f != nil {
		u.mu.Lock()
		srv := u.srv
		u.mu.Unlock()
		roots = f(ctx, srv)
	}
	return &mcp.ListRootsResult{Roots: nonNil(roots)}, nil
}

func nonNil(roots []*mcp.Root) []*mcp.Root {
	if roots == nil {
		return []*mcp.Root{}
	}
	return roots
}

// FileRoot is the root of a directory.
func FileRoot(dir string) *mcp.Root {
	name := dir
	if i := strings.LastIndexByte(strings.TrimRight(dir, "/"), '/'); i >= 0 {
		name = strings.TrimRight(dir, "/")[i+1:]
	}
	return &mcp.Root{URI: "file://" + dir, Name: name}
}
