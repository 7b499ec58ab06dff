package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"
)

var updateDeploy = flag.Bool("update-deploy", false, "rewrite deploy/systemd and deploy/launchd from the service templates")

// deployFiles maps each GOOS to the file in deploy/ rendered from its template.
var deployFiles = map[string]string{
	"linux":  "systemd/mcpgw.service",
	"darwin": "launchd/io.mcpgw.mcpgw.plist",
}

// TestServiceDeployFilesMatchTemplates keeps deploy/ identical to what
// `mcpgw service install` writes for the default paths.
func TestServiceDeployFilesMatchTemplates(t *testing.T) {
	for goos, path := range deployFiles {
		want, err := renderService(goos, defaultServiceUnit(goos))
		if err != nil {
			t.Fatal(err)
		}
		if *updateDeploy {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestServiceDeployFilesMatchTemplates -update-deploy ./cmd/mcpgw)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the %s template rendered with the default paths; edit deploy/service/*.tmpl and run go test -run TestServiceDeployFilesMatchTemplates -update-deploy ./deploy", path, goos)
		}
	}
}

// recorder is a commandRunner that records commands and fails those listed.
type recorder struct {
	cmds    [][]string
	fail    map[string]error  // by the command joined with spaces
	failOut map[string]string // what a failing command prints, if not the default
}

func (r *recorder) run(_ context.Context, name string, args ...string) ([]byte, error) {
	cmd := append([]string{name}, args...)
	r.cmds = append(r.cmds, cmd)
	line := strings.Join(cmd, " ")
	if err := r.fail[line]; err != nil {
		if out, ok := r.failOut[line]; ok {
			return []byte(out), err
		}
		return []byte("output of failing " + line), err
	}
	return []byte("output of " + line + "\n"), nil
}

// told records the events a Service tells.
type told struct{ events []ServiceEvent }

func (o *told) add(e ServiceEvent) { o.events = append(o.events, e) }

// steps describes the events one per line: "write PATH", "remove PATH",
// "run COMMAND", "output TEXT", "fine ERR", each after "would " in a dry
// run.
func (o *told) steps() []string {
	var out []string
	for _, e := range o.events {
		var s string
		switch e.Kind {
		case ServiceWrite:
			s = "write " + e.Path
		case ServiceRemove:
			s = "remove " + e.Path
		case ServiceRun:
			s = "run " + e.CommandLine()
		case ServiceOutput:
			s = "output " + string(e.Data)
		case ServiceFailureOK:
			s = "fine " + e.CommandLine() + ": " + e.Err.Error()
		default:
			s = fmt.Sprintf("unknown event %+v", e)
		}
		if e.DryRun {
			s = "would " + s
		}
		out = append(out, s)
	}
	return out
}

func checkSteps(t *testing.T, o *told, want ...string) {
	t.Helper()
	if got := o.steps(); !slices.Equal(got, want) {
		t.Errorf("steps told:\n  %q\nwant:\n  %q", got, want)
	}
}

func testService(t *testing.T, goos string) (*Service, *recorder, *told) {
	t.Helper()
	home := t.TempDir()
	rec := &recorder{}
	o := &told{}
	m := &Service{
		goos: goos, home: home, configHome: filepath.Join(home, ".config"), uid: 501,
		unit: serviceUnit{Exe: "/opt/mcpgw/bin/mcpgw", Path: "/home/u/.nvm/versions/node/v22.1.0/bin:/usr/bin:/bin", Home: home},
		run:  rec.run, events: o.add,
	}
	if goos == "darwin" {
		m.unit.Socket = "/var/folders/xy/T/mcpgw-501/mcpgw.sock"
	}
	return m, rec, o
}

func checkCommands(t *testing.T, rec *recorder, want ...string) {
	t.Helper()
	var got []string
	for _, c := range rec.cmds {
		got = append(got, strings.Join(c, " "))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("commands run:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Errorf("%s has mode %v, want %v", path, fi.Mode().Perm(), want)
	}
}

func TestServiceInstallLinux(t *testing.T) {
	m, rec, out := testService(t, "linux")
	inst, err := m.Install(context.Background())
	if err != nil {
		t.Fatalf("install: %v\n%q", err, out.steps())
	}
	unit := filepath.Join(m.home, ".config", "systemd", "user", "mcpgw.service")
	data, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	checkMode(t, unit, 0o644)
	for _, line := range []string{
		"Type=notify",
		"ExecStart=/opt/mcpgw/bin/mcpgw serve --socket %t/mcpgw/mcpgw.sock --log-format text",
		"ExecReload=kill -HUP $MAINPID",
		"Restart=on-failure",
		"KillMode=mixed",
		"TimeoutStopSec=30s",
		`Environment="PATH=/home/u/.nvm/versions/node/v22.1.0/bin:/usr/bin:/bin"`,
		"NoNewPrivileges=yes",
		"WantedBy=default.target",
	} {
		if !hasLine(data, line) {
			t.Errorf("unit file has no line %q:\n%s", line, data)
		}
	}
	// Options that would break upstreams stay off.
	for _, line := range []string{"PrivateTmp=yes", "ProtectHome=yes", "ProtectSystem=strict", "MemoryDenyWriteExecute=yes"} {
		if hasLine(data, line) {
			t.Errorf("unit file sets %s, which breaks upstreams", line)
		}
	}
	checkCommands(t, rec,
		"systemctl --user daemon-reload",
		"systemctl --user enable mcpgw.service",
		"systemctl --user restart mcpgw.service")
	checkSteps(t, out,
		"write "+unit,
		"run systemctl --user daemon-reload",
		"output output of systemctl --user daemon-reload\n",
		"run systemctl --user enable mcpgw.service",
		"output output of systemctl --user enable mcpgw.service\n",
		"run systemctl --user restart mcpgw.service",
		"output output of systemctl --user restart mcpgw.service\n")
	if want := (Installation{File: unit, Manager: Systemd, Name: "mcpgw.service", PATH: "/home/u/.nvm/versions/node/v22.1.0/bin:/usr/bin:/bin"}); inst == nil || *inst != want {
		t.Errorf("installation %+v, want %+v", inst, want)
	}

	// Installing again replaces the file and restarts the running daemon.
	m.unit.Exe = "/opt/mcpgw-2/bin/mcpgw"
	rec.cmds = nil
	if _, err := m.Install(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(unit)
	if !hasLine(data, "ExecStart=/opt/mcpgw-2/bin/mcpgw serve --socket %t/mcpgw/mcpgw.sock --log-format text") {
		t.Errorf("reinstall did not rewrite ExecStart:\n%s", data)
	}
	if n := len(rec.cmds); n != 3 || rec.cmds[2][2] != "restart" {
		t.Errorf("reinstall ran %v, want the same three commands ending in restart", rec.cmds)
	}
	entries, _ := os.ReadDir(filepath.Dir(unit))
	if len(entries) != 1 {
		t.Errorf("%s holds %d entries, want only mcpgw.service (no temporary files)", filepath.Dir(unit), len(entries))
	}
}

// TestServiceInstallNotifyReload: with systemd 253 or later the unit is
// Type=notify-reload, with no ExecReload= (systemd sends SIGHUP itself).
func TestServiceInstallNotifyReload(t *testing.T) {
	for _, tc := range []struct {
		version string
		reload  bool
	}{
		{"systemd 255 (255.4-1ubuntu8)\n+PAM +AUDIT", true},
		{"systemd 253 (253.5)", true},
		{"systemd 252 (252.30-1~deb12u2)", false},
		{"", false},
	} {
		m, _, out := testService(t, "linux")
		m.systemd = func(context.Context) int { return systemdVersion([]byte(tc.version)) }
		if _, err := m.Install(context.Background()); err != nil {
			t.Fatalf("install: %v\n%q", err, out.steps())
		}
		data, err := os.ReadFile(filepath.Join(m.home, ".config", "systemd", "user", "mcpgw.service"))
		if err != nil {
			t.Fatal(err)
		}
		if got := hasLine(data, "Type=notify-reload"); got != tc.reload {
			t.Errorf("%q: Type=notify-reload is %v, want %v:\n%s", tc.version, got, tc.reload, data)
		}
		if got := hasLine(data, "Type=notify"); got == tc.reload {
			t.Errorf("%q: Type=notify is %v, want %v", tc.version, got, !tc.reload)
		}
		if got := hasLine(data, "ExecReload=kill -HUP $MAINPID"); got == tc.reload {
			t.Errorf("%q: ExecReload= is %v, want %v", tc.version, got, !tc.reload)
		}
	}
}

func TestServiceInstallDryRun(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		t.Run(goos, func(t *testing.T) {
			m, rec, out := testService(t, goos)
			m.dryRun = true
			if _, err := m.Install(context.Background()); err != nil {
				t.Fatal(err)
			}
			checkCommands(t, rec) // none
			path, _ := m.File()
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("dry run created %s (stat: %v)", path, err)
			}
			want, _ := renderService(goos, m.unit)
			if len(out.events) == 0 || !bytes.Equal(out.events[0].Data, want) {
				t.Errorf("the dry run does not tell the file it would write first: %q", out.steps())
			}
			if goos == "darwin" {
				checkSteps(t, out, "would write "+path,
					"would run launchctl bootout gui/501/io.mcpgw.mcpgw",
					"would run launchctl enable gui/501/io.mcpgw.mcpgw",
					"would run launchctl bootstrap gui/501 "+path)
			} else {
				checkSteps(t, out, "would write "+path,
					"would run systemctl --user daemon-reload",
					"would run systemctl --user enable mcpgw.service",
					"would run systemctl --user restart mcpgw.service")
			}
		})
	}
}

func TestServiceInstallStopsAtFailure(t *testing.T) {
	m, rec, out := testService(t, "linux")
	rec.fail = map[string]error{"systemctl --user daemon-reload": errors.New("exit status 1")}
	_, err := m.Install(context.Background())
	if err == nil || !strings.Contains(err.Error(), "systemctl --user daemon-reload: exit status 1") {
		t.Fatalf("install = %v, want the failing command in the error", err)
	}
	checkCommands(t, rec, "systemctl --user daemon-reload")
	path, _ := m.File()
	checkSteps(t, out, "write "+path, "run systemctl --user daemon-reload", "output output of failing systemctl --user daemon-reload")
}

func TestServiceNoUserManager(t *testing.T) {
	m, rec, _ := testService(t, "linux")
	rec.fail = map[string]error{"systemctl --user daemon-reload": errors.New("exit status 1")}
	rec.failOut = map[string]string{"systemctl --user daemon-reload": "Failed to connect to bus: No medium found\n"}
	_, err := m.Install(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no systemd user manager answers") {
		t.Errorf("install without a user manager = %v, want the hint", err)
	}
}

func TestServiceInstallDarwin(t *testing.T) {
	m, rec, out := testService(t, "darwin")
	// Nothing is loaded yet, so unloading the old agent fails: not an error.
	rec.fail = map[string]error{"launchctl bootout gui/501/io.mcpgw.mcpgw": errors.New("exit status 3")}
	inst, err := m.Install(context.Background())
	if err != nil {
		t.Fatalf("install: %v\n%q", err, out.steps())
	}
	path := filepath.Join(m.home, "Library", "LaunchAgents", "io.mcpgw.mcpgw.plist")
	checkSteps(t, out, "write "+path,
		"run launchctl bootout gui/501/io.mcpgw.mcpgw",
		"output output of failing launchctl bootout gui/501/io.mcpgw.mcpgw",
		"fine launchctl bootout gui/501/io.mcpgw.mcpgw: exit status 3",
		"run launchctl enable gui/501/io.mcpgw.mcpgw",
		"output output of launchctl enable gui/501/io.mcpgw.mcpgw\n",
		"run launchctl bootstrap gui/501 "+path,
		"output output of launchctl bootstrap gui/501 "+path+"\n")
	checkMode(t, path, 0o644)
	if fi, err := os.Stat(filepath.Join(m.home, "Library", "Logs")); err != nil || !fi.IsDir() {
		t.Errorf("~/Library/Logs not created: %v", err)
	}
	checkCommands(t, rec,
		"launchctl bootout gui/501/io.mcpgw.mcpgw",
		"launchctl enable gui/501/io.mcpgw.mcpgw",
		"launchctl bootstrap gui/501 "+path)

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parsePlist(data)
	if err != nil {
		t.Fatalf("parsing %s: %v\n%s", path, err, data)
	}
	log := filepath.Join(m.home, "Library", "Logs", "mcpgw.log")
	if want := (Installation{File: path, Manager: Launchd, Name: "io.mcpgw.mcpgw", PATH: "/home/u/.nvm/versions/node/v22.1.0/bin:/usr/bin:/bin", Log: log}); inst == nil || *inst != want {
		t.Errorf("installation %+v, want %+v", inst, want)
	}
	want := map[string]any{
		"Label":                "io.mcpgw.mcpgw",
		"ProgramArguments":     []any{"/opt/mcpgw/bin/mcpgw", "serve", "--socket", "/var/folders/xy/T/mcpgw-501/mcpgw.sock", "--log-format", "text"},
		"EnvironmentVariables": map[string]any{"PATH": "/home/u/.nvm/versions/node/v22.1.0/bin:/usr/bin:/bin"},
		"RunAtLoad":            true,
		"KeepAlive":            map[string]any{"SuccessfulExit": false},
		"ExitTimeOut":          "30",
		"StandardOutPath":      log,
		"StandardErrorPath":    log,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plist =\n%#v\nwant\n%#v", got, want)
	}
}

// TestServicePlistEscapes: paths with XML's special characters survive.
func TestServicePlistEscapes(t *testing.T) {
	u := serviceUnit{Exe: "/Users/a&b/<bin>/mcpgw", Path: `/x"y:/bin`, Home: "/Users/a&b"}
	data, err := renderService("darwin", u)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parsePlist(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if args := got["ProgramArguments"].([]any); args[0] != u.Exe || len(args) != 4 {
		t.Errorf("ProgramArguments = %q, want %q first and no --socket", args, u.Exe)
	}
	if p := got["EnvironmentVariables"].(map[string]any)["PATH"]; p != u.Path {
		t.Errorf("PATH = %q, want %q", p, u.Path)
	}
	if p := got["StandardOutPath"]; p != "/Users/a&b/Library/Logs/mcpgw.log" {
		t.Errorf("StandardOutPath = %q", p)
	}
}

func TestServiceUninstall(t *testing.T) {
	for _, tc := range []struct {
		goos string
		want []string
	}{
		{"linux", []string{"systemctl --user disable --now mcpgw.service", "systemctl --user daemon-reload"}},
		{"darwin", []string{"launchctl bootout gui/501/io.mcpgw.mcpgw"}},
	} {
		t.Run(tc.goos, func(t *testing.T) {
			m, rec, out := testService(t, tc.goos)
			path, _ := m.File()

			if installed, err := m.Uninstall(context.Background()); err != nil || installed {
				t.Fatalf("uninstall of nothing = %v, %v; want not installed", installed, err)
			}
			checkCommands(t, rec) // not installed: nothing to do
			checkSteps(t, out)

			if _, err := m.Install(context.Background()); err != nil {
				t.Fatal(err)
			}
			rec.cmds = nil
			m.dryRun = true
			out.events = nil
			if installed, err := m.Uninstall(context.Background()); err != nil || !installed {
				t.Fatalf("dry uninstall = %v, %v", installed, err)
			}
			checkCommands(t, rec)
			if _, err := os.Stat(path); err != nil {
				t.Errorf("dry run removed %s: %v", path, err)
			}
			wantDry := []string{"would run " + tc.want[0], "would remove " + path}
			if len(tc.want) > 1 {
				wantDry = append(wantDry, "would run "+tc.want[1])
			}
			checkSteps(t, out, wantDry...)

			m.dryRun = false
			// Stopping a service that is not running fails: not an error.
			rec.fail = map[string]error{tc.want[0]: errors.New("exit status 5")}
			out.events = nil
			if _, err := m.Uninstall(context.Background()); err != nil {
				t.Fatalf("uninstall: %v\n%q", err, out.steps())
			}
			checkCommands(t, rec, tc.want...)
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s still there after uninstall (stat: %v)", path, err)
			}
			want := []string{"run " + tc.want[0], "output output of failing " + tc.want[0], "fine " + tc.want[0] + ": exit status 5", "remove " + path}
			if len(tc.want) > 1 {
				want = append(want, "run "+tc.want[1], "output output of "+tc.want[1]+"\n")
			}
			checkSteps(t, out, want...)
		})
	}
}

func TestServiceStatus(t *testing.T) {
	m, rec, out := testService(t, "linux")
	rec.fail = map[string]error{"systemctl --user status --no-pager mcpgw.service": errors.New("exit status 3")}
	err := m.Status(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not running") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("status of a stopped service = %v, want a not-running error", err)
	}
	path, _ := m.File()
	if file, installed, err := m.Installed(); file != path || installed || err != nil {
		t.Errorf("Installed() = %s, %v, %v; want %s, not installed", file, installed, err, path)
	}
	checkCommands(t, rec, "systemctl --user status --no-pager mcpgw.service")
	checkSteps(t, out, "run systemctl --user status --no-pager mcpgw.service", "output output of failing systemctl --user status --no-pager mcpgw.service")
	if _, err := m.Install(context.Background()); err != nil {
		t.Fatal(err)
	}
	if file, installed, err := m.Installed(); file != path || !installed || err != nil {
		t.Errorf("Installed() after install = %s, %v, %v; want %s, installed", file, installed, err, path)
	}

	m, rec, out = testService(t, "darwin")
	if err := m.Status(context.Background()); err != nil {
		t.Errorf("status: %v", err)
	}
	checkCommands(t, rec, "launchctl print gui/501/io.mcpgw.mcpgw")
	checkSteps(t, out, "run launchctl print gui/501/io.mcpgw.mcpgw", "output output of launchctl print gui/501/io.mcpgw.mcpgw\n")
}

func TestServiceUnsupportedOS(t *testing.T) {
	m, rec, _ := testService(t, "windows")
	if _, err := m.Install(context.Background()); err == nil || !strings.Contains(err.Error(), "not windows") {
		t.Errorf("install on windows = %v, want an unsupported error", err)
	}
	checkCommands(t, rec)
}

// TestServiceManagerFromEnvironment: the unit goes where systemd looks,
// $XDG_CONFIG_HOME first.
func TestServiceManagerFromEnvironment(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "cfg"))
	m, err := NewService(nil)
	if err != nil {
		t.Fatal(err)
	}
	m.goos = "linux"
	if p, _ := m.File(); p != filepath.Join(home, "cfg", "systemd", "user", "mcpgw.service") {
		t.Errorf("unit path %s, want it under $XDG_CONFIG_HOME", p)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	m, _ = NewService(nil)
	m.goos = "linux"
	if p, _ := m.File(); p != filepath.Join(home, ".config", "systemd", "user", "mcpgw.service") {
		t.Errorf("unit path %s, want it under ~/.config", p)
	}
}

// TestServiceExeRefusesGoRun: the test binary lives in a go-build
// directory that disappears, like a `go run` binary; a service must not
// point there.
func TestServiceExeRefusesGoRun(t *testing.T) {
	exe, _ := os.Executable()
	if !strings.Contains(exe, "go-build") {
		t.Skipf("test binary %s is not in a go-build directory", exe)
	}
	_, err := serviceExe()
	if err == nil || !strings.Contains(err.Error(), "go run") {
		t.Errorf("serviceExe for %s = %v, want the go run error", exe, err)
	}
}

func TestServicePath(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"/a/bin:/usr/bin:/a/bin:relative:./x::/bin", "/a/bin:/usr/bin:/bin"},
		{"", "/usr/local/bin:/usr/bin:/bin"},
		{"relative", "/usr/local/bin:/usr/bin:/bin"},
	} {
		if got := servicePath(tc.env, "linux"); got != tc.want {
			t.Errorf("servicePath(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestServiceSystemdEscaping(t *testing.T) {
	for _, tc := range []struct{ in, exe, quoted string }{
		{"/usr/local/bin/mcpgw", "/usr/local/bin/mcpgw", `"/usr/local/bin/mcpgw"`},
		{"/opt/my apps/mcpgw", `"/opt/my apps/mcpgw"`, `"/opt/my apps/mcpgw"`},
		{"/opt/100%/mcpgw", "/opt/100%%/mcpgw", `"/opt/100%%/mcpgw"`},
		{"/opt/$HOME/mcpgw", "/opt/$HOME/mcpgw", `"/opt/$HOME/mcpgw"`},
		{`/opt/a"b\c`, `"/opt/a\"b\\c"`, `"/opt/a\"b\\c"`},
	} {
		if got := systemdExe(tc.in); got != tc.exe {
			t.Errorf("systemdExe(%q) = %s, want %s", tc.in, got, tc.exe)
		}
		if got := systemdQuote(tc.in); got != tc.quoted {
			t.Errorf("systemdQuote(%q) = %s, want %s", tc.in, got, tc.quoted)
		}
	}
}

// TestServiceSystemdAnalyzeVerify checks the generated unit with systemd's
// own parser, where systemd-analyze is installed. verify only warns about
// unknown keys or bad values, so any output counts as a failure.
func TestServiceSystemdAnalyzeVerify(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze not installed")
	}
	dir := t.TempDir()
	runtimeDir := filepath.Join(dir, "run")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// An ExecStart= binary must exist: use this test binary, reached
	// through a path that needs quoting and escaping.
	self, _ := os.Executable()
	odd := filepath.Join(dir, "my apps", "100%$USER")
	if err := os.MkdirAll(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(odd, "mcpgw")
	if err := os.Symlink(self, exe); err != nil {
		t.Fatal(err)
	}
	verify := func(name string, unit []byte) (string, error) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, unit, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("systemd-analyze", "--user", "verify", path)
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}

	unit, err := renderService("linux", serviceUnit{Exe: exe, Path: `/opt/a b/bin:/usr/bin:/bin`})
	if err != nil {
		t.Fatal(err)
	}
	out, err := verify("mcpgw.service", unit)
	if strings.Contains(out, "Failed to initialize manager") || strings.Contains(out, "Failed to lookup RuntimeDirectory") {
		t.Skipf("systemd-analyze --user cannot run here: %s", out)
	}
	if err != nil || out != "" {
		t.Errorf("systemd-analyze --user verify: %v\n%s\nunit:\n%s", err, out, unit)
	}

	// The check itself must be able to fail.
	bad := bytes.Replace(unit, []byte("KillMode=mixed"), []byte("KillMode=sideways"), 1)
	if out, _ := verify("bad.service", bad); !strings.Contains(out, "sideways") {
		t.Errorf("systemd-analyze verify did not report a bad KillMode=: %q", out)
	}
	missing := bytes.Replace(unit, []byte(systemdExe(exe)), []byte("/nonexistent/mcpgw"), 1)
	if out, err := verify("missing.service", missing); err == nil || !strings.Contains(out, "/nonexistent/mcpgw") {
		t.Errorf("systemd-analyze verify accepted a missing ExecStart binary: %v %q", err, out)
	}
}

func hasLine(data []byte, line string) bool {
	for _, l := range strings.Split(string(data), "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// parsePlist decodes an XML property list into Go values: dict as
// map[string]any, array as []any, string and integer as string, true and
// false as bool. It is strict enough to catch a malformed file.
func parsePlist(data []byte) (map[string]any, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "plist" {
				return nil, fmt.Errorf("root element %s, want plist", se.Name.Local)
			}
			break
		}
	}
	v, err := plistValue(dec)
	if err != nil {
		return nil, err
	}
	d, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("top-level value is %T, want a dict", v)
	}
	return d, nil
}

// plistValue reads the next value element and everything inside it.
func plistValue(dec *xml.Decoder) (any, error) {
	se, err := nextStart(dec)
	if err != nil {
		return nil, err
	}
	switch se.Name.Local {
	case "string", "integer", "key":
		var s string
		if err := dec.DecodeElement(&s, &se); err != nil {
			return nil, err
		}
		return s, nil
	case "true", "false":
		if err := dec.Skip(); err != nil {
			return nil, err
		}
		return se.Name.Local == "true", nil
	case "array":
		var a []any
		for {
			v, err := plistValue(dec)
			if errors.Is(err, errEnd) {
				return a, nil
			}
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
	case "dict":
		d := map[string]any{}
		for {
			k, err := plistValue(dec)
			if errors.Is(err, errEnd) {
				return d, nil
			}
			if err != nil {
				return nil, err
			}
			v, err := plistValue(dec)
			if err != nil {
				return nil, fmt.Errorf("value of %v: %w", k, err)
			}
			d[k.(string)] = v
		}
	}
	return nil, fmt.Errorf("unknown plist element %s", se.Name.Local)
}

var errEnd = errors.New("end of container")

func nextStart(dec *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := dec.Token()
		if err != nil {
			return xml.StartElement{}, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t, nil
		case xml.EndElement:
			return xml.StartElement{}, errEnd
		}
	}
}

// sourceMetricNames collects the mcpgw_ metric names the Go code of the
// module defines, histograms with their _bucket, _sum and _count series.
func sourceMetricNames(t *testing.T) map[string]bool {
	t.Helper()
	re := regexp.MustCompile(`"(mcpgw_[a-z0-9_]+)"`)
	names := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllSubmatch(data, -1) {
			n := string(m[1])
			names[n] = true
			if strings.HasSuffix(n, "_seconds") {
				names[n+"_bucket"], names[n+"_sum"], names[n+"_count"] = true, true, true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 10 {
		t.Fatalf("found only %d metric names in the source: %v", len(names), names)
	}
	return names
}

var promMetricRE = regexp.MustCompile(`\b(mcpgw_[a-z0-9_]+|up|process_[a-z_]+)\b`)

// checkExprMetrics fails for a metric an expression uses that no code defines.
func checkExprMetrics(t *testing.T, where, expr string, defined map[string]bool) []string {
	t.Helper()
	var used []string
	for _, m := range promMetricRE.FindAllString(expr, -1) {
		if strings.HasPrefix(m, "mcpgw_") && !defined[m] {
			t.Errorf("%s uses %s, which no Go code of mcpgw defines: %s", where, m, expr)
		}
		used = append(used, m)
	}
	return used
}

func TestServicePrometheusConfig(t *testing.T) {
	const dir = "prometheus"
	data, err := os.ReadFile(filepath.Join(dir, "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			MetricsPath   string `yaml:"metrics_path"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	if len(cfg.ScrapeConfigs) != 1 {
		t.Fatalf("%d scrape configs, want 1", len(cfg.ScrapeConfigs))
	}
	sc := cfg.ScrapeConfigs[0]
	if sc.JobName != "mcpgw" || sc.MetricsPath != "/metrics" || len(sc.StaticConfigs) != 1 ||
		!reflect.DeepEqual(sc.StaticConfigs[0].Targets, []string{DefaultListen}) {
		t.Errorf("scrape config %+v, want job mcpgw scraping %s/metrics", sc, DefaultListen)
	}

	defined := sourceMetricNames(t)
	for _, rf := range cfg.RuleFiles {
		data, err := os.ReadFile(filepath.Join(dir, rf))
		if err != nil {
			t.Fatalf("rule file %s: %v", rf, err)
		}
		var rules struct {
			Groups []struct {
				Name  string `yaml:"name"`
				Rules []struct {
					Alert       string            `yaml:"alert"`
					Expr        string            `yaml:"expr"`
					For         string            `yaml:"for"`
					Labels      map[string]string `yaml:"labels"`
					Annotations map[string]string `yaml:"annotations"`
				} `yaml:"rules"`
			} `yaml:"groups"`
		}
		if err := yaml.UnmarshalStrict(data, &rules); err != nil {
			t.Fatalf("%s: %v", rf, err)
		}
		n := 0
		for _, g := range rules.Groups {
			for _, r := range g.Rules {
				n++
				if r.Alert == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
					t.Errorf("%s: rule %q lacks a name, a severity or a summary", rf, r.Alert)
				}
				checkExprMetrics(t, rf+" "+r.Alert, r.Expr, defined)
			}
		}
		if n == 0 {
			t.Errorf("%s has no rules", rf)
		}
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed: the config and rule tests were not run by Prometheus itself")
		return
	}
	for _, args := range [][]string{{"check", "config", "prometheus.yml"}, {"test", "rules", "mcpgw-alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func TestServiceGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile("grafana/mcpgw-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		RefID      string `json:"refId"`
		Expr       string `json:"expr"`
		Datasource struct {
			Type string `json:"type"`
			UID  string `json:"uid"`
		} `json:"datasource"`
	}
	var dash struct {
		UID        string `json:"uid"`
		Title      string `json:"title"`
		Templating struct {
			List []struct {
				Name string `json:"name"`
				Type string `json:"type"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID      int                      `json:"id"`
			Type    string                   `json:"type"`
			Title   string                   `json:"title"`
			GridPos struct{ X, Y, W, H int } `json:"gridPos"`
			Targets []target                 `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	if dash.UID != "mcpgw" || dash.Title != "mcpgw" {
		t.Errorf("uid %q title %q, want mcpgw", dash.UID, dash.Title)
	}
	var vars []string
	for _, v := range dash.Templating.List {
		vars = append(vars, v.Name+":"+v.Type)
	}
	if !reflect.DeepEqual(vars, []string{"datasource:datasource", "job:query"}) {
		t.Errorf("template variables %v, want datasource and job", vars)
	}

	defined := sourceMetricNames(t)
	used := map[string]bool{}
	ids := map[int]bool{}
	type cell struct{ x, y int }
	taken := map[cell]string{}
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
			t.Errorf("panel %q has gridPos %+v outside the 24-column grid", p.Title, g)
		}
		for x := g.X; x < g.X+g.W; x++ {
			for y := g.Y; y < g.Y+g.H; y++ {
				if other, ok := taken[cell{x, y}]; ok {
					t.Fatalf("panels %q and %q overlap at %d,%d", other, p.Title, x, y)
				}
				taken[cell{x, y}] = p.Title
			}
		}
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Datasource.Type != "prometheus" || tg.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q query %s uses datasource %+v, want the ${datasource} variable", p.Title, tg.RefID, tg.Datasource)
			}
			if !strings.Contains(tg.Expr, `job=~"$job"`) {
				t.Errorf("panel %q query %s ignores the job variable: %s", p.Title, tg.RefID, tg.Expr)
			}
			for _, m := range checkExprMetrics(t, "panel "+p.Title, tg.Expr, defined) {
				used[m] = true
			}
		}
	}
	for _, m := range []string{
		"mcpgw_tool_calls_total", "mcpgw_tool_call_duration_seconds_bucket", "mcpgw_upstream_state",
		"mcpgw_upstream_connects_total", "mcpgw_upstream_restarts_total", "mcpgw_upstream_idle_closes_total",
		"mcpgw_sessions", "mcpgw_config_last_reload_successful", "mcpgw_cache_writes_total",
	} {
		if !used[m] {
			t.Errorf("the dashboard shows no %s", m)
		}
	}
}

// TestServiceUnitSecurity runs systemd-analyze on the user unit: it must
// verify, and its exposure score must not get worse than it is (7.6, down
// from 9.1 before the seccomp filters). Skipped where systemd-analyze is
// missing.
func TestServiceUnitSecurity(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	data, err := renderService("linux", defaultServiceUnit("linux"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	unit := filepath.Join(dir, "mcpgw.service")
	// verify wants an ExecStart= that exists.
	if err := os.WriteFile(unit, bytes.ReplaceAll(data, []byte("/usr/local/bin/mcpgw"), []byte("/bin/true")), 0o644); err != nil {
		t.Fatal(err)
	}
	analyze := func(args ...string) (string, error) {
		cmd := exec.Command("systemd-analyze", args...)
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := analyze("verify", "--user", unit); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, _ := analyze("security", "--offline=true", "--user", unit)
	_, after, ok := strings.Cut(out, "Overall exposure level for mcpgw.service: ")
	var score float64
	if _, err := fmt.Sscanf(after, "%g", &score); !ok || err != nil {
		t.Skipf("systemd-analyze security --offline is not supported here:\n%s", out)
	}
	if score > 7.6 {
		t.Errorf("exposure score %.1f, want at most 7.6:\n%s", score, out)
	}
}
