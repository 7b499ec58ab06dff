package registry

import "github.com/mcpgw/mcpgw/cachefile"

// CacheStats are the metadata cache's counters (reads, hits, misses,
// writes, corrupt files).
type CacheStats = cachefile.Stats

// ListingCache is the shared on-disk metadata cache (cachefile) seen as
// listings: what the catalogue starts from, and where live listings are
// written back. Its methods are safe for concurrent use.
type ListingCache struct{ f *cachefile.File }

// NewListingCache returns the listing view of f.
func NewListingCache(f *cachefile.File) *ListingCache { return &ListingCache{f: f} }

// Listing returns the valid cached listing of the server called name with
// identity hash, if any.
func (c *ListingCache) Listing(name, hash string) (*Listing, bool) {
	e, ok := c.f.Lookup(name, hash)
	if !ok {
		return nil, false
	}
	return &Listing{
		Tools:        e.Tools,
		Resources:    e.Resources,
		Prompts:      e.Prompts,
		Instructions: e.Instructions,
		Source:       SourceCache,
		At:           e.CachedAt,
	}, true
}

// Store writes l, a live listing of the upstream with identity hash, as the
// entry of every server name in names (the cache is keyed by name).
func (c *ListingCache) Store(names []string, hash string, l *Listing) error {
	entries := make(map[string]*cachefile.Entry, len(names))
	for _, name := range names {
		entries[name] = &cachefile.Entry{
			ConfigHash:   hash,
			Tools:        l.Tools,
			Resources:    l.Resources,
			Prompts:      l.Prompts,
			Instructions: l.Instructions,
			CachedAt:     l.At,
		}
	}
	return c.f.Put(entries)
}

// Path is the cache file's path.
func (c *ListingCache) Path() string { return c.f.Path() }

// Stats returns the cache's counters.
func (c *ListingCache) Stats() CacheStats { return c.f.Stats() }
