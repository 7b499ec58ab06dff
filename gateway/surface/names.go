package surface

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// DefaultClientKey is the key the README's client snippets give mcpgw in a
// client's config ("mcpServers": {"mcpgw": ...}); clients name mcpgw's tools
// after it.
const DefaultClientKey = "mcpgw"

// Naming is how a session's client names the tools mcpgw lists: what
// the model sees, and so what it must be told to call. Clients that list
// tools from several servers prefix each with the server's key:
// pi-mcp-adapter as "KEY_tool", Pi 1.x as "mcp__KEY__tool".
type Naming struct {
	style int    // namingPlain, namingAdapter, namingPi
	key   string // the key mcpgw has in the client's config
}

const (
	namingPlain   = iota // the client shows mcpgw's names as they are
	namingAdapter        // pi-mcp-adapter: KEY_tool
	namingPi             // Pi 1.x built-in MCP: mcp__KEY__tool
)

// NamingFor picks a session's naming: override when set (the shim's
// --client-prefix, the HTTP client's header or query parameter), else from
// the client's initialize. override is "none", "mcp__KEY__" (Pi 1.x) or
// "KEY_" (pi-mcp-adapter).
//
// pi-mcp-adapter names its client "pi-mcp-KEY", so the key is known
// exactly; Pi 1.x names its client "pi", and the key is assumed to be
// DefaultClientKey.
func NamingFor(override string, info *mcp.Implementation) Naming {
	switch {
	case override == "none":
		return Naming{}
	case strings.HasPrefix(override, "mcp__") && strings.HasSuffix(override, "__") && len(override) > len("mcp____"):
		return Naming{style: namingPi, key: strings.TrimSuffix(strings.TrimPrefix(override, "mcp__"), "__")}
	case strings.HasSuffix(override, "_") && len(override) > 1:
		return Naming{style: namingAdapter, key: strings.TrimSuffix(override, "_")}
	case override != "":
		return Naming{style: namingAdapter, key: override}
	}
	if info == nil {
		return Naming{}
	}
	switch name := info.Name; {
	case name == "pi":
		return Naming{style: namingPi, key: DefaultClientKey}
	case strings.HasPrefix(name, "pi-mcp-") && name != "pi-mcp-adapter" && name != "pi-mcp-probe":
		return Naming{style: namingAdapter, key: strings.TrimPrefix(name, "pi-mcp-")}
	}
	return Naming{}
}

// ResourcesAsTools reports whether the client makes a tool of each
// resource it is listed: pi-mcp-adapter registers read_NAME for each one
// it has cached (unless its entry says "exposeResources": false).
func (n Naming) ResourcesAsTools() bool { return n.style == namingAdapter }

// name is the name the client shows for mcpgw's tool gw.
func (n Naming) Name(gw string) string {
	switch n.style {
	case namingAdapter:
		// pi-mcp-adapter's formatToolName with the "server" prefix mode.
		p := adapterPrefix(n.key)
		if strings.HasPrefix(gw, p+"_") && len(gw) > len(p)+1 {
			return gw
		}
		return p + "_" + strings.ReplaceAll(gw, ".", "_")
	case namingPi:
		// Pi's createMcpToolName: non-word characters become "_", and a
		// name over 64 characters is cut and given a hash suffix.
		name := "mcp__" + n.key + "__" + gw
		name = strings.Map(func(r rune) rune {
			if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, name)
		if len(name) <= 64 {
			return name
		}
		sum := sha256.Sum256([]byte(n.key + "\x00" + gw))
		h := hex.EncodeToString(sum[:])[:8]
		return name[:64-len(h)-1] + "_" + h
	}
	return gw
}

// adapterPrefix is pi-mcp-adapter's sanitizeServerPrefix: characters other
// than [A-Za-z0-9_-] become _hex_.
func adapterPrefix(key string) string {
	var b strings.Builder
	for _, r := range key {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, "_%x_", r)
	}
	return b.String()
}

// lookup finds a tool by mcpgw's name or by the name the client shows for
// it, so that a model may use either.
func (n Naming) Lookup(v *registry.View, name string) (*registry.Tool, bool) {
	if t, ok := v.Lookup(name); ok || n.style == namingPlain {
		return t, ok
	}
	for _, t := range v.Tools {
		if n.Name(t.Name) == name {
			return t, true
		}
	}
	return nil, false
}

// names maps names through n.
func (n Naming) Names(in []string) []string {
	if n.style == namingPlain {
		return in
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = n.Name(s)
	}
	return out
}
