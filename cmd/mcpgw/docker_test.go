package main

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
	"github.com/mcpgw/mcpgw/internal/proctest"
)

func TestDockerHealthcheck(t *testing.T) {
	t.Parallel()
	healthy := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		if !healthy {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	}))
	defer srv.Close()
	ctx := context.Background()

	var out bytes.Buffer
	if err := run(ctx, []string{"healthcheck", "--url", srv.URL + "/"}, nil, &out, &out); err != nil {
		t.Fatalf("healthcheck of a healthy daemon: %v", err)
	}
	if got, want := out.String(), srv.URL+"/healthz: ok\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}

	healthy = false
	err := run(ctx, []string{"healthcheck", "--url", srv.URL}, nil, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("healthcheck of an unhealthy daemon = %v, want the 503 and its body", err)
	}

	srv.Close()
	if err := run(ctx, []string{"healthcheck", "--url", srv.URL, "--timeout", "2s"}, nil, &out, &out); err == nil {
		t.Error("healthcheck with nothing listening = nil, want an error")
	}
}

// TestDockerHealthcheckDaemon runs the real daemon: the HEALTHCHECK of the
// image must pass against it, MCPGW_URL being how a container would point
// the check elsewhere.
func TestDockerHealthcheckDaemon(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("NOTIFY_SOCKET", "") // never report to a service manager running the tests
	addr := "127.0.0.1:" + strconv.Itoa(e2e.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	var log proctest.Buffer
	var serveErr error
	exited := make(chan struct{})
	go func() {
		serveErr = run(ctx, []string{"serve", "--listen", addr, "--socket", "",
			"--config", filepath.Join(dir, "mcp.json"), "--cache", filepath.Join(dir, "cache.json"), "--no-bootstrap"}, nil, &log, &log)
		close(exited)
	}()
	defer func() { cancel(); <-exited }()
	t.Setenv("MCPGW_URL", "http://"+addr)
	var err error
	for range 200 {
		if err = run(ctx, []string{"healthcheck", "--timeout", "1s"}, nil, io.Discard, io.Discard); err == nil {
			return
		}
		select {
		case <-exited:
			t.Fatalf("serve exited: %v\n%s", serveErr, log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("healthcheck against the daemon at %s: %v\n%s", addr, err, log.String())
}

// instruction is one Dockerfile instruction after line continuations are
// joined: Cmd upper-cased, Flags the leading --options, Args the rest.
type instruction struct {
	Line  int
	Cmd   string
	Flags []string
	Args  string
}

type stage struct {
	Name, Base string
	Flags      []string
	Insts      []instruction
}

// parseDockerfile reads a Dockerfile the way the builder does: comment and
// empty lines (also inside a continued instruction) are dropped, a trailing
// backslash joins the next line without the backslash and newline.
func parseDockerfile(data string) ([]stage, []instruction, error) {
	var insts []instruction
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(data, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || trimmed == "" {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`))
			continue
		}
		cur.WriteString(line)
		text := strings.TrimSpace(cur.String())
		cur.Reset()
		cmd, rest, _ := strings.Cut(text, " ")
		in := instruction{Line: start, Cmd: strings.ToUpper(cmd)}
		rest = strings.TrimSpace(rest)
		for strings.HasPrefix(rest, "--") {
			var flag string
			flag, rest, _ = strings.Cut(rest, " ")
			in.Flags = append(in.Flags, flag)
			rest = strings.TrimSpace(rest)
		}
		in.Args = rest
		insts = append(insts, in)
	}
	if cur.Len() > 0 {
		return nil, nil, errors.New("the last instruction ends in a line continuation")
	}
	var stages []stage
	var global []instruction
	for _, in := range insts {
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			st := stage{Base: f[0], Flags: in.Flags}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.Name = f[2]
			} else if len(f) != 1 {
				return nil, nil, fmt.Errorf("line %d: FROM %s: want IMAGE [AS NAME]", in.Line, in.Args)
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			if in.Cmd != "ARG" {
				return nil, nil, fmt.Errorf("line %d: %s before the first FROM", in.Line, in.Cmd)
			}
			global = append(global, in)
			continue
		}
		stages[len(stages)-1].Insts = append(stages[len(stages)-1].Insts, in)
	}
	return stages, global, nil
}

func (s stage) all(cmd string) []instruction {
	var r []instruction
	for _, in := range s.Insts {
		if in.Cmd == cmd {
			r = append(r, in)
		}
	}
	return r
}

// one returns the stage's only cmd instruction.
func (s stage) one(t *testing.T, cmd string) instruction {
	t.Helper()
	r := s.all(cmd)
	if len(r) != 1 {
		t.Fatalf("stage %s has %d %s instructions, want 1", s.Name, len(r), cmd)
	}
	return r[0]
}

func execForm(t *testing.T, in instruction) []string {
	t.Helper()
	var v []string
	if err := json.Unmarshal([]byte(in.Args), &v); err != nil {
		t.Fatalf("line %d: %s %s is not in exec form: %v", in.Line, in.Cmd, in.Args, err)
	}
	return v
}

func readDockerfile(t *testing.T) ([]stage, []instruction) {
	t.Helper()
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	stages, global, err := parseDockerfile(string(data))
	if err != nil {
		t.Fatal(err)
	}
	return stages, global
}

func TestDockerfile(t *testing.T) {
	t.Parallel()
	stages, global := readDockerfile(t)
	var names []string
	byName := map[string]stage{}
	for _, s := range stages {
		names = append(names, s.Name)
		byName[s.Name] = s
	}
	// The last stage is what a plain `docker build .` produces.
	if want := []string{"build", "init", "with-node", "static"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("stages %v, want %v", names, want)
	}

	// The Go image follows go.mod.
	gomod, _ := os.ReadFile("../../go.mod")
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("no go line in go.mod")
	}
	if !containsInst(global, "GO_VERSION="+string(m[1])) {
		t.Errorf("ARG GO_VERSION is not %s, the go.mod version", m[1])
	}
	build := byName["build"]
	if build.Base != "docker.io/library/golang:${GO_VERSION}-bookworm" || !slices.Contains(build.Flags, "--platform=$BUILDPLATFORM") {
		t.Errorf("build stage FROM %v %s, want --platform=$BUILDPLATFORM docker.io/library/golang:${GO_VERSION}-bookworm", build.Flags, build.Base)
	}
	// Base images are named in full: a registry host first.
	for _, s := range stages {
		if _, isStage := byName[s.Base]; isStage {
			continue
		}
		if host, _, _ := strings.Cut(s.Base, "/"); !strings.Contains(host, ".") {
			t.Errorf("FROM %s: not a fully qualified image name (registry host first)", s.Base)
		}
	}
	var gobuild string
	for _, in := range build.all("RUN") {
		if strings.Contains(in.Args, "go build") {
			gobuild = in.Args
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", `GOOS="$TARGETOS"`, `GOARCH="$TARGETARCH"`, "-trimpath", `-ldflags "-s -w -X main.version=$VERSION"`, "-o /out/mcpgw ./cmd/mcpgw"} {
		if !strings.Contains(gobuild, want) {
			t.Errorf("the go build step %q lacks %s", gobuild, want)
		}
	}

	wantCmd := []string{"serve", "--listen", "0.0.0.0:7332", "--allow-remote", "--config", "/config/mcp.json", "--cache", "/data/mcp-cache.json", "--socket", ""}
	for _, tc := range []struct{ stage, base, user, chown string }{
		{"with-node", "docker.io/library/node:${NODE_VERSION}-bookworm-slim", "node", "--chown=node:node"},
		{"static", "gcr.io/distroless/static-debian12:nonroot", "65532:65532", "--chown=65532:65532"},
	} {
		s := byName[tc.stage]
		if s.Base != tc.base {
			t.Errorf("%s: FROM %s, want %s", tc.stage, s.Base, tc.base)
		}
		if u := s.one(t, "USER").Args; u != tc.user {
			t.Errorf("%s: USER %s, want %s", tc.stage, u, tc.user)
		}
		// The volume directories belong to that user, so a fresh named
		// volume is writable by it.
		for _, dir := range []string{"/config", "/data"} {
			found := false
			for _, in := range s.all("COPY") {
				if strings.HasSuffix(in.Args, " "+dir) && slices.Contains(in.Flags, tc.chown) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no COPY %s ... %s", tc.stage, tc.chown, dir)
			}
		}
		if v := execForm(t, s.one(t, "VOLUME")); !reflect.DeepEqual(v, []string{"/config", "/data"}) {
			t.Errorf("%s: VOLUME %v, want [/config /data]", tc.stage, v)
		}
		if e := s.one(t, "EXPOSE").Args; e != "7332" {
			t.Errorf("%s: EXPOSE %s, want 7332", tc.stage, e)
		}
		hc := s.one(t, "HEALTHCHECK")
		hcCmd, hcArgs, _ := strings.Cut(hc.Args, " ")
		if hcCmd != "CMD" || !reflect.DeepEqual(execForm(t, instruction{Line: hc.Line, Cmd: "HEALTHCHECK", Args: hcArgs}), []string{"/usr/local/bin/mcpgw", "healthcheck"}) {
			t.Errorf("%s: HEALTHCHECK %s, want CMD [\"/usr/local/bin/mcpgw\", \"healthcheck\"]", tc.stage, hc.Args)
		}
		if ep := execForm(t, s.one(t, "ENTRYPOINT")); !reflect.DeepEqual(ep, []string{"/usr/bin/tini", "--", "/usr/local/bin/mcpgw"}) {
			t.Errorf("%s: ENTRYPOINT %q, want tini running mcpgw", tc.stage, ep)
		}
		if c := execForm(t, s.one(t, "CMD")); !reflect.DeepEqual(c, wantCmd) {
			t.Errorf("%s: CMD %q, want %q", tc.stage, c, wantCmd)
		}
	}

	// COPY --from names an earlier stage; RUN steps are valid shell.
	seen := map[string]bool{}
	for _, s := range stages {
		for _, in := range s.Insts {
			for _, f := range in.Flags {
				if from, ok := strings.CutPrefix(f, "--from="); ok && !seen[from] {
					t.Errorf("line %d: COPY --from=%s, no earlier stage of that name", in.Line, from)
				}
			}
			if in.Cmd == "RUN" {
				for _, sh := range []string{"sh", "bash"} {
					if out, err := exec.Command(sh, "-n", "-c", in.Args).CombinedOutput(); err != nil {
						t.Errorf("line %d: RUN is not valid %s: %v\n%s\n%s", in.Line, sh, err, in.Args, out)
					}
				}
			}
		}
		seen[s.Name] = true
	}
}

func containsInst(insts []instruction, args string) bool {
	for _, in := range insts {
		if in.Args == args {
			return true
		}
	}
	return false
}

// TestDockerParse: the parser used above sees what the builder sees.
func TestDockerParse(t *testing.T) {
	t.Parallel()
	stages, global, err := parseDockerfile("# syntax=docker/dockerfile:1\nARG V=1\nFROM --platform=$P a:b AS one\n# c\nRUN echo a \\\n# inside\n    && echo b\nCOPY --from=one --chown=x:y /a /b\nFROM c\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []stage{
		{Name: "one", Base: "a:b", Flags: []string{"--platform=$P"}, Insts: []instruction{
			{Line: 5, Cmd: "RUN", Args: "echo a     && echo b"},
			{Line: 8, Cmd: "COPY", Flags: []string{"--from=one", "--chown=x:y"}, Args: "/a /b"},
		}},
		{Base: "c"},
	}
	if !reflect.DeepEqual(stages, want) || len(global) != 1 || global[0].Args != "V=1" {
		t.Errorf("parsed\n%+v\n%+v\nwant\n%+v", stages, global, want)
	}
	if _, _, err := parseDockerfile("FROM a\nRUN x \\\n"); err == nil {
		t.Error("a dangling continuation parsed without error")
	}
	if _, _, err := parseDockerfile("RUN x\nFROM a\n"); err == nil {
		t.Error("RUN before FROM parsed without error")
	}
}

// dockerignored reports whether the .dockerignore patterns keep path (a
// slash-separated path relative to the context) out of the build context.
// It follows the builder's rules: a pattern also excludes everything under
// a matched directory, ** matches any number of directories, and a later
// !pattern re-includes.
func dockerignored(patterns []string, path string) bool {
	ignored := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(strings.TrimPrefix(p, "!"), "/")
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(p); i++ {
			switch c := p[i]; {
			case strings.HasPrefix(p[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(p[i:], "**"):
				re.WriteString(".*")
				i++
			case c == '*':
				re.WriteString("[^/]*")
			case c == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString("(/.*)?$")
		if regexp.MustCompile(re.String()).MatchString(path) {
			ignored = !neg
		}
	}
	return ignored
}

func readDockerignore(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	return patterns
}

func TestDockerignore(t *testing.T) {
	t.Parallel()
	patterns := readDockerignore(t)
	for _, p := range []string{
		"cmd/mcpgw/testdata/e2e/node_modules/ajv/package.json",
		"node_modules/x",
		".git/config",
		"mcpgw",
		"cmd/mcpgw/mcpgw.test",
	} {
		if !dockerignored(patterns, p) {
			t.Errorf(".dockerignore lets %s into the build context", p)
		}
	}
	// Everything the build reads must be there: go.mod, go.sum and every
	// file of every package of this module that cmd/mcpgw needs.
	need := []string{"go.mod", "go.sum", "cmd/mcpgw/service/mcpgw.service.tmpl", "cmd/mcpgw/service/io.mcpgw.mcpgw.plist.tmpl"}
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{end}}`, "github.com/mcpgw/mcpgw/cmd/mcpgw").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, _ := filepath.Abs("../..")
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		rel, err := filepath.Rel(root, f[0])
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // a dependency from the module cache
		}
		for _, file := range f[1:] {
			need = append(need, filepath.ToSlash(filepath.Join(rel, file)))
		}
	}
	if len(need) < 10 {
		t.Fatalf("go list found only %v", need)
	}
	for _, p := range need {
		if dockerignored(patterns, p) {
			t.Errorf(".dockerignore keeps %s out of the build context, which needs it", p)
		}
	}
}

func TestDockerignoreMatching(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		patterns []string
		path     string
		want     bool
	}{
		{[]string{"**/node_modules"}, "a/b/node_modules/c", true},
		{[]string{"**/node_modules"}, "node_modules", true},
		{[]string{"**/*.test"}, "cmd/x.test", true},
		{[]string{"/mcpgw"}, "cmd/mcpgw/main.go", false},
		{[]string{"/mcpgw"}, "mcpgw", true},
		{[]string{"deploy"}, "deploy/systemd/mcpgw.service", true},
		{[]string{"deploy", "!deploy/keep"}, "deploy/keep", false},
		{[]string{".git"}, ".gitignore", false},
	} {
		if got := dockerignored(tc.patterns, tc.path); got != tc.want {
			t.Errorf("dockerignored(%q, %q) = %v, want %v", tc.patterns, tc.path, got, tc.want)
		}
	}
}

// TestDockerBuildSteps runs the build stage's RUN steps as the shell
// commands they are, with /out moved to a temporary directory, and checks
// the binary they make: static, stripped, free of local paths, stamped
// with the version. It compiles everything once more, so -short skips it.
func TestDockerBuildSteps(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("compiles the release binary")
	}
	stages, _ := readDockerfile(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	const version = "v9.9.9-docker-test"
	steps := 0
	for _, s := range stages {
		if s.Name != "build" {
			continue
		}
		for _, in := range s.all("RUN") {
			script := strings.ReplaceAll(in.Args, "/out/", out+"/")
			cmd := exec.Command("sh", "-c", script)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "TARGETOS="+runtime.GOOS, "TARGETARCH="+runtime.GOARCH, "VERSION="+version)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("line %d: %s: %v\n%s", in.Line, script, err, b)
			}
			steps++
		}
	}
	if steps != 3 {
		t.Errorf("ran %d RUN steps of the build stage, want 3 (download, build, volume directories)", steps)
	}
	for _, dir := range []string{"config", "data"} {
		if fi, err := os.Stat(filepath.Join(out, dir)); err != nil || !fi.IsDir() {
			t.Errorf("the build stage made no /out/%s: %v", dir, err)
		}
	}

	bin := filepath.Join(out, "mcpgw")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a program interpreter: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
	if f.Section(".symtab") != nil {
		t.Error("the binary has a symbol table: -s did not strip it")
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(root+"/")) {
		t.Errorf("the binary contains the source path %s: -trimpath missing", root)
	}
	got, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "mcpgw " + version + "\n"; string(got) != want {
		t.Errorf("mcpgw version printed %q, want %q", got, want)
	}
}
