package registry

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/jsonwire"
	"github.com/mcpgw/mcpgw/registry/search"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Listing sources.
const (
	SourceLive  = "live"  // read from the connected upstream
	SourceCache = "cache" // read from the metadata cache file
	// SourcePrevious is the listing of a server's previous configuration,
	// kept under its new identity until the new one is read: a server whose
	// config changed keeps its tools through a reload instead of vanishing
	// until it has restarted. Any other listing replaces it.
	SourcePrevious = "previous"
)

// Listing is what an upstream offers, as last seen live or in the cache.
type Listing struct {
	Tools        []*mcp.Tool
	Resources    []*mcp.Resource
	Prompts      []*mcp.Prompt // nil = unknown
	Templates    []*mcp.ResourceTemplate
	Instructions string
	Source       string    // SourceLive, SourceCache or SourcePrevious
	At           time.Time // when it was read (cachedAt for cache entries)
	// Rejected are tools the catalogue left out because they cannot be
	// offered to clients (see CheckTool); set by SetListings.
	Rejected []RejectedTool
}

// Tool is one tool as the gateway offers it.
type Tool struct {
	// Name is the gateway name: unique in a View, ≤ 64 chars of [A-Za-z0-9_-].
	Name string
	// Server is the name of the server the tool belongs to.
	Server string
	// Original is the tool's name on the upstream.
	Original string
	// Def is the upstream's definition (Name is the original name). For
	// resource tools it is synthesised.
	Def *mcp.Tool
	// Resource is set for read_<resource> tools, which read it.
	Resource *mcp.Resource

	exposedOnce  sync.Once
	exposed      *mcp.Tool
	headersBound bool

	jsonOnce sync.Once
	json     []byte // Exposed, encoded
}

// Exposed is the tool as a client lists it: the gateway name and the
// upstream's schema, made acceptable to the SDK (an object schema is
// required). It is made once per catalogue view and shared by every
// session that lists the tool.
func (t *Tool) Exposed() *mcp.Tool {
	t.exposedOnce.Do(func() {
		def := *t.Def
		def.Name = t.Name
		def.InputSchema = ObjectSchema(t.Def.InputSchema)
		t.exposed = &def
		in, _ := schemaJSON(def.InputSchema)
		t.headersBound = bytes.Contains(in, []byte("x-mcp-header"))
	})
	return t.exposed
}

// ExposedJSON is Exposed as a tools/list answer carries it, encoded once,
// the first time a session lists it, and shared as Exposed is.
func (t *Tool) ExposedJSON() []byte {
	t.jsonOnce.Do(func() {
		data, err := jsonwire.Marshal(t.Exposed())
		if err != nil {
			// What the SDK would fail on too; listed as a tool with its
			// name alone, rather than failing every list.
			data, _ = jsonwire.Marshal(&mcp.Tool{Name: t.Name, InputSchema: ObjectSchema(nil)})
		}
		t.json = data
	})
	return t.json
}

// HeadersBound reports whether the tool's input schema binds arguments to
// HTTP headers (x-mcp-header, protocol 2026-07-28): a request calling it
// over HTTP carries them as Mcp-Param-* headers, which the server checks.
func (t *Tool) HeadersBound() bool {
	t.Exposed()
	return t.headersBound
}

// Description returns the tool's description.
func (t *Tool) Description() string { return t.Def.Description }

// ServerView is one configured server in a View.
type ServerView struct {
	Server *Server
	// Listing is nil when nothing is known about the server's tools yet.
	Listing *Listing
	// Tools after include/exclude filtering, sorted by gateway name.
	Tools []*Tool
}

// Known reports whether the server's own listing is known: live or cached,
// not its previous configuration's (which is shown meanwhile).
func (sv *ServerView) Known() bool {
	return sv.Listing != nil && sv.Listing.Source != SourcePrevious
}

// View is an immutable snapshot of the catalogue: the configuration plus
// every known tool under its gateway name. Safe for concurrent use.
//
// A hidden server (see Settings.Hidden) is not in a View at all: not in
// Servers, not found by Server, and none of its tools, prompts, resources
// or templates are offered. Everything that answers a client, a model or
// a person reads the View, so a hidden server is gone from every method
// and every text; only Config still names it.
type View struct {
	Config  *Config
	Servers []*ServerView // sorted by server name, disabled ones included, hidden ones not
	Tools   []*Tool       // tools of enabled servers, ordered by server then name
	// Prompts, Resources and Templates of enabled servers, in server order.
	Prompts   []*Prompt
	Resources []*Resource
	Templates []*Template

	byServer map[string]*ServerView
	byName   map[string]*Tool
	byPrompt map[string]*Prompt
	byURI    map[string]*Resource

	indexOnce sync.Once
	index     *search.Index
}

// Catalog holds the current View and rebuilds it when the configuration or
// a server's listing changes. Its methods are safe for concurrent use.
type Catalog struct {
	mu       sync.Mutex
	cfg      *Config
	listings map[string]*Listing // by identity hash
	cur      atomic.Pointer[View]
	// overlays caches views of other configs (project overlays) over the
	// current listings; emptied whenever the listings change.
	overlays map[string]*View
	cache    Cache // nil: none
}

// Cache is where listings persist between runs and between tools (the
// shared metadata cache); *ListingCache implements it.
type Cache interface {
	Listing(name, hash string) (*Listing, bool)
	Store(names []string, hash string, l *Listing) error
	Path() string
	Stats() CacheStats
}

// UseCache makes the catalogue read listings from cache (LoadCached) and
// write live ones to it (Publish). Call it before either.
func (c *Catalog) UseCache(cache Cache) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cache = cache
}

// LoadCached adds the cached listings of cfg's servers (a cached listing
// never replaces a live one) and returns the new View and what it found,
// by identity hash.
func (c *Catalog) LoadCached(cfg *Config) (*View, map[string]*Listing) {
	c.mu.Lock()
	cache := c.cache
	c.mu.Unlock()
	if cache == nil {
		return c.View(), nil
	}
	found := make(map[string]*Listing)
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		srv := cfg.Servers[name]
		if l, ok := cache.Listing(name, srv.Hash); ok {
			found[srv.Hash] = l
		}
	}
	if len(found) == 0 {
		return c.View(), nil
	}
	return c.SetListings(found), found
}

// Publish records what an upstream with srv's identity offers now, live,
// and writes it to the cache under every name the current configuration
// gives that identity. The View is the catalogue's after the change; err
// is the cache's.
func (c *Catalog) Publish(srv *Server, l *Listing) (*View, error) {
	after := c.SetListing(srv.Hash, l)
	c.mu.Lock()
	cache := c.cache
	c.mu.Unlock()
	if cache == nil {
		return after, nil
	}
	var names []string
	for name, cs := range after.Config.Servers {
		if cs.Hash == srv.Hash {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return after, cache.Store(names, srv.Hash, l)
}

// NewCatalog returns a catalogue for cfg with no listings.
func NewCatalog(cfg *Config) *Catalog {
	c := &Catalog{cfg: cfg, listings: make(map[string]*Listing)}
	c.rebuildLocked()
	return c
}

// View returns the current snapshot.
func (c *Catalog) View() *View { return c.cur.Load() }

// SetConfig replaces the configuration. Listings are kept by identity hash,
// so unchanged servers keep their tools; a server whose identity changed
// and whose new one has no listing yet keeps its previous one, marked
// SourcePrevious. It returns the new View.
func (c *Catalog) SetConfig(cfg *Config) *View {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.cfg; old != nil && cfg != nil {
		for name, srv := range cfg.Servers {
			prev := old.Servers[name]
			if prev == nil || prev.Hash == srv.Hash || c.listings[srv.Hash] != nil {
				continue
			}
			if l := c.listings[prev.Hash]; l != nil {
				cp := *l
				cp.Source = SourcePrevious
				c.listings[srv.Hash] = &cp
			}
		}
	}
	c.cfg = cfg
	return c.rebuildLocked()
}

// Prune forgets the listings of upstreams whose identity hash is not in
// keep (no configuration in use names them any more).
func (c *Catalog) Prune(keep map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.listings)
	for h := range c.listings {
		if !keep[h] {
			delete(c.listings, h)
		}
	}
	if len(c.listings) != n {
		c.rebuildLocked()
	}
}

// SetListing records what the upstream with identity hash offers and
// returns the new View. A cache listing never replaces a live one.
func (c *Catalog) SetListing(hash string, l *Listing) *View {
	return c.SetListings(map[string]*Listing{hash: l})
}

// SetListings is SetListing for many upstreams at once (one rebuild).
// Every tool goes through CheckTool, whatever its source: a tool clients
// could not be offered is left out and recorded in the stored listing's
// Rejected (the caller's Listing is not modified).
func (c *Catalog) SetListings(ls map[string]*Listing) *View {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := false
	for hash, l := range ls {
		if old := c.listings[hash]; old != nil && old.Source == SourceLive && l.Source == SourceCache {
			continue
		}
		if tools, bad := validTools(l.Tools); bad != nil {
			cp := *l
			cp.Tools, cp.Rejected = tools, bad
			l = &cp
		}
		c.listings[hash] = l
		changed = true
	}
	if !changed {
		return c.cur.Load()
	}
	return c.rebuildLocked()
}

func (c *Catalog) rebuildLocked() *View {
	v := buildView(c.cfg, c.listings)
	c.cur.Store(v)
	clear(c.overlays)
	return v
}

// ViewFor returns the view of another configuration (a session's project
// overlay) over the same listings: upstreams with the same identity hash
// show the same tools. nil means the current configuration.
func (c *Catalog) ViewFor(cfg *Config) *View {
	if cfg == nil {
		return c.View()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cfg == c.cfg {
		return c.cur.Load()
	}
	if v, ok := c.overlays[cfg.Hash]; ok && cfg.Hash != "" {
		return v
	}
	v := buildView(cfg, c.listings)
	if c.overlays == nil {
		c.overlays = make(map[string]*View)
	}
	if cfg.Hash != "" {
		c.overlays[cfg.Hash] = v
	}
	return v
}

func buildView(cfg *Config, listings map[string]*Listing) *View {
	if cfg == nil {
		cfg = &Config{}
	}
	v := &View{
		Config:   cfg,
		byServer: make(map[string]*ServerView, len(cfg.Servers)),
		byName:   make(map[string]*Tool),
	}
	names := make([]string, 0, len(cfg.Servers))
	for name := range cfg.Servers {
		names = append(names, name)
	}
	sort.Strings(names)

	var reqs []NameRequest
	var pending []*Tool
	names = slices.DeleteFunc(names, func(name string) bool { return cfg.Settings.Hidden(cfg.Servers[name]) })
	for _, name := range names {
		srv := cfg.Servers[name]
		sv := &ServerView{Server: srv, Listing: listings[srv.Hash]}
		v.Servers = append(v.Servers, sv)
		v.byServer[name] = sv
		if !srv.Enabled || sv.Listing == nil {
			continue
		}
		prefix := cfg.Settings.PrefixOf(srv)
		for _, t := range sv.Listing.Tools {
			if t == nil || !srv.toolAllowed(prefix, t.Name) || cfg.Settings.excluded(srv, prefix, t.Name) {
				continue
			}
			tool := &Tool{Server: name, Original: t.Name, Def: t}
			sv.Tools = append(sv.Tools, tool)
			pending = append(pending, tool)
			reqs = append(reqs, NameRequest{Server: name, Tool: t.Name, Prefix: prefix})
		}
		if srv.ExposesResources() {
			for _, r := range sv.Listing.Resources {
				if r == nil {
					continue
				}
				rname := ResourceToolName(r.Name)
				if !srv.toolAllowed(prefix, rname) || cfg.Settings.excluded(srv, prefix, rname) {
					continue
				}
				tool := &Tool{Server: name, Original: rname, Resource: r, Def: resourceTool(rname, r)}
				sv.Tools = append(sv.Tools, tool)
				pending = append(pending, tool)
				reqs = append(reqs, NameRequest{Server: name, Tool: rname, Prefix: prefix})
			}
		}
	}
	for i, n := range AssignNames(reqs) {
		pending[i].Name = n
		v.byName[n] = pending[i]
	}
	for _, sv := range v.Servers {
		slices.SortFunc(sv.Tools, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
		v.Tools = append(v.Tools, sv.Tools...)
	}
	v.buildPromptsAndResources(names)
	v.linkUI()
	return v
}

func resourceTool(name string, r *mcp.Resource) *mcp.Tool {
	desc := r.Description
	if desc == "" {
		desc = r.Title
	}
	if desc == "" {
		desc = "Read resource " + r.URI
	} else {
		desc = desc + " (reads resource " + r.URI + ")"
	}
	return &mcp.Tool{
		Name:        name,
		Description: desc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
	}
}

// toolAllowed applies includeTools / excludeTools. As in Pi's MCP adapter,
// a pattern may name the tool as the upstream does, as the gateway does
// (with its prefix) or as server/tool; `*` and `?` are globs that also match
// across `/` and `_`.
func (s *Server) toolAllowed(prefix, name string) bool {
	if len(s.IncludeTools) == 0 && len(s.ExcludeTools) == 0 && len(s.IncludeAlso) == 0 {
		return true
	}
	cands := []string{name, ToolName(prefix, s.Name, name), s.Name + "/" + name}
	if len(s.IncludeTools) > 0 && !matchAny(s.IncludeTools, cands) {
		return false
	}
	for _, also := range s.IncludeAlso {
		if !matchAny(also, cands) {
			return false
		}
	}
	return !matchAny(s.ExcludeTools, cands)
}

// excluded applies settings.excludeTools, written over the names mcpgw
// shows (or server/tool).
func (s *Settings) excluded(srv *Server, prefix, name string) bool {
	if len(s.ExcludeTools) == 0 {
		return false
	}
	return matchAny(s.ExcludeTools, []string{ToolName(prefix, srv.Name, name), srv.Name + "/" + name})
}

// Hidden reports whether srv is hidden whole: its own excludeTools, or
// settings', leave out every tool it could offer — `*`, as Pi's
// "exposure": "hidden" is imported, or `SERVER/*`, `PREFIX_*`. Such a
// server is offered nothing through: no tools, and none of its prompts,
// resources, templates, instructions or log messages either (see View).
// A narrower excludeTools hides the tools it names and nothing else.
func (s *Settings) Hidden(srv *Server) bool {
	if srv == nil || (len(srv.ExcludeTools) == 0 && len(s.ExcludeTools) == 0) {
		return false
	}
	prefix := s.PrefixOf(srv)
	for _, probe := range hiddenProbes {
		cands := []string{probe, ToolName(prefix, srv.Name, probe), srv.Name + "/" + probe}
		if !matchAny(srv.ExcludeTools, cands) && !s.excluded(srv, prefix, probe) {
			return false
		}
	}
	return true
}

// hiddenProbes are tool names unlike each other: an exclusion that leaves
// out all of them leaves out any name.
var hiddenProbes = []string{"a", "Z9", "q_x-y.z", "zz_read_zz"}

func matchAny(patterns, cands []string) bool {
	for _, p := range patterns {
		for _, c := range cands {
			if globMatch(p, c) {
				return true
			}
		}
	}
	return false
}

// globMatch matches * (any run, including none) and ? (one rune).
func globMatch(pattern, s string) bool {
	p, str := []rune(pattern), []rune(s)
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(str) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == str[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// Server returns the named server's view.
func (v *View) Server(name string) (*ServerView, bool) {
	sv, ok := v.byServer[name]
	return sv, ok
}

// Lookup finds a tool by gateway name. It also accepts "server/tool",
// "server.tool" and, when unambiguous, a tool's original name, because
// models write those too.
func (v *View) Lookup(name string) (*Tool, bool) {
	if t, ok := v.byName[name]; ok {
		return t, true
	}
	for _, sep := range []string{"/", ".", ":"} {
		if srv, tool, ok := strings.Cut(name, sep); ok {
			if sv, ok := v.byServer[srv]; ok {
				for _, t := range sv.Tools {
					if t.Original == tool || t.Name == tool {
						return t, true
					}
				}
			}
		}
	}
	var found *Tool
	for _, t := range v.Tools {
		if t.Original == name {
			if found != nil {
				return nil, false
			}
			found = t
		}
	}
	return found, found != nil
}

// SuggestLimit is the longest name Suggest finds names like: no tool's
// name is near that long (the protocol asks for at most 128 characters),
// and the work is bounded by it, whatever a caller sends.
const SuggestLimit = 1024

// Suggest returns up to n gateway names close to name, best first; none
// for a name longer than SuggestLimit.
func (v *View) Suggest(name string, n int) []string {
	if len(name) > SuggestLimit {
		return nil
	}
	type cand struct {
		name string
		d    int
	}
	lname := strings.ToLower(name)
	limit := max(3, len(lname)/2)
	// near is the edit distance of lname and s when it can be within
	// limit, else limit+1: it is at least their difference in length,
	// so the quadratic work is done only for names of about the same
	// length.
	near := func(s string) int {
		if abs(len(s)-len(lname)) > limit {
			return limit + 1
		}
		return editDistance(lname, s)
	}
	var cs []cand
	for _, t := range v.Tools {
		if t.AppOnly() {
			continue
		}
		ln := strings.ToLower(t.Name)
		d := near(ln)
		if lo := strings.ToLower(t.Original); lo != ln {
			d = min(d, near(lo))
		}
		if strings.Contains(ln, lname) || strings.Contains(lname, strings.ToLower(t.Original)) {
			d = min(d, 1+abs(len(ln)-len(lname))/4)
		}
		if d <= limit {
			cs = append(cs, cand{t.Name, d})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, 0, n)
	for _, c := range cs {
		if len(out) == n {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// keywordsFor returns the searchKeywords of every entry whose key is t's
// original name, its shown name, or a glob matching either, in key order.
func (s *Server) keywordsFor(t *Tool) []string {
	if len(s.SearchKeywords) == 0 {
		return nil
	}
	keys := make([]string, 0, len(s.SearchKeywords))
	for k := range s.SearchKeywords {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		if globMatch(k, t.Original) || globMatch(k, t.Name) {
			out = append(out, s.SearchKeywords[k]...)
		}
	}
	return out
}

// Index returns the search index over v.Tools, built on first use.
func (v *View) Index() *search.Index {
	v.indexOnce.Do(func() {
		docs := make([]search.Doc, len(v.Tools))
		for i, t := range v.Tools {
			var schema json.RawMessage
			if t.Def.InputSchema != nil {
				schema, _ = json.Marshal(t.Def.InputSchema)
			}
			var sdesc string
			var keywords []string
			if sv := v.byServer[t.Server]; sv != nil {
				sdesc = sv.Server.Description
				keywords = sv.Server.keywordsFor(t)
			}
			docs[i] = search.Doc{Server: t.Server, Name: t.Original, Description: t.Def.Description, Schema: schema, ServerDescription: sdesc, Alias: t.Name, Keywords: keywords}
		}
		v.index = search.NewIndex(docs)
	})
	return v.index
}

// Search ranks v.Tools against query, best first. In regex mode the
// expression is matched against original names, gateway names and
// descriptions (see Index.Search).
func (v *View) Search(query string, opts search.Options) ([]*Tool, error) {
	hits, err := v.Index().Search(query, opts)
	if err != nil {
		return nil, err
	}
	out := make([]*Tool, 0, len(hits))
	for _, h := range hits {
		if t := v.Tools[h.Doc]; !t.AppOnly() {
			out = append(out, t)
		}
	}
	return out, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
