package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/BurntSushi/toml"
	"github.com/tailscale/hujson"
)

// Import kinds: the values of "imports", each naming another tool whose MCP
// server list mcpgw reads. The set and the files are pi-mcp-adapter's
// (config.ts IMPORT_PATHS), plus "pi" and the locations the tools use today
// where the adapter's are out of date.
const (
	// ImportPi reads Pi's ~/.pi/agent/mcp.json (pi-mcp-adapter's file, also
	// written by Pi's built-in MCP support) and the "mcp" block of
	// ~/.pi/agent/settings.json. $PI_CODING_AGENT_DIR moves ~/.pi/agent.
	ImportPi = "pi"
	// ImportCursor reads ~/.cursor/mcp.json; in a project, .cursor/mcp.json.
	ImportCursor = "cursor"
	// ImportClaudeCode reads ~/.claude/mcp.json, ~/.claude.json and
	// ~/.claude/claude_desktop_config.json; in a project, also the servers
	// `claude mcp add` stored for that directory in ~/.claude.json.
	ImportClaudeCode = "claude-code"
	// ImportClaudeDesktop reads claude_desktop_config.json in
	// $XDG_CONFIG_HOME/Claude (Linux), ~/Library/Application Support/Claude
	// (macOS) or %APPDATA%\Claude (Windows).
	ImportClaudeDesktop = "claude-desktop"
	// ImportCodex reads [mcp_servers.NAME] tables of $CODEX_HOME/config.toml
	// (default ~/.codex), then config.json there.
	ImportCodex = "codex"
	// ImportWindsurf reads ~/.codeium/windsurf/mcp_config.json, then
	// ~/.windsurf/mcp.json.
	ImportWindsurf = "windsurf"
	// ImportVSCode reads VS Code's user mcp.json ($XDG_CONFIG_HOME/Code/User
	// or ~/Library/Application Support/Code/User); in a project,
	// .vscode/mcp.json first. Both "servers" and "mcpServers" are read.
	ImportVSCode = "vscode"
	// ImportOpenCode reads the "mcp" block of
	// $XDG_CONFIG_HOME/opencode/opencode.json(c); in a project,
	// opencode.json(c) first.
	ImportOpenCode = "opencode"
)

// ImportKinds lists the import kinds in the order of their documentation.
var ImportKinds = []string{
	ImportPi, ImportCursor, ImportClaudeCode, ImportClaudeDesktop,
	ImportCodex, ImportWindsurf, ImportVSCode, ImportOpenCode,
}

// kindProject marks the project files .pi/mcp.json and .mcp.json.
const kindProject = "project"

// sourceFormat is the shape of a file that defines servers.
type sourceFormat int

const (
	formatMCPServers sourceFormat = iota // "mcpServers" or "mcp-servers": Pi, Cursor, Claude, Windsurf, project files
	formatClaudeJSON                     // ~/.claude.json: "mcpServers", and "projects"[dir]."mcpServers"
	formatVSCode                         // "servers" or "mcpServers"
	formatOpenCode                       // "mcp": opencode.json and Pi's settings.json
	formatCodexTOML                      // [mcp_servers.NAME]
	formatCodexJSON                      // "mcp_servers" or "mcpServers"
)

type candidate struct {
	path   string
	format sourceFormat
}

// importCandidates returns the files an import kind reads outside any
// project, in precedence order.
func importCandidates(kind string, opts *LoadOptions) []candidate {
	home := opts.home()
	lookup := opts.lookup()
	xdg, _ := lookup("XDG_CONFIG_HOME")
	if !filepath.IsAbs(xdg) {
		xdg = filepath.Join(home, ".config")
	}
	switch kind {
	case ImportPi:
		dir := filepath.Join(home, ".pi", "agent")
		if d, ok := lookup("PI_CODING_AGENT_DIR"); ok && strings.TrimSpace(d) != "" {
			dir = expandHome(strings.TrimSpace(d), home)
			if !filepath.IsAbs(dir) {
				dir, _ = filepath.Abs(dir)
			}
		}
		return []candidate{
			{filepath.Join(dir, "mcp.json"), formatMCPServers},
			{filepath.Join(dir, "settings.json"), formatOpenCode},
		}
	case ImportCursor:
		return []candidate{{filepath.Join(home, ".cursor", "mcp.json"), formatMCPServers}}
	case ImportClaudeCode:
		return []candidate{
			{filepath.Join(home, ".claude", "mcp.json"), formatMCPServers},
			{filepath.Join(home, ".claude.json"), formatClaudeJSON},
			{filepath.Join(home, ".claude", "claude_desktop_config.json"), formatMCPServers},
		}
	case ImportClaudeDesktop:
		dir := filepath.Join(xdg, "Claude")
		switch runtime.GOOS {
		case "darwin":
			dir = filepath.Join(home, "Library", "Application Support", "Claude")
		case "windows":
			if d, ok := lookup("APPDATA"); ok {
				dir = filepath.Join(d, "Claude")
			}
		}
		return []candidate{{filepath.Join(dir, "claude_desktop_config.json"), formatMCPServers}}
	case ImportCodex:
		dir := filepath.Join(home, ".codex")
		if d, ok := lookup("CODEX_HOME"); ok && filepath.IsAbs(d) {
			dir = d
		}
		return []candidate{
			{filepath.Join(dir, "config.toml"), formatCodexTOML},
			{filepath.Join(dir, "config.json"), formatCodexJSON},
		}
	case ImportWindsurf:
		return []candidate{
			{filepath.Join(home, ".codeium", "windsurf", "mcp_config.json"), formatMCPServers},
			{filepath.Join(home, ".windsurf", "mcp.json"), formatMCPServers},
		}
	case ImportVSCode:
		dir := filepath.Join(xdg, "Code", "User")
		switch runtime.GOOS {
		case "darwin":
			dir = filepath.Join(home, "Library", "Application Support", "Code", "User")
		case "windows":
			if d, ok := lookup("APPDATA"); ok {
				dir = filepath.Join(d, "Code", "User")
			}
		}
		return []candidate{{filepath.Join(dir, "mcp.json"), formatVSCode}}
	case ImportOpenCode:
		return []candidate{
			{filepath.Join(xdg, "opencode", "opencode.json"), formatOpenCode},
			{filepath.Join(xdg, "opencode", "opencode.jsonc"), formatOpenCode},
		}
	}
	return nil
}

// projectImportCandidates returns the files an import kind reads inside a
// project directory; they come before the kind's other files.
func projectImportCandidates(kind, dir string) []candidate {
	switch kind {
	case ImportCursor:
		return []candidate{{filepath.Join(dir, ".cursor", "mcp.json"), formatMCPServers}}
	case ImportVSCode:
		return []candidate{{filepath.Join(dir, ".vscode", "mcp.json"), formatVSCode}}
	case ImportOpenCode:
		return []candidate{
			{filepath.Join(dir, "opencode.json"), formatOpenCode},
			{filepath.Join(dir, "opencode.jsonc"), formatOpenCode},
		}
	}
	return nil
}

// sourceFile is one file that defines servers, as read.
type sourceFile struct {
	kind    string // an import kind; "" for mcpgw's own file; kindProject
	path    string
	servers map[string]*Server // valid servers, self references removed
	// canon is what the content hash covers: the part of the file that
	// defines servers, so that the rest of a busy file (~/.claude.json)
	// can change without a reload. nil means the file does not exist.
	canon []byte
	// projects are ~/.claude.json's per-directory server lists, by
	// directory, not yet parsed.
	projects map[string]any
	// overrides are the file's override entries, by server name (see
	// splitOverrides).
	overrides map[string]any
	// plainHash holds, for project servers that run in the project
	// directory only because they set no cwd, the identity hash of the
	// definition as written (see WithProject).
	plainHash map[string]string
}

// resolveSources completes a Config parsed from mcpgw's own file: it drops
// servers that point back at mcpgw, reads the imports (mcpgw's servers win;
// among imports, the first definition of a name wins), loads the trust
// store, and sets Files and Hash to cover everything that contributed.
//
// An import file that does not parse, or defines an invalid server, is an
// error like one in mcpgw's own file, so that a half-saved file never
// changes the running set, unless opts.SkipBroken skips it. A server written in a way only its own tool
// understands (a VS Code ${input:...}, an unsupported type) is skipped with
// a warning.
func resolveSources(cfg *Config, opts *LoadOptions) error {
	own := &sourceFile{path: cfg.Path, servers: cfg.Servers}
	var warns []string
	for _, s := range own.servers {
		s.SecretCommands = true
	}
	for _, name := range slices.Sorted(maps.Keys(own.servers)) {
		if why := pointsAtSelf(own.servers[name], opts, cfg.Path); why != "" {
			delete(own.servers, name)
			warns = append(warns, fmt.Sprintf("%s: %s; skipped", joinField("mcpServers", name), why))
		}
	}
	cfg.Warnings = append(cfg.Warnings, warns...)
	cfg.sources = []*sourceFile{own}
	cfg.opts = opts

	errs := readImports(cfg, opts)
	trust, trustErr := openTrust(opts)
	if trustErr != "" {
		cfg.Warnings = append(cfg.Warnings, trustErr+"; no project is trusted")
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	cfg.Trust = trust
	cfg.Servers = mergeSources(cfg.sources)
	cfg.Warnings = append(cfg.Warnings, applyOverrides(cfg.Servers, cfg.sources, &cfg.Settings)...)

	names := []string{""}
	data := [][]byte{[]byte(cfg.Hash)}
	for _, sf := range cfg.sources[1:] {
		names = append(names, sf.path)
		data = append(data, sf.canon)
		cfg.Files = appendNew(cfg.Files, sf.path)
	}
	for _, sk := range cfg.Skipped {
		// Watched, so that fixing it is a reload.
		names = append(names, sk.Path)
		data = append(data, []byte("skipped: "+sk.Err.Error()))
		cfg.Files = appendNew(cfg.Files, sk.Path)
	}
	if trust.path != "" {
		names = append(names, trust.path, "")
		data = append(data, trust.raw, []byte(trustErr))
		cfg.Files = appendNew(cfg.Files, trust.path)
	}
	cfg.Hash = hashFiles(names, data)
	return nil
}

// readImports reads the files of every import kind the config names,
// adding them to cfg's sources; errors name the import.
func readImports(cfg *Config, opts *LoadOptions) []error {
	var errs []error
	r := &sourceReader{opts: opts, settings: &cfg.Settings, configPath: cfg.Path}
	seen := map[string]bool{}
	for i, kind := range cfg.Imports {
		field := fmt.Sprintf("imports[%d]", i)
		if !slices.Contains(ImportKinds, kind) {
			err := fmt.Errorf("%q is not one of %s", kind, strings.Join(ImportKinds, ", "))
			if s := suggestField(kind, ImportKinds); s != "" {
				err = fmt.Errorf("%q is not one of %s (did you mean %q?)", kind, strings.Join(ImportKinds, ", "), s)
			}
			errs = append(errs, fmt.Errorf("%s: %w", cfg.Path, &ValidationError{Field: field, Value: kind, Err: err}))
			continue
		}
		if seen[kind] {
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s: %q is imported already; ignored", field, kind))
			continue
		}
		seen[kind] = true
		for _, c := range importCandidates(kind, opts) {
			sf, w, err := r.read(kind, c)
			cfg.Warnings = append(cfg.Warnings, w...)
			if err != nil && opts.skipBroken(c.path) {
				sk := SkippedFile{Path: c.path, Err: err}
				cfg.Skipped = append(cfg.Skipped, sk)
				cfg.Warnings = append(cfg.Warnings, sk.Warning())
				continue
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			cfg.sources = append(cfg.sources, sf)
		}
	}
	return errs
}

// mergeSources merges the servers of srcs: the first definition of a name
// wins.
func mergeSources(srcs []*sourceFile) map[string]*Server {
	out := map[string]*Server{}
	for _, sf := range srcs {
		for name, s := range sf.servers {
			if _, ok := out[name]; !ok {
				out[name] = s
			}
		}
	}
	return out
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// sourceReader reads files other than mcpgw's own: imports and project
// files. They are turned into mcpgw's mcpServers shape (see normalize) and
// then read by the same parser as mcpgw's own file.
type sourceReader struct {
	opts       *LoadOptions
	settings   *Settings // mcpgw's settings, which servers inherit
	configPath string    // mcpgw's own config file, for the self-reference check
	// project is the project directory when reading its files: stdio
	// servers default to running there, and ${workspaceFolder} is it.
	project string
	// untrusted reads a project the user has not trusted: nothing is
	// interpolated from the environment (the values could end up in front
	// of a model), and problems are warnings, since its servers only get
	// listed.
	untrusted bool
}

// read reads one candidate file. A missing file gives a sourceFile with no
// servers and nil canon. Warnings start with the file name.
func (r *sourceReader) read(kind string, c candidate) (*sourceFile, []string, error) {
	sf := &sourceFile{kind: kind, path: c.path, servers: map[string]*Server{}}
	data, err := readConfigFile(c.path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return sf, nil, nil
	}
	if err != nil {
		if errors.Is(err, fs.ErrPermission) || isDirError(c.path) {
			// Not ours to fix, and not a half-saved file: say so and go on.
			return sf, []string{fmt.Sprintf("%s: cannot be read (%v); ignored", c.path, unwrapPathError(err))}, nil
		}
		return nil, nil, fmt.Errorf("reading %s: %w", c.path, err)
	}
	root, err := decodeForeign(c.path, c.format, data)
	var servers, projects map[string]any
	var warns []string
	var key string
	if err == nil {
		servers, key, projects, warns, err = extractServers(c.path, c.format, root)
	}
	if err != nil {
		if r.untrusted {
			return sf, []string{err.Error() + "; ignored"}, nil
		}
		return nil, nil, err
	}
	servers, sf.overrides = splitOverrides(servers)
	servers = withFilePolicy(c.format, root, servers)
	canon := map[string]any{"servers": servers}
	if sf.overrides != nil {
		canon["overrides"] = sf.overrides
	}
	if len(projects) > 0 {
		canon["projects"] = projects
	}
	sf.canon, _ = json.Marshal(canon)
	sf.projects = projects
	srv, w, err := r.parseServers(c.path, c.format, key, servers)
	warns = append(warns, w...)
	if err != nil {
		return nil, warns, err
	}
	sf.servers = srv.servers
	sf.plainHash = srv.plainHash
	if !r.untrusted && (kind == ImportPi || kind == kindProject) {
		for _, s := range sf.servers {
			s.SecretCommands = true
		}
	}
	return sf, warns, nil
}

func isDirError(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// decodeForeign decodes a JSON-with-comments or TOML file into Go values
// (json.Number for JSON numbers). An empty file, or one of only comments,
// decodes to nil.
func decodeForeign(file string, format sourceFormat, data []byte) (any, error) {
	if format == formatCodexTOML {
		var v map[string]any
		if _, err := toml.Decode(string(data), &v); err != nil {
			var pe toml.ParseError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s:%d:%d: %s", file, pe.Position.Line, pe.Position.Col, pe.Message)
			}
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		return v, nil
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !bytes.HasSuffix(data, []byte("\n")) {
		data = append(bytes.Clone(data), '\n')
	}
	v, err := hujson.Parse(data)
	if err != nil {
		if onlyComments(data) {
			return nil, nil
		}
		return nil, syntaxError(file, err)
	}
	v.Standardize()
	dec := json.NewDecoder(bytes.NewReader(v.Pack()))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// extractServers returns the server definitions of a decoded file (nil when
// it has none) and, for ~/.claude.json, the per-directory ones.
func extractServers(file string, format sourceFormat, root any) (servers map[string]any, key string, projects map[string]any, warns []string, err error) {
	if root == nil {
		return nil, "", nil, nil, nil
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return nil, "", nil, nil, fmt.Errorf("%s: %w", file, &ValidationError{Err: fmt.Errorf("top-level value must be an object, got %s", goKindName(root))})
	}
	var keys []string
	switch format {
	case formatMCPServers, formatClaudeJSON:
		keys = []string{"mcpServers", "mcp-servers"}
	case formatVSCode:
		keys = []string{"servers", "mcpServers"}
	case formatOpenCode:
		keys = []string{"mcp"}
	case formatCodexTOML, formatCodexJSON:
		keys = []string{"mcp_servers", "mcpServers"}
	}
	for _, k := range keys {
		v, ok := obj[k]
		if !ok || v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, "", nil, nil, fmt.Errorf("%s: %w", file, &ValidationError{Field: joinField("", k), Err: fmt.Errorf("must be an object, got %s", goKindName(v))})
		}
		servers, key = m, k
		break
	}
	if format == formatMCPServers {
		if imp, ok := obj["imports"].([]any); ok && len(imp) > 0 {
			warns = append(warns, fmt.Sprintf("%s: imports: not followed from this file; list them in mcpgw's own imports", file))
		}
	}
	if format == formatClaudeJSON {
		if ps, ok := obj["projects"].(map[string]any); ok {
			for dir, p := range ps {
				po, ok := p.(map[string]any)
				if !ok {
					continue
				}
				if m, ok := po["mcpServers"].(map[string]any); ok && len(m) > 0 {
					if projects == nil {
						projects = map[string]any{}
					}
					projects[dir] = m
				}
			}
		}
	}
	return servers, key, projects, warns, nil
}

// goKindName names a decoded value's JSON type for messages.
func goKindName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, int64, float64:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// parseServers normalizes each definition and reads the result with
// mcpgw's own parser. Errors and warnings name the file and the field as
// KEY.NAME.FIELD, with the key the file uses (after normalization: a Codex
// startup_timeout_sec is reported as startupTimeoutMs).
func (r *sourceReader) parseServers(file string, format sourceFormat, key string, servers map[string]any) (*parsedServers, []string, error) {
	if key == "" {
		key = "mcpServers"
	}
	out := &parsedServers{servers: map[string]*Server{}}
	if len(servers) == 0 {
		return out, nil, nil
	}
	var warns []string
	norm := make(map[string]any, len(servers))
	defaultCwd := map[string]bool{} // servers whose cwd normalize supplied
	notes := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		n := &normalizer{r: r, file: file, format: format, field: joinField(key, name)}
		def, skip := n.normalize(servers[name])
		warns = append(warns, n.warns...)
		if skip != "" {
			warns = append(warns, fmt.Sprintf("%s: %s: %s; server skipped", file, n.field, skip))
			continue
		}
		norm[name] = def
		notes[name] = n.notes
		if n.defaultCwd {
			defaultCwd[name] = true
		}
	}
	data, err := json.Marshal(norm)
	if err != nil {
		return nil, warns, fmt.Errorf("%s: %w", file, err)
	}
	root, err := hujson.Parse(data)
	if err != nil {
		return nil, warns, fmt.Errorf("%s: %w", file, err) // not reached: data is JSON
	}
	lookup := withoutOwnVars(r.opts.lookup())
	if r.untrusted {
		// References stay as written: ${VAR} reads ${VAR}.
		lookup = func(name string) (string, bool) { return "${" + name + "}", true }
	}
	p := &configParser{file: file, dir: filepath.Dir(file), lookup: lookup, home: r.opts.home()}
	cfg := &Config{Servers: map[string]*Server{}, Settings: *r.settings}
	p.servers(&jsonMember{name: key, value: &root}, cfg)
	if err := p.errors(file); err != nil {
		if !r.untrusted {
			return nil, warns, err
		}
		for _, e := range p.errs {
			warns = append(warns, fmt.Sprintf("%s: %v; server skipped", file, e.err))
		}
	}
	for _, w := range p.warnings() {
		warns = append(warns, file+": "+w)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s := cfg.Servers[name]
		if why := pointsAtSelf(s, r.opts, r.configPath); why != "" {
			warns = append(warns, fmt.Sprintf("%s: %s: %s; skipped", file, joinField(key, name), why))
			continue
		}
		if defaultCwd[name] {
			def := maps.Clone(norm[name].(map[string]any))
			delete(def, "cwd")
			if h := p.hashOf(name, def); h != "" {
				if out.plainHash == nil {
					out.plainHash = map[string]string{}
				}
				out.plainHash[name] = h
			}
		}
		if r.untrusted {
			s.Enabled = false
			s.Untrusted = true
		}
		s.PolicyNotes = append(s.PolicyNotes, notes[name]...)
		out.servers[name] = s
	}
	return out, warns, nil
}

type parsedServers struct {
	servers   map[string]*Server
	plainHash map[string]string
}

// hashOf is the identity hash of a definition that is known to be valid.
func (p *configParser) hashOf(name string, def map[string]any) string {
	data, err := json.Marshal(map[string]any{name: def})
	if err != nil {
		return ""
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return ""
	}
	m := &v.Value.(*hujson.Object).Members[0]
	return p.identityHash(jsonMember{name: name, key: &m.Name, value: &m.Value}, joinField("servers", name))
}
