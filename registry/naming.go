package registry

import (
	"cmp"
	"crypto/sha256"
	"encoding/base32"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Gateway tool names follow pi-mcp-adapter (types.ts formatToolName,
// getServerPrefix; resource-tools.ts resourceNameToToolName), so a model
// sees the same names through mcpgw as through the adapter, and
// includeTools/excludeTools patterns written for one work for the other.
// On top of that, every name is made acceptable to LLM APIs: at most
// MaxToolNameLen characters of [A-Za-z0-9_-]. Names that would collide, or
// that are too long, get a deterministic suffix rather than being dropped.

// MaxToolNameLen is the longest tool name LLM APIs accept (Anthropic,
// OpenAI, Bedrock).
const MaxToolNameLen = 64

// nameSuffixLen is the length of the collision suffix: base32 characters of
// a sha256, 30 bits.
const nameSuffixLen = 6

var nameSuffixEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NameRequest asks for the gateway name of one upstream tool.
type NameRequest struct {
	Server string // configured server name
	Tool   string // tool name on the upstream, or ResourceToolName(resource name)
	Prefix string // this server's prefix mode: PrefixServer ("" too), PrefixShort, PrefixNone, PrefixMCP
}

// AssignNames returns one gateway name per request, in input order. Every
// name is unique among the results, at most MaxToolNameLen characters of
// [A-Za-z0-9_-], and depends only on the set of requests, not their order.
//
// A request keeps its ToolName when that name is short enough and no other
// request has the same one. Otherwise the name is cut to fit and gets "_"
// plus a suffix taken from sha256(server + "/" + tool): both sides of a
// collision are renamed, so no ambiguous name is ever given bare, and adding
// a server never moves a bare name from one server's tool to another's.
// Identical requests get distinct names.
func AssignNames(reqs []NameRequest) []string {
	base := make([]string, len(reqs))
	count := make(map[string]int, len(reqs))
	for i, r := range reqs {
		base[i] = ToolName(r.Prefix, r.Server, r.Tool)
		count[base[i]]++
	}
	names := make([]string, len(reqs))
	taken := make(map[string]bool, len(reqs))
	var suffixed []int
	for i, b := range base {
		if b != "" && len(b) <= MaxToolNameLen && count[b] == 1 {
			names[i] = b
			taken[b] = true
		} else {
			suffixed = append(suffixed, i)
		}
	}
	// Resolve in a fixed order so that, if two suffixed names still clash,
	// which one moves on to the next attempt does not depend on input order.
	slices.SortStableFunc(suffixed, func(a, b int) int {
		ra, rb := reqs[a], reqs[b]
		return cmp.Or(
			strings.Compare(ra.Server, rb.Server),
			strings.Compare(ra.Tool, rb.Tool),
			strings.Compare(ra.Prefix, rb.Prefix),
		)
	})
	for _, i := range suffixed {
		key := reqs[i].Server + "/" + reqs[i].Tool
		for attempt := 0; ; attempt++ {
			n := withNameSuffix(base[i], nameSuffix(key, attempt))
			if !taken[n] {
				names[i] = n
				taken[n] = true
				break
			}
		}
	}
	return names
}

// nameSuffix is the suffix for key: base32 of sha256(key), or of
// sha256(key + "#" + attempt) for later attempts.
func nameSuffix(key string, attempt int) string {
	if attempt > 0 {
		key += "#" + strconv.Itoa(attempt)
	}
	sum := sha256.Sum256([]byte(key))
	return nameSuffixEncoding.EncodeToString(sum[:])[:nameSuffixLen]
}

// withNameSuffix cuts base so that base + "_" + suffix fits MaxToolNameLen.
func withNameSuffix(base, suffix string) string {
	if n := MaxToolNameLen - 1 - len(suffix); len(base) > n {
		base = base[:n]
	}
	base = strings.TrimRight(base, "_-")
	if base == "" {
		base = "tool"
	}
	return base + "_" + suffix
}

// ToolName is the gateway name of an upstream tool before collision and
// length handling, as pi-mcp-adapter's formatToolName builds it:
//
//   - server (default, also for ""): <server>_<tool>
//   - short:  the server name minus a trailing "mcp" or "-mcp" (any case;
//     "mcp" if nothing is left), then _<tool>
//   - none:   <tool>
//   - mcp:    mcp__<server>_<tool>
//
// Dots in the tool name become "_". Any other character outside
// [A-Za-z0-9_-], in the server or the tool name, becomes "_<hex code
// point>_" ("my.server" → "my_2e_server", "é" → "_e9_"), the adapter's
// encoding for server names. A tool already named "<prefix>_..." is not
// prefixed again.
func ToolName(prefix, server, tool string) string {
	p := serverPrefix(prefix, server)
	t := sanitizeNamePart(strings.ReplaceAll(tool, ".", "_"))
	if p == "" {
		return t
	}
	if strings.HasPrefix(t, p+"_") && len(t) > len(p)+1 {
		return t
	}
	return p + "_" + t
}

var shortSuffixRE = regexp.MustCompile(`(?i)-?mcp$`)

// serverPrefix is pi-mcp-adapter's getServerPrefix.
func serverPrefix(mode, server string) string {
	switch mode {
	case PrefixNone:
		return ""
	case PrefixShort:
		if short := sanitizeNamePart(shortSuffixRE.ReplaceAllString(server, "")); short != "" {
			return short
		}
		return "mcp"
	case PrefixMCP:
		return "mcp__" + sanitizeNamePart(server)
	}
	return sanitizeNamePart(server)
}

// sanitizeNamePart replaces each character outside [A-Za-z0-9_-] with
// "_<lower-case hex code point>_" (pi-mcp-adapter's sanitizeServerPrefix).
func sanitizeNamePart(s string) string {
	clean := true
	for _, r := range s {
		if !isNameChar(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isNameChar(r) {
			b.WriteRune(r)
			continue
		}
		b.WriteByte('_')
		b.WriteString(strconv.FormatInt(int64(r), 16))
		b.WriteByte('_')
	}
	return b.String()
}

// ResourceToolName is the tool name of an upstream resource before
// prefixing: "read_" plus the resource name with every run of characters
// outside [A-Za-z0-9] turned into one "_", leading and trailing "_"
// removed, lower-cased; "resource" (or "resource_" before a leading digit)
// when that leaves nothing usable. This is pi-mcp-adapter's rule since it
// renamed get_<resource> to read_<resource> (after the MCP resources/read
// operation): "Team Docs (v2)" → "read_team_docs_v2", "2024 report" →
// "read_resource_2024_report".
func ResourceToolName(resourceName string) string {
	var b strings.Builder
	under := false
	for _, r := range resourceName {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(r)
			continue
		}
		under = true
	}
	s := strings.ToLower(b.String())
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = strings.TrimSuffix("resource_"+s, "_")
	}
	return "read_" + s
}

// PrefixOf is the tool prefix mode of srv's tools: its own toolPrefix,
// else the settings'.
func (s *Settings) PrefixOf(srv *Server) string {
	if srv.ToolPrefix != "" {
		return srv.ToolPrefix
	}
	return s.ToolPrefix
}
