// Package cachefile reads and writes mcpgw's on-disk metadata cache, the
// same file pi-mcp-adapter (Pi's MCP adapter) keeps, so that both share it:
// by default ~/.pi/agent/mcp-cache.json, shaped
//
//	{"version":1,"servers":{NAME:{"configHash":..., "tools":[...],
//	 "resources":[...], "prompts":[...]?, "instructions":...?,
//	 "ttlMs":...?, "cacheScope":...?, "cachedAt":<ms since epoch>}}}
//
// An entry belongs to a server definition through its configHash, the
// adapter's computeServerHash of the definition's identity fields (see
// Identity and Hash). It is valid while the hash matches and it is younger
// than the maximum age (7 days by default, shortened by the entry's ttlMs).
//
// The package imports no other mcpgw package.
package cachefile
