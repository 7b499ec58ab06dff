package deploy

import (
	"bytes"
	"context"
	"embed"
	"encoding/xml"
	"errors"
	"fmt"
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
// What it does is told as ServiceEvents; cmd/mcpgw says it in words.

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

// Service is mcpgw's per-user service on this system: it installs,
// removes and reports on it. Not for concurrent use.
type Service struct {
	goos       string
	home       string
	configHome string // $XDG_CONFIG_HOME, or ~/.config
	uid        int
	unit       serviceUnit // set by Install unless already set (tests)
	run        commandRunner
	systemd    func(context.Context) int // systemd's version (nil: unknown)
	dryRun     bool
	events     func(ServiceEvent)
}

// ServiceOptions configure a Service; nil means real changes, told to
// nobody.
type ServiceOptions struct {
	// DryRun has the Service say what it would write, remove and run,
	// and do none of it.
	DryRun bool
	// Events is told each step as it happens (nil: nobody).
	Events func(ServiceEvent)
}

// ServiceEvent is one step of an install, uninstall or status, told as it
// happens (in a dry run, as it would): the service file written or
// removed, a command run, what it printed, a failure that is fine.
type ServiceEvent struct {
	Kind   ServiceEventKind
	DryRun bool
	// Path is the service file (ServiceWrite, ServiceRemove).
	Path string
	// Data is the file's content (ServiceWrite) or all a command printed
	// (ServiceOutput).
	Data []byte
	// Command is the command run (ServiceRun, and ServiceFailureOK for
	// the one that failed).
	Command []string
	// Err is why the command failed (ServiceFailureOK).
	Err error
}

// ServiceEventKind says what a ServiceEvent is about.
type ServiceEventKind int

const (
	ServiceWrite     ServiceEventKind = iota + 1 // the service file is written
	ServiceRemove                                // the service file is removed
	ServiceRun                                   // a command is run
	ServiceOutput                                // what the command printed
	ServiceFailureOK                             // the command failed where that is expected (stopping a service that is not running)
)

// CommandLine is the event's command as a person would type it.
func (e ServiceEvent) CommandLine() string { return shellJoin(e.Command) }

// ServiceManager names the service manager that runs the daemon.
type ServiceManager string

const (
	Systemd ServiceManager = "systemd" // a systemd user unit
	Launchd ServiceManager = "launchd" // a launchd agent
)

// Installation is what Install set up (or, in a dry run, would have).
type Installation struct {
	File    string
	Manager ServiceManager
	Name    string // the unit's name (mcpgw.service) or the agent's label
	PATH    string // the PATH the daemon and its upstreams get
	// Log is the daemon's log file under launchd; empty under systemd,
	// whose journal keeps it.
	Log string
}

// step is one command of an operation. mayFail marks commands whose failure
// is expected in some states, such as stopping a service that is not loaded.
type step struct {
	args    []string
	mayFail bool
}

// NewService describes the service of this user and this system.
func NewService(opts *ServiceOptions) (*Service, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	s := &Service{
		goos: runtime.GOOS, home: home, configHome: configHome(home), uid: os.Getuid(),
		run: execRunner,
		systemd: func(ctx context.Context) int {
			out, _ := execRunner(ctx, "systemctl", "--version")
			return systemdVersion(out)
		},
	}
	if opts != nil {
		s.dryRun, s.events = opts.DryRun, opts.Events
	}
	return s, nil
}

// configHome is $XDG_CONFIG_HOME, or ~/.config when it is unset or not
// absolute.
func configHome(home string) string {
	if dir := os.Getenv("XDG_CONFIG_HOME"); dir != "" && filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(home, ".config")
}

// thisUnit describes this binary, run with this shell's PATH.
func (s *Service) thisUnit() (serviceUnit, error) {
	exe, err := serviceExe()
	if err != nil {
		return serviceUnit{}, err
	}
	u := serviceUnit{Exe: exe, Path: servicePath(os.Getenv("PATH"), s.goos), Home: s.home}
	if s.goos == "darwin" {
		u.Socket = DefaultSocket()
	}
	return u, nil
}

func (s *Service) tell(e ServiceEvent) {
	if s.events != nil {
		e.DryRun = s.dryRun
		s.events(e)
	}
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

// File is the path of the service file.
func (m *Service) File() (string, error) {
	switch m.goos {
	case "linux":
		return filepath.Join(m.configHome, "systemd", "user", systemdUnitName), nil
	case "darwin":
		return filepath.Join(m.home, "Library", "LaunchAgents", launchdLabel+".plist"), nil
	}
	return "", fmt.Errorf("mcpgw service supports Linux (systemd) and macOS (launchd), not %s; run `mcpgw serve` under your own supervisor", m.goos)
}

// Installed says whether the service file is there.
func (m *Service) Installed() (file string, installed bool, err error) {
	path, err := m.File()
	if err != nil {
		return "", false, err
	}
	_, err = os.Stat(path)
	return path, err == nil, nil
}

func (m *Service) launchdTarget() string { return "gui/" + strconv.Itoa(m.uid) }

// Install writes the service file for this binary and this shell's PATH
// and (re)starts the service.
func (m *Service) Install(ctx context.Context) (*Installation, error) {
	path, err := m.File()
	if err != nil {
		return nil, err
	}
	if m.unit.Exe == "" {
		if m.unit, err = m.thisUnit(); err != nil {
			return nil, err
		}
	}
	if m.goos == "linux" && m.systemd != nil {
		m.unit.NotifyReload = m.systemd(ctx) >= 253
	}
	data, err := renderService(m.goos, m.unit)
	if err != nil {
		return nil, err
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
	if !m.dryRun {
		for _, d := range append(dirs, filepath.Dir(path)) {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
		}
		if err := writeFileAtomic(path, data, 0o644); err != nil {
			return nil, err
		}
	}
	m.tell(ServiceEvent{Kind: ServiceWrite, Path: path, Data: data})
	if err := m.runSteps(ctx, steps); err != nil {
		return nil, err
	}
	inst := &Installation{File: path, PATH: m.unit.Path}
	switch m.goos {
	case "linux":
		inst.Manager, inst.Name = Systemd, systemdUnitName
	case "darwin":
		inst.Manager, inst.Name, inst.Log = Launchd, launchdLabel, filepath.Join(m.home, "Library", "Logs", "mcpgw.log")
	}
	return inst, nil
}

// Uninstall stops the service and removes its file. installed is false,
// and nothing is done, when there is no file.
func (m *Service) Uninstall(ctx context.Context) (installed bool, err error) {
	path, err := m.File()
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
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
		return true, err
	}
	if !m.dryRun {
		if err := os.Remove(path); err != nil {
			return true, err
		}
	}
	m.tell(ServiceEvent{Kind: ServiceRemove, Path: path})
	return true, m.runSteps(ctx, after)
}

// Status runs the service manager's status command for the service; its
// error says the service is not running (or the manager cannot tell).
func (m *Service) Status(ctx context.Context) error {
	if _, err := m.File(); err != nil {
		return err
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

// runSteps tells of each command, then runs it and tells its output. A
// dry run tells of the commands only. It stops at the first failure of a
// step that must not fail.
func (m *Service) runSteps(ctx context.Context, steps []step) error {
	for _, s := range steps {
		m.tell(ServiceEvent{Kind: ServiceRun, Command: s.args})
		if m.dryRun {
			continue
		}
		line := shellJoin(s.args)
		out, err := m.run(ctx, s.args[0], s.args[1:]...)
		if len(out) > 0 {
			m.tell(ServiceEvent{Kind: ServiceOutput, Data: out})
		}
		if err != nil {
			if s.mayFail {
				m.tell(ServiceEvent{Kind: ServiceFailureOK, Command: s.args, Err: err})
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
