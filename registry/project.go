package registry

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
)

// ProjectFiles returns the project files of dir that overlay the config
// for a session working there, highest precedence first: .pi/mcp.json
// (Pi's project file) wins over .mcp.json (the shared one), as in
// pi-mcp-adapter. Only dir itself is looked at, not its parents.
func ProjectFiles(dir string) []string {
	return []string{filepath.Join(dir, ".pi", "mcp.json"), filepath.Join(dir, ".mcp.json")}
}

// ProjectFiles returns every file c.WithProject(dir, ...) reads that is not
// among c.Files, existing or not: the package-level ProjectFiles(dir), then
// the project files of c's imports (dir/.vscode/mcp.json, ...). Watch them
// for sessions working in dir.
func (c *Config) ProjectFiles(dir string) []string {
	if dir == "" {
		return nil
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	files := ProjectFiles(dir)
	for _, kind := range c.Imports {
		for _, cand := range projectImportCandidates(kind, dir) {
			files = appendNew(files, cand.path)
		}
	}
	return files
}

// WithProject returns the config a session whose working directory is dir
// sees. c must come from Load (or Parse); it is not modified.
//
// The user's servers come first, as c has them, plus the servers Claude
// Code stored for dir in ~/.claude.json (the user wrote those). The
// project's files then add to them, in this order, first definition of a
// name winning among them:
//
//  1. dir/.pi/mcp.json, then dir/.mcp.json;
//  2. the project's own file of each import, in import order
//     (dir/.vscode/mcp.json, dir/.cursor/mcp.json, dir/opencode.json(c)).
//
// They count only when trust covers dir (see TrustStore). A name the user
// does not define is the project's server. A name the user defines stays
// the user's server — its command, args, env, url, headers and every
// other field — and the project's entries of that name only narrow it
// (see narrowByProject): a project never widens what the user allowed.
// When trust does not cover dir, the project's servers are listed, with
// Untrusted set and Enabled false, under names no other server uses, and
// a warning says how to trust dir.
//
// A stdio server from a project file without cwd runs in dir, as agents
// run it; its identity hash includes dir, so sessions in the same
// directory share it and other directories get their own. When such a
// definition is otherwise identical to one of the user's own servers
// (from mcpgw's file or an import), it is that server: same cwd, same
// hash, one upstream.
//
// The result's Files are c.Files plus every project file looked at
// (existing or not), and its Hash covers c.Hash, dir, whether dir is
// trusted and the project files' server definitions: equal hashes mean the
// session sees the same servers. Warnings are c.Warnings followed by the
// project's. A trusted project file that does not parse or validate is an
// error (the caller keeps the session's previous view); problems in an
// untrusted one are warnings. opts nil means the options c was loaded with
// (the usual call is c.WithProject(cwd, c.Trust, nil)); dir "" returns c.
// It is safe to call concurrently.
func (c *Config) WithProject(dir string, trust *TrustStore, opts *LoadOptions) (*Config, error) {
	if dir == "" {
		return c, nil
	}
	if opts == nil {
		opts = c.opts
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("project directory: %w", err)
	}
	p := &projectRead{dir: dir, trusted: trust.Trusted(dir), projImports: map[string][]*sourceFile{}}
	if err := c.readProject(p, opts); err != nil {
		return nil, err
	}
	userSrcs, projSrcs, repoSrcs := c.arrangeProject(p)
	c.sameAsUser(append(slices.Clip(userSrcs), projSrcs...))
	return c.projectConfig(p, userSrcs, projSrcs, repoSrcs), nil
}

// projectRead is what WithProject read for a project directory.
type projectRead struct {
	dir         string
	trusted     bool
	overlays    []*sourceFile            // the project's own files
	projImports map[string][]*sourceFile // by import kind: the project's files of that tool
	claudeLocal *sourceFile              // ~/.claude.json's servers for dir (user-written, so trusted)
	files       []string                 // every file read
	warns       []string
}

// readProject reads dir's project files, the project files of the
// imported tools, and Claude Code's per-project servers.
func (c *Config) readProject(p *projectRead, opts *LoadOptions) error {
	user := &sourceReader{opts: opts, settings: &c.Settings, configPath: c.Path, project: p.dir}
	repo := &sourceReader{opts: opts, settings: &c.Settings, configPath: c.Path, project: p.dir, untrusted: !p.trusted}
	var errs []error
	read := func(r *sourceReader, kind string, cand candidate) *sourceFile {
		p.files = append(p.files, cand.path)
		sf, w, err := r.read(kind, cand)
		p.warns = append(p.warns, w...)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		return sf
	}
	for _, f := range ProjectFiles(p.dir) {
		if sf := read(repo, kindProject, candidate{f, formatMCPServers}); sf != nil {
			p.overlays = append(p.overlays, sf)
		}
	}
	seen := map[string]bool{}
	for _, kind := range c.Imports {
		if seen[kind] {
			continue
		}
		seen[kind] = true
		for _, cand := range projectImportCandidates(kind, p.dir) {
			if sf := read(repo, kind, cand); sf != nil {
				p.projImports[kind] = append(p.projImports[kind], sf)
			}
		}
	}
	for _, sf := range c.sources {
		if sf.kind != ImportClaudeCode || sf.projects == nil {
			continue
		}
		servers, ok := sf.projects[p.dir].(map[string]any)
		if !ok {
			servers, ok = sf.projects[realDir(p.dir)].(map[string]any)
		}
		if !ok {
			continue
		}
		parsed, w, err := user.parseServers(sf.path, formatClaudeJSON, "mcpServers", servers)
		p.warns = append(p.warns, w...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.claudeLocal = &sourceFile{kind: ImportClaudeCode, path: sf.path, servers: parsed.servers, plainHash: parsed.plainHash}
		break
	}
	return errors.Join(errs...)
}

// arrangeProject orders the sources: the user's (with ~/.claude.json's
// servers for dir among the claude-code import's); the project's files,
// its own first, in projSrcs when it is trusted, else in repoSrcs.
func (c *Config) arrangeProject(p *projectRead) (userSrcs, projSrcs, repoSrcs []*sourceFile) {
	for i, sf := range c.sources {
		if sf.kind == ImportClaudeCode && p.claudeLocal != nil && (i == 0 || c.sources[i-1].kind != ImportClaudeCode) {
			userSrcs = append(userSrcs, p.claudeLocal)
		}
		userSrcs = append(userSrcs, sf)
	}
	proj := append(slices.Clip(p.overlays), flatten(c.Imports, p.projImports)...)
	if p.trusted {
		return userSrcs, proj, nil
	}
	return userSrcs, nil, proj
}

// sameAsUser makes project servers identical to a user server that server
// (its working directory and identity).
func (c *Config) sameAsUser(userSrcs []*sourceFile) {
	byHash := map[string]*Server{}
	for _, sf := range c.sources {
		for _, s := range sf.servers {
			byHash[s.Hash] = s
		}
	}
	for _, sf := range userSrcs {
		for name, h := range sf.plainHash {
			if base, ok := byHash[h]; ok {
				s := *sf.servers[name]
				s.Cwd, s.Hash = base.Cwd, base.Hash
				sf.servers[name] = &s
			}
		}
	}
}

// projectConfig builds the merged configuration: user sources first, then
// a trusted project's (narrowing the user's servers, adding its own), then
// the names only untrusted sources define, listed but not started.
func (c *Config) projectConfig(p *projectRead, userSrcs, projSrcs, repoSrcs []*sourceFile) *Config {
	out := *c
	out.Servers = mergeSources(userSrcs)
	narrowWarns := narrowByProject(out.Servers, projSrcs, &c.Settings)
	allSrcs := append(slices.Clip(userSrcs), projSrcs...)
	overrideWarns := applyOverrides(out.Servers, allSrcs, &c.Settings)
	untrustedCount := 0
	for _, sf := range repoSrcs {
		for name, s := range sf.servers {
			if _, taken := out.Servers[name]; taken {
				continue
			}
			out.Servers[name] = s
			untrustedCount++
		}
	}
	out.sources = allSrcs
	out.Files = slices.Clone(c.Files)
	names := []string{"", "", ""}
	data := [][]byte{[]byte(c.Hash), []byte(p.dir), []byte(fmt.Sprint(p.trusted))}
	for _, f := range p.files {
		out.Files = appendNew(out.Files, f)
	}
	for _, sf := range append(slices.Clip(p.overlays), flatten(c.Imports, p.projImports)...) {
		names = append(names, sf.path)
		data = append(data, sf.canon)
	}
	out.Hash = hashFiles(names, data)
	out.Warnings = append(slices.Clip(c.Warnings), p.warns...)
	out.Warnings = append(out.Warnings, narrowWarns...)
	for _, w := range overrideWarns {
		if !slices.Contains(c.Warnings, w) { // the user's own files' are there already
			out.Warnings = append(out.Warnings, w)
		}
	}
	if !p.trusted && untrustedCount > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s: not trusted, so its %d project server(s) are listed but not started; to allow them: mcpgw trust %s", p.dir, untrustedCount, p.dir))
	}
	return &out
}

func flatten(kinds []string, byKind map[string][]*sourceFile) []*sourceFile {
	var out []*sourceFile
	seen := map[string]bool{}
	for _, k := range kinds {
		if !seen[k] {
			seen[k] = true
			out = append(out, byKind[k]...)
		}
	}
	return out
}
