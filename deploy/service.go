package deploy

import (
	"bytes"
	"context"
	"embed"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/template"
)

// `mcpgw service` installs the daemon as a per-user service: a systemd user
// unit on Linux, a launchd agent on macOS. The files come from the templates
// in service/; deploy/systemd and deploy/launchd hold the same templates
// rendered with defaultServiceUnit, and a test keeps the two identical.

const (
	systemdUnitName = "mcpgw.service"
	launchdLabel    = "io.mcpgw.mcpgw"
)

//go:embed service/*.tmpl
var serviceTemplates embed.FS

var serviceTmpl = template.Must(template.New("").Funcs(template.FuncMap{
	"systemdExe":   systemdExe,
	"systemdQuote": systemdQuote,
	"xml":          xmlText,
}).ParseFS(serviceTemplates, "service/*.tmpl"))

// serviceUnit is what the service files say about this installation.
type serviceUnit struct {
	Exe  string // absolute path of the mcpgw binary
	Path string // PATH for the daemon and the upstreams it starts
	Home string // the user's home directory (launchd expands no ~)
	// Socket is the shim's socket path, given to the daemon explicitly on
	// macOS where launchd's environment may not match the shell's
	// $TMPDIR. Empty leaves the daemon's default.
	Socket string
	// NotifyReload selects Type=notify-reload (systemd 253 and later:
	// systemd sends SIGHUP itself and waits for RELOADING=1 and READY=1)
	// over Type=notify with ExecReload.
	NotifyReload bool
}

// defaultServiceUnit is the installation the files in deploy/ describe.
func defaultServiceUnit(goos string) serviceUnit {
	if goos == "darwin" {
		return serviceUnit{
			Exe:  "/usr/local/bin/mcpgw",
			Path: "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
			Home: "/Users/USERNAME",
		}
	}
	return serviceUnit{Exe: "/usr/local/bin/mcpgw", Path: "/usr/local/bin:/usr/bin:/bin"}
}

// renderService returns the service file for goos.
func renderService(goos string, u serviceUnit) ([]byte, error) {
	name := "mcpgw.service.tmpl"
	if goos == "darwin" {
		name = launchdLabel + ".plist.tmpl"
	}
	var b bytes.Buffer
	if err := serviceTmpl.ExecuteTemplate(&b, name, u); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// systemdExe writes the executable path of an Exec*= line: % starts a
// specifier, a path with blanks or quotes is quoted. No variables are
// expanded in the path itself, so $ stays as it is.
func systemdExe(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\;") {
		return strings.ReplaceAll(s, "%", "%%")
	}
	return systemdQuote(s)
}

// systemdQuote double-quotes a value for systemd, where \ and " are escaped
// and % still starts a specifier. ($ is literal in Environment=.)
func systemdQuote(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "\n", `\n`).Replace(s)
	return `"` + s + `"`
}

func xmlText(s string) (string, error) {
	var b strings.Builder
	if err := xml.EscapeText(&b, []byte(s)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// commandRunner runs one command and returns its combined output. Tests
// replace it to record commands instead of touching the service manager.
type commandRunner func(ctx context.Context, name string, args ...string) ([]byte, error)

// systemdVersion reads the version from `systemctl --version` ("systemd
// 255 (255.4-1ubuntu8)"); 0 if it says none.
func systemdVersion(out []byte) int {
	f := strings.Fields(string(out))
	if len(f) < 2 || f[0] != "systemd" {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

func execRunner(ctx context.Context, name string, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

// serviceManager installs, removes and reports on the per-user service.
type serviceManager struct {
	goos       string
	home       string
	configHome string // $XDG_CONFIG_HOME, or ~/.config
	uid        int
	unit       serviceUnit
	run        commandRunner
	systemd    func(context.Context) int // systemd's version (nil: unknown)
	dryRun     bool
	out        io.Writer
}

// step is one command of an operation. mayFail marks commands whose failure
// is expected in some states, such as stopping a service that is not loaded.
type step struct {
	args    []string
	mayFail bool
}

// ServiceCommand is `mcpgw service ACTION [--dry-run]`: install, uninstall
// or report on the per-user service.
func ServiceCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "usage: mcpgw service install|uninstall|status [--dry-run]"
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintln(stderr, usage)
		return errors.New("no service action given")
	}
	action := args[0]
	flags := flag.NewFlagSet("service "+action, flag.ContinueOnError)
	flags.SetOutput(stderr)
	dryRun := flags.Bool("dry-run", false, "print the file and the commands instead of writing and running them")
	if err := flags.Parse(args[1:]); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("service %s: unexpected argument %q", action, flags.Arg(0))
	}
	m, err := newServiceManager(action)
	if err != nil {
		return err
	}
	m.dryRun, m.out = *dryRun, stdout
	switch action {
	case "install":
		return m.install(ctx)
	case "uninstall":
		return m.uninstall(ctx)
	case "status":
		return m.status(ctx)
	}
	fmt.Fprintln(stderr, usage)
	return fmt.Errorf("unknown service action %q", action)
}

// newServiceManager describes this user and this binary.
func newServiceManager(action string) (*serviceManager, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	configHome := os.Getenv("XDG_CONFIG_HOME")
	if configHome == "" || !filepath.IsAbs(configHome) {
		configHome = filepath.Join(home, ".config")
	}
	m := &serviceManager{
		goos: runtime.GOOS, home: home, configHome: configHome, uid: os.Getuid(),
		run: execRunner,
		systemd: func(ctx context.Context) int {
			out, _ := execRunner(ctx, "systemctl", "--version")
			return systemdVersion(out)
		},
	}
	if action == "install" {
		exe, err := serviceExe()
		if err != nil {
			return nil, err
		}
		m.unit = serviceUnit{Exe: exe, Path: servicePath(os.Getenv("PATH"), m.goos), Home: home}
		if m.goos == "darwin" {
			m.unit.Socket = DefaultSocket()
		}
	}
	return m, nil
}

// serviceExe is the binary the service runs: this one. A symlink it was
// started through (Homebrew's bin, ~/.local/bin) is kept, so that the
// service follows the link when the binary is upgraded.
func serviceExe() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the mcpgw binary: %w", err)
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", fmt.Errorf("finding the mcpgw binary: %w", err)
	}
	if strings.Contains(real, string(filepath.Separator)+"go-build") {
		return "", fmt.Errorf("%s is a temporary `go run` build; install mcpgw (go install ./cmd/mcpgw) and run `mcpgw service install` from there", real)
	}
	if p, err := exec.LookPath(os.Args[0]); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			if r, err := filepath.EvalSymlinks(abs); err == nil && r == real {
				return abs, nil
			}
		}
	}
	return real, nil
}

// servicePath is the PATH the service gets: the installing shell's, so
// upstreams find the same npx, less relative entries and repeats.
func servicePath(env, goos string) string {
	var keep []string
	seen := map[string]bool{}
	for _, dir := range filepath.SplitList(env) {
		if dir == "" || !filepath.IsAbs(dir) || seen[dir] {
			continue
		}
		seen[dir] = true
		keep = append(keep, dir)
	}
	if len(keep) == 0 {
		return defaultServiceUnit(goos).Path
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// file returns the path of the service file.
func (m *serviceManager) file() (string, error) {
	switch m.goos {
	case "linux":
		return filepath.Join(m.configHome, "systemd", "user", systemdUnitName), nil
	case "darwin":
		return filepath.Join(m.home, "Library", "LaunchAgents", launchdLabel+".plist"), nil
	}
	return "", fmt.Errorf("mcpgw service supports Linux (systemd) and macOS (launchd), not %s; run `mcpgw serve` under your own supervisor", m.goos)
}

func (m *serviceManager) launchdTarget() string { return "gui/" + strconv.Itoa(m.uid) }

func (m *serviceManager) install(ctx context.Context) error {
	path, err := m.file()
	if err != nil {
		return err
	}
	if m.goos == "linux" && m.systemd != nil {
		m.unit.NotifyReload = m.systemd(ctx) >= 253
	}
	data, err := renderService(m.goos, m.unit)
	if err != nil {
		return err
	}
	var steps []step
	var dirs []string
	switch m.goos {
	case "linux":
		// restart, not enable --now: a running daemon must pick up a new
		// binary or unit file when install is run again.
		steps = []step{
			{args: []string{"systemctl", "--user", "daemon-reload"}},
			{args: []string{"systemctl", "--user", "enable", systemdUnitName}},
			{args: []string{"systemctl", "--user", "restart", systemdUnitName}},
		}
	case "darwin":
		dirs = []string{filepath.Join(m.home, "Library", "Logs")}
		steps = []step{
			// Unload a previous version; fails when none is loaded.
			{args: []string{"launchctl", "bootout", m.launchdTarget() + "/" + launchdLabel}, mayFail: true},
			{args: []string{"launchctl", "enable", m.launchdTarget() + "/" + launchdLabel}},
			{args: []string{"launchctl", "bootstrap", m.launchdTarget(), path}},
		}
	}
	if m.dryRun {
		fmt.Fprintf(m.out, "dry run: would write %s:\n%s", path, data)
	} else {
		for _, d := range append(dirs, filepath.Dir(path)) {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if err := writeFileAtomic(path, data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(m.out, "wrote %s\n", path)
	}
	if err := m.runSteps(ctx, steps); err != nil {
		return err
	}
	if m.dryRun {
		return nil
	}
	switch m.goos {
	case "linux":
		fmt.Fprintf(m.out, "mcpgw runs as the systemd user service %s (PATH=%s).\nLogs: journalctl --user -u mcpgw -f\n", systemdUnitName, m.unit.Path)
	case "darwin":
		fmt.Fprintf(m.out, "mcpgw runs as the launchd agent %s (PATH=%s).\nLogs: %s\n", launchdLabel, m.unit.Path, filepath.Join(m.home, "Library", "Logs", "mcpgw.log"))
	}
	return nil
}

func (m *serviceManager) uninstall(ctx context.Context) error {
	path, err := m.file()
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(m.out, "not installed: there is no %s\n", path)
		return nil
	}
	var before, after []step
	switch m.goos {
	case "linux":
		before = []step{{args: []string{"systemctl", "--user", "disable", "--now", systemdUnitName}, mayFail: true}}
		after = []step{{args: []string{"systemctl", "--user", "daemon-reload"}}}
	case "darwin":
		before = []step{{args: []string{"launchctl", "bootout", m.launchdTarget() + "/" + launchdLabel}, mayFail: true}}
	}
	if err := m.runSteps(ctx, before); err != nil {
		return err
	}
	if m.dryRun {
		fmt.Fprintf(m.out, "dry run: would remove %s\n", path)
	} else {
		if err := os.Remove(path); err != nil {
			return err
		}
		fmt.Fprintf(m.out, "removed %s\n", path)
	}
	return m.runSteps(ctx, after)
}

func (m *serviceManager) status(ctx context.Context) error {
	path, err := m.file()
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		fmt.Fprintf(m.out, "service file: %s\n", path)
	} else {
		fmt.Fprintf(m.out, "service file: %s (not installed)\n", path)
	}
	var s step
	switch m.goos {
	case "linux":
		s = step{args: []string{"systemctl", "--user", "status", "--no-pager", systemdUnitName}}
	case "darwin":
		s = step{args: []string{"launchctl", "print", m.launchdTarget() + "/" + launchdLabel}}
	}
	if err := m.runSteps(ctx, []step{s}); err != nil {
		return fmt.Errorf("the mcpgw service is not running, or its state is unknown: %w", err)
	}
	return nil
}

// runSteps prints each command, then runs it and prints its output. A dry
// run prints the commands only. It stops at the first failure of a step
// that must not fail.
func (m *serviceManager) runSteps(ctx context.Context, steps []step) error {
	for _, s := range steps {
		line := shellJoin(s.args)
		if m.dryRun {
			fmt.Fprintf(m.out, "dry run: would run %s\n", line)
			continue
		}
		fmt.Fprintf(m.out, "$ %s\n", line)
		out, err := m.run(ctx, s.args[0], s.args[1:]...)
		if len(out) > 0 {
			m.out.Write(out)
			if out[len(out)-1] != '\n' {
				fmt.Fprintln(m.out)
			}
		}
		if err != nil {
			if s.mayFail {
				fmt.Fprintf(m.out, "(%v; that is fine here)\n", err)
				continue
			}
			if bytes.Contains(out, []byte("Failed to connect to bus")) {
				return fmt.Errorf("%s: %w (no systemd user manager answers: log in to a session of your own; after su or sudo, use machinectl shell USER@ instead)", line, err)
			}
			return fmt.Errorf("%s: %w", line, err)
		}
	}
	return nil
}

// shellJoin writes a command the way a person would type it.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,") == "" {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// writeFileAtomic replaces path with data, so a service manager never reads
// half a file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
