package cachefile

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// AuthFalse is the Identity.Auth value that stands for `"auth": false` in a
// server definition (the adapter's way to turn authentication off). It hashes
// as the JSON boolean false.
const AuthFalse = "false"

// Identity holds the fields of a server definition that make up its identity
// hash, as written in the config file (mcp.json shape), before any
// interpolation: Hash resolves ${VAR}, $env:VAR, {env:VAR} and ~ exactly
// where pi-mcp-adapter's computeServerHash does, and nowhere else (command,
// args, auth, bearerTokenEnv, protocolVersion, exposeResources and the tool
// lists are hashed as written).
//
// A nil slice or map is an absent field; a non-nil empty one is present
// (`"args": []` and no "args" hash differently, as in the adapter). For
// string fields the zero value "" means absent, except in an Identity
// decoded with UnmarshalJSON, which remembers which fields the object
// actually had, so that an explicit "" hashes as the adapter hashes it.
// JSON null is treated as absent.
//
// The simplest way to fill one is json.Unmarshal of the server's object as
// it stands in the file (after JSONC is stripped, before any interpolation).
//
// The adapter's Agent Plugin servers (whose env, cwd and headers it hashes
// literally) have no counterpart here.
type Identity struct {
	Command string
	Args    []string
	Env     map[string]string // values interpolated; a value starting with "!" is a secret command, hashed as written
	Cwd     string            // interpolated, then a leading ~ or ~/ is the home directory
	Socket  string            // rmcp-mux socket path; resolved like Cwd
	URL     string            // interpolated; must then parse as an absolute URL, else Hash fails
	Headers map[string]string // interpolated like Env
	// RequestHeadersCommand runs to produce request headers; nil = absent.
	RequestHeadersCommand *HeadersCommand
	Auth                  string // "oauth", "bearer", AuthFalse, or "" (absent)
	ProtocolVersion       string // "legacy", "auto", "2026-07-28" or ""
	// BearerToken is interpolated like Env values; when absent, the value of
	// the environment variable named by BearerTokenEnv is hashed instead.
	// Only the hash is ever stored.
	BearerToken     string
	BearerTokenEnv  string
	ExposeResources *bool
	IncludeTools    []string
	ExcludeTools    []string

	// present records string fields that UnmarshalJSON saw, so that an
	// explicit "" is not taken for absent.
	present presence
}

// HeadersCommand is a server's requestHeadersCommand.
type HeadersCommand struct {
	Command   string            // interpolated
	Args      []string          // each interpolated; nil = absent
	Env       map[string]string // interpolated like Identity.Env; nil = absent
	TimeoutMs *float64          // nil = absent; hashed as a JavaScript number
}

type presence uint16

const (
	hasCommand presence = 1 << iota
	hasCwd
	hasSocket
	hasURL
	hasAuth
	hasProtocolVersion
	hasBearerToken
	hasBearerTokenEnv
)

func (id *Identity) has(bit presence, v string) bool { return v != "" || id.present&bit != 0 }

// UnmarshalJSON decodes a server definition object of an mcp.json file,
// keeping only the identity fields. Other fields (lifecycle, directTools, ...)
// are ignored, as they do not change the identity.
func (id *Identity) UnmarshalJSON(data []byte) error {
	var raw struct {
		Command               *string           `json:"command"`
		Args                  []string          `json:"args"`
		Env                   map[string]string `json:"env"`
		Cwd                   *string           `json:"cwd"`
		Socket                *string           `json:"socket"`
		URL                   *string           `json:"url"`
		Headers               map[string]string `json:"headers"`
		RequestHeadersCommand *struct {
			Command   string            `json:"command"`
			Args      []string          `json:"args"`
			Env       map[string]string `json:"env"`
			TimeoutMs *float64          `json:"timeoutMs"`
		} `json:"requestHeadersCommand"`
		Auth            json.RawMessage `json:"auth"`
		ProtocolVersion *string         `json:"protocolVersion"`
		BearerToken     *string         `json:"bearerToken"`
		BearerTokenEnv  *string         `json:"bearerTokenEnv"`
		ExposeResources *bool           `json:"exposeResources"`
		IncludeTools    []string        `json:"includeTools"`
		ExcludeTools    []string        `json:"excludeTools"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*id = Identity{
		Args:            raw.Args,
		Env:             raw.Env,
		Headers:         raw.Headers,
		ExposeResources: raw.ExposeResources,
		IncludeTools:    raw.IncludeTools,
		ExcludeTools:    raw.ExcludeTools,
	}
	str := func(p *string, dst *string, bit presence) {
		if p != nil {
			*dst = *p
			id.present |= bit
		}
	}
	str(raw.Command, &id.Command, hasCommand)
	str(raw.Cwd, &id.Cwd, hasCwd)
	str(raw.Socket, &id.Socket, hasSocket)
	str(raw.URL, &id.URL, hasURL)
	str(raw.ProtocolVersion, &id.ProtocolVersion, hasProtocolVersion)
	str(raw.BearerToken, &id.BearerToken, hasBearerToken)
	str(raw.BearerTokenEnv, &id.BearerTokenEnv, hasBearerTokenEnv)
	if a := strings.TrimSpace(string(raw.Auth)); a != "" && a != "null" {
		if a == "false" {
			id.Auth = AuthFalse
		} else if err := json.Unmarshal(raw.Auth, &id.Auth); err != nil {
			return fmt.Errorf(`decoding "auth": want "oauth", "bearer" or false, got %s`, a)
		}
		id.present |= hasAuth
	}
	if c := raw.RequestHeadersCommand; c != nil {
		id.RequestHeadersCommand = &HeadersCommand{Command: c.Command, Args: c.Args, Env: c.Env, TimeoutMs: c.TimeoutMs}
	}
	return nil
}

// Env is the environment a definition is resolved against.
type Env struct {
	// Lookup returns an environment variable; nil = os.LookupEnv.
	Lookup func(name string) (string, bool)
	// Home is the directory ~ stands for; "" = $HOME, else the user database.
	Home string
}

func (e Env) lookup(name string) (string, bool) {
	if e.Lookup == nil {
		return os.LookupEnv(name)
	}
	return e.Lookup(name)
}

func (e Env) home() string {
	if e.Home != "" {
		return e.Home
	}
	// Node's os.homedir: $HOME when set, else the passwd entry.
	if h, ok := os.LookupEnv("HOME"); ok && h != "" {
		return h
	}
	if u, err := user.Current(); err == nil {
		return u.HomeDir
	}
	return ""
}

// ErrUnresolvable is returned by HashEnv when the adapter's computeServerHash
// would throw: the URL names an unset variable or is not a valid URL once
// interpolated. The adapter then treats the cache entry as invalid.
var ErrUnresolvable = errors.New("identity cannot be resolved")

// Hash returns the server's identity hash, byte-identical to pi-mcp-adapter's
// computeServerHash(definition, process.env): the hex sha256 of the stable
// stringify of the identity fields, resolved against this process's
// environment and home directory. It returns "" when HashEnv fails; "" never
// matches a cache entry.
//
// Since env, headers, cwd, url and the bearer token are hashed after
// interpolation, a definition that uses ${VAR} hashes the same in mcpgw and
// in Pi only when both see the same value of VAR.
func Hash(id Identity) string {
	h, err := HashEnv(id, Env{})
	if err != nil {
		return ""
	}
	return h
}

// HashEnv is Hash against the given environment.
func HashEnv(id Identity, env Env) (string, error) {
	s, err := canonical(id, env)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:]), nil
}

// canonical returns the string the adapter hashes: stableStringify of
//
//	{command, args, socket, env, cwd, url, headers, requestHeadersCommand,
//	 auth, protocolVersion, bearerToken, bearerTokenEnv, exposeResources,
//	 includeTools, excludeTools}
//
// stableStringify sorts object keys (by UTF-16 code units), keeps array
// order, writes every key even when its value is undefined (as the bare word
// undefined) and quotes strings as JSON.stringify does.
func canonical(id Identity, env Env) (string, error) {
	var urlValue *string
	if id.has(hasURL, id.URL) {
		u, err := resolveURL(id.URL, env)
		if err != nil {
			return "", err
		}
		urlValue = &u
	}
	bearer := id.bearer(env)

	b := make([]byte, 0, 512)
	b = append(b, `{"args":`...)
	b = appendStrings(b, id.Args, nil)
	b = append(b, `,"auth":`...)
	switch {
	case !id.has(hasAuth, id.Auth):
		b = append(b, "undefined"...)
	case id.Auth == AuthFalse:
		b = append(b, "false"...)
	default:
		b = appendJSString(b, id.Auth)
	}
	b = append(b, `,"bearerToken":`...)
	b = appendOptString(b, bearer)
	b = append(b, `,"bearerTokenEnv":`...)
	b = appendField(b, id.has(hasBearerTokenEnv, id.BearerTokenEnv), id.BearerTokenEnv)
	b = append(b, `,"command":`...)
	b = appendField(b, id.has(hasCommand, id.Command), id.Command)
	b = append(b, `,"cwd":`...)
	b = appendField(b, id.has(hasCwd, id.Cwd), resolvePath(id.Cwd, env))
	b = append(b, `,"env":`...)
	b = appendRecord(b, id.Env, env)
	b = append(b, `,"excludeTools":`...)
	b = appendStrings(b, id.ExcludeTools, nil)
	b = append(b, `,"exposeResources":`...)
	switch {
	case id.ExposeResources == nil:
		b = append(b, "undefined"...)
	default:
		b = strconv.AppendBool(b, *id.ExposeResources)
	}
	b = append(b, `,"headers":`...)
	b = appendRecord(b, id.Headers, env)
	b = append(b, `,"includeTools":`...)
	b = appendStrings(b, id.IncludeTools, nil)
	b = append(b, `,"protocolVersion":`...)
	b = appendField(b, id.has(hasProtocolVersion, id.ProtocolVersion), id.ProtocolVersion)
	b = append(b, `,"requestHeadersCommand":`...)
	b = appendHeadersCommand(b, id.RequestHeadersCommand, env)
	b = append(b, `,"socket":`...)
	b = appendField(b, id.has(hasSocket, id.Socket), resolvePath(id.Socket, env))
	b = append(b, `,"url":`...)
	b = appendOptString(b, urlValue)
	b = append(b, '}')
	return string(b), nil
}

// bearer is the bearer token the adapter hashes: the configured one,
// interpolated, else the value of bearerTokenEnv; nil for none.
func (id Identity) bearer(env Env) *string {
	if id.has(hasBearerToken, id.BearerToken) {
		t := interpolateSecret(id.BearerToken, env)
		return &t
	}
	if id.BearerTokenEnv != "" {
		if t, ok := env.lookup(id.BearerTokenEnv); ok {
			return &t
		}
	}
	return nil
}

// appendHeadersCommand appends requestHeadersCommand as the adapter's
// JSON.stringify would, args and command interpolated.
func appendHeadersCommand(b []byte, c *HeadersCommand, env Env) []byte {
	if c == nil {
		return append(b, "undefined"...)
	}
	b = append(b, `{"args":`...)
	b = appendStrings(b, c.Args, &env)
	b = append(b, `,"command":`...)
	b = appendJSString(b, interpolate(c.Command, env))
	b = append(b, `,"env":`...)
	b = appendRecord(b, c.Env, env)
	b = append(b, `,"timeoutMs":`...)
	if c.TimeoutMs == nil {
		b = append(b, "undefined"...)
	} else {
		b = appendJSNumber(b, *c.TimeoutMs)
	}
	return append(b, '}')
}

func appendField(b []byte, present bool, v string) []byte {
	if !present {
		return append(b, "undefined"...)
	}
	return appendJSString(b, v)
}

func appendOptString(b []byte, v *string) []byte {
	if v == nil {
		return append(b, "undefined"...)
	}
	return appendJSString(b, *v)
}

// appendStrings writes an array, interpolating each element when env is set.
func appendStrings(b []byte, vs []string, env *Env) []byte {
	if vs == nil {
		return append(b, "undefined"...)
	}
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		if env != nil {
			v = interpolate(v, *env)
		}
		b = appendJSString(b, v)
	}
	return append(b, ']')
}

// appendRecord writes an env or headers object the way the adapter's
// interpolateEnvRecord leaves it: values interpolated unless they are secret
// commands, keys sorted.
func appendRecord(b []byte, m map[string]string, env Env) []byte {
	if m == nil {
		return append(b, "undefined"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortUTF16(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSString(b, k)
		b = append(b, ':')
		b = appendJSString(b, interpolateSecret(m[k], env))
	}
	return append(b, '}')
}

var (
	reDollarBrace = regexp.MustCompile(`\$\{(\w+)\}`)
	reDollarEnv   = regexp.MustCompile(`\$env:(\w+)`)
	reBraceEnv    = regexp.MustCompile(`\{env:(\w+)\}`)
	reAnyVar      = regexp.MustCompile(`\$\{(\w+)\}|\$env:(\w+)|\{env:(\w+)\}`)
)

// interpolate is the adapter's interpolateEnvVars: three passes, in this
// order, each replacing with the variable's value or "" when unset. A value
// substituted by one pass is seen by the later ones.
func interpolate(s string, env Env) string {
	if !strings.ContainsAny(s, "${") {
		return s
	}
	for _, re := range []*regexp.Regexp{reDollarBrace, reDollarEnv, reBraceEnv} {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			v, _ := env.lookup(re.FindStringSubmatch(m)[1])
			return v
		})
	}
	return s
}

// interpolateSecret is the adapter's interpolateSecretExpression: "!cmd" is
// a command to run later and is kept as written; "!!x" escapes a literal
// "!x" and is interpolated.
func interpolateSecret(s string, env Env) string {
	if strings.HasPrefix(s, "!!") {
		return interpolate(s[1:], env)
	}
	if strings.HasPrefix(s, "!") {
		return s
	}
	return interpolate(s, env)
}

// resolvePath is the adapter's resolveConfigPath (POSIX): interpolate, then
// "~" is the home directory and "~/x" (or "~\x") is path.join(home, "x").
func resolvePath(s string, env Env) string {
	s = interpolate(s, env)
	if s == "~" {
		return env.home()
	}
	if strings.HasPrefix(s, "~/") || strings.HasPrefix(s, `~\`) {
		return nodeJoin(env.home(), s[2:])
	}
	return s
}

// nodeJoin is Node's path.posix.join for two segments: join the non-empty
// ones with "/" and normalize, keeping a trailing slash.
func nodeJoin(a, b string) string {
	var joined string
	switch {
	case a == "" && b == "":
		return "."
	case a == "":
		joined = b
	case b == "":
		joined = a
	default:
		joined = a + "/" + b
	}
	return nodeNormalize(joined)
}

// nodeNormalize is Node's path.posix.normalize.
func nodeNormalize(p string) string {
	if p == "" {
		return "."
	}
	abs := p[0] == '/'
	trailing := p[len(p)-1] == '/'
	var out []string
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "", ".":
		case "..":
			if len(out) > 0 && out[len(out)-1] != ".." {
				out = out[:len(out)-1]
			} else if !abs {
				out = append(out, "..")
			}
		default:
			out = append(out, seg)
		}
	}
	s := strings.Join(out, "/")
	if s == "" {
		if abs {
			return "/"
		}
		if trailing {
			return "./"
		}
		return "."
	}
	if trailing {
		s += "/"
	}
	if abs {
		return "/" + s
	}
	return s
}

// resolveURL is the adapter's resolveServerUrl: every variable the URL names
// must be set, and the interpolated result must parse as an absolute URL.
// Parsing is Go's net/url with the WHATWG rules that matter here (a scheme is
// required; http, https, ws, wss and ftp need a host), not a full WHATWG
// parser.
func resolveURL(raw string, env Env) (string, error) {
	var missing []string
	for _, m := range reAnyVar.FindAllStringSubmatch(raw, -1) {
		name := m[1] + m[2] + m[3]
		if _, ok := env.lookup(name); !ok && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("%w: URL names unset variable(s) %s", ErrUnresolvable, strings.Join(missing, ", "))
	}
	s := interpolate(raw, env)
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("%w: invalid URL after interpolation", ErrUnresolvable)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ws", "wss", "ftp":
		if u.Host == "" {
			return "", fmt.Errorf("%w: invalid URL after interpolation", ErrUnresolvable)
		}
	}
	return s, nil
}
