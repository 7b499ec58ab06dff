package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/internal/e2e"
)

func TestServiceCommandLine(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"service"}, "no service action given"},
		{[]string{"service", "--dry-run"}, "no service action given"},
		{[]string{"service", "frobnicate"}, `unknown service action "frobnicate"`},
		{[]string{"service", "status", "extra"}, `unexpected argument "extra"`},
	} {
		err := serviceCmd(ctx, tc.args[1:], io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %q = %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

// What `mcpgw service` prints for each step deploy tells, byte for byte.
func TestServiceSteps(t *testing.T) {
	unit := "/home/u/.config/systemd/user/mcpgw.service"
	plist := "/Users/u/Library/LaunchAgents/io.mcpgw.mcpgw.plist"
	for _, tc := range []struct {
		name   string
		events []deploy.ServiceEvent
		want   string
	}{
		{"install", []deploy.ServiceEvent{
			{Kind: deploy.ServiceWrite, Path: unit, Data: []byte("[Unit]\n")},
			{Kind: deploy.ServiceRun, Command: []string{"systemctl", "--user", "daemon-reload"}},
			{Kind: deploy.ServiceOutput, Data: []byte("output of systemctl --user daemon-reload\n")},
			{Kind: deploy.ServiceRun, Command: []string{"systemctl", "--user", "enable", "mcpgw.service"}},
		}, "wrote " + unit + "\n" +
			"$ systemctl --user daemon-reload\n" +
			"output of systemctl --user daemon-reload\n" +
			"$ systemctl --user enable mcpgw.service\n"},
		{"install dry run", []deploy.ServiceEvent{
			{Kind: deploy.ServiceWrite, DryRun: true, Path: plist, Data: []byte("<plist>\n</plist>\n")},
			{Kind: deploy.ServiceRun, DryRun: true, Command: []string{"launchctl", "bootout", "gui/501/io.mcpgw.mcpgw"}},
			{Kind: deploy.ServiceRun, DryRun: true, Command: []string{"launchctl", "bootstrap", "gui/501", "/Users/my user/x.plist"}},
		}, "dry run: would write " + plist + ":\n<plist>\n</plist>\n" +
			"dry run: would run launchctl bootout gui/501/io.mcpgw.mcpgw\n" +
			"dry run: would run launchctl bootstrap gui/501 '/Users/my user/x.plist'\n"},
		{"uninstall", []deploy.ServiceEvent{
			{Kind: deploy.ServiceRun, Command: []string{"launchctl", "bootout", "gui/501/io.mcpgw.mcpgw"}},
			{Kind: deploy.ServiceOutput, Data: []byte("output of failing launchctl bootout gui/501/io.mcpgw.mcpgw")},
			{Kind: deploy.ServiceFailureOK, Command: []string{"launchctl", "bootout", "gui/501/io.mcpgw.mcpgw"}, Err: errors.New("exit status 3")},
			{Kind: deploy.ServiceRemove, Path: plist},
		}, "$ launchctl bootout gui/501/io.mcpgw.mcpgw\n" +
			"output of failing launchctl bootout gui/501/io.mcpgw.mcpgw\n" +
			"(exit status 3; that is fine here)\n" +
			"removed " + plist + "\n"},
		{"uninstall dry run", []deploy.ServiceEvent{
			{Kind: deploy.ServiceRun, DryRun: true, Command: []string{"systemctl", "--user", "disable", "--now", "mcpgw.service"}},
			{Kind: deploy.ServiceRemove, DryRun: true, Path: unit},
		}, "dry run: would run systemctl --user disable --now mcpgw.service\n" +
			"dry run: would remove " + unit + "\n"},
	} {
		var b bytes.Buffer
		tell := serviceSteps(&b)
		for _, e := range tc.events {
			tell(e)
		}
		if b.String() != tc.want {
			t.Errorf("%s: printed\n%q\nwant\n%q", tc.name, b.String(), tc.want)
		}
	}
}

func TestWriteInstallation(t *testing.T) {
	for _, tc := range []struct {
		inst deploy.Installation
		want string
	}{
		{deploy.Installation{Manager: deploy.Systemd, Name: "mcpgw.service", PATH: "/usr/bin:/bin"},
			"mcpgw runs as the systemd user service mcpgw.service (PATH=/usr/bin:/bin).\nLogs: journalctl --user -u mcpgw -f\n"},
		{deploy.Installation{Manager: deploy.Launchd, Name: "io.mcpgw.mcpgw", PATH: "/usr/bin:/bin", Log: "/Users/u/Library/Logs/mcpgw.log"},
			"mcpgw runs as the launchd agent io.mcpgw.mcpgw (PATH=/usr/bin:/bin).\nLogs: /Users/u/Library/Logs/mcpgw.log\n"},
	} {
		var b bytes.Buffer
		writeInstallation(&b, &tc.inst)
		if b.String() != tc.want {
			t.Errorf("%s: printed\n%q\nwant\n%q", tc.inst.Manager, b.String(), tc.want)
		}
	}
}

// serviceFileAndStatus are, for this system and a home directory, the
// service file `mcpgw service` writes and the command its status runs.
func serviceFileAndStatus(t *testing.T, home string) (file, status string) {
	switch runtime.GOOS {
	case "linux":
		return filepath.Join(home, ".config", "systemd", "user", "mcpgw.service"), "systemctl --user status --no-pager mcpgw.service"
	case "darwin":
		return filepath.Join(home, "Library", "LaunchAgents", "io.mcpgw.mcpgw.plist"), "launchctl print gui/" + strconv.Itoa(os.Getuid()) + "/io.mcpgw.mcpgw"
	}
	t.Skipf("no service on %s", runtime.GOOS)
	return "", ""
}

// Uninstall and status of a service that is not installed, as dry runs:
// nothing is run, and what would be is said.
func TestServiceNotInstalled(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	file, status := serviceFileAndStatus(t, home)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"uninstall", "--dry-run"}, "not installed: there is no " + file + "\n"},
		{[]string{"uninstall"}, "not installed: there is no " + file + "\n"},
		{[]string{"status", "--dry-run"}, "service file: " + file + " (not installed)\ndry run: would run " + status + "\n"},
	} {
		var out, errOut bytes.Buffer
		if err := serviceCmd(context.Background(), tc.args, &out, &errOut); err != nil {
			t.Errorf("service %s: %v\n%s", tc.args, err, errOut.String())
		}
		if out.String() != tc.want {
			t.Errorf("service %s printed\n%q\nwant\n%q", tc.args, out.String(), tc.want)
		}
	}
}

// `mcpgw service install --dry-run` as a user runs it: the file it would
// write, for this binary and this shell's PATH, then the commands.
func TestServiceInstallDryRunCLI(t *testing.T) {
	t.Parallel()
	bin := e2e.BuildMcpgw(t)
	home := t.TempDir()
	file, _ := serviceFileAndStatus(t, home)
	path := filepath.Join(home, "bin") // no systemctl: the unit is for systemd before 253
	cmd := exec.Command(bin, "service", "install", "--dry-run")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "PATH="+path)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	got := out.String()
	head := "dry run: would write " + file + ":\n"
	tail := "dry run: would run systemctl --user daemon-reload\n" +
		"dry run: would run systemctl --user enable mcpgw.service\n" +
		"dry run: would run systemctl --user restart mcpgw.service\n"
	wantLines := []string{"ExecStart=" + bin + " serve --socket %t/mcpgw/mcpgw.sock --log-format text", `Environment="PATH=` + path + `"`, "Type=notify"}
	if runtime.GOOS == "darwin" {
		uid := strconv.Itoa(os.Getuid())
		tail = "dry run: would run launchctl bootout gui/" + uid + "/io.mcpgw.mcpgw\n" +
			"dry run: would run launchctl enable gui/" + uid + "/io.mcpgw.mcpgw\n" +
			"dry run: would run launchctl bootstrap gui/" + uid + " " + file + "\n"
		wantLines = []string{"\t\t<string>" + bin + "</string>", "\t\t<string>" + path + "</string>"}
	}
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) {
		t.Fatalf("printed\n%s\nwant it to start with %q and end with\n%s", got, head, tail)
	}
	unit := strings.Split(strings.TrimSuffix(strings.TrimPrefix(got, head), tail), "\n")
	for _, l := range wantLines {
		if !slices.Contains(unit, l) {
			t.Errorf("the file it would write has no line %q:\n%s", l, strings.Join(unit, "\n"))
		}
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dry run wrote %s (stat: %v)", file, err)
	}
}
