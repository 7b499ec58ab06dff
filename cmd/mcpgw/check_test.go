package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// checkEnv points HOME and the XDG directories into a temporary directory,
// so that imports and the trust store read nothing of the user's.
func checkEnv(t *testing.T) (home string) {
	t.Helper()
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	t.Setenv("MCPGW_LISTEN", "")
	return home
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), err
}

func TestCheck(t *testing.T) {
	home := checkEnv(t)
	// The commands exist, on the PATH the daemon would use.
	bin := filepath.Join(home, "bin")
	for _, c := range []string{"npx", "mcp-fs", "cursor-mcp", "repo-mcp"} {
		writeTestFile(t, filepath.Join(bin, c), "#!/bin/sh\n")
		if err := os.Chmod(filepath.Join(bin, c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	config := filepath.Join(home, "mcp.json")
	writeTestFile(t, config, `{
		"mcpServers": {
			"api": {"url": "https://bob:hunter2@api.example.com/mcp?key=abc123&region=eu", "headers": {"Authorization": "Bearer x"}},
			"cli": {"command": "npx", "args": ["-y", "some-mcp", "--api-key", "k-1", "--token=t-2", "sk-abcdefghijklmnop", "PASSWORD=p"], "env": {"B": "2", "A": "1"},
				"approveTools": ["delete_*"], "inheritEnv": false},
			"off": {"command": "off", "enabled": false},
			"fs": {"command": "mcp-fs", "args": ["."]},
			"loop": {"command": "mcpgw", "args": ["stdio"]},
		},
		"imports": ["cursor"],
		"settings": {"approveTools": "destructive", "excludeTools": ["*_drop_*"], "approvalTimeoutMs": 30000},
	}`)
	writeTestFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"cur": {"command": "cursor-mcp", "comand": "typo", "autoApprove": ["read_*"]}}}`)
	proj := filepath.Join(home, "proj")
	writeTestFile(t, filepath.Join(proj, ".mcp.json"), `{"mcpServers": {"repo": {"command": "./repo-mcp"}}}`)

	out, _, err := runCmd(t, "check", "--config", config, "--listen", "127.0.0.1:7332")
	if err != nil {
		t.Fatal(err)
	}
	want := `config: HOME/mcp.json
imports: cursor

NAME  STATE     TRANSPORT  COMMAND OR URL                                                                  SOURCE
api   enabled   http       https://bob:***@api.example.com/mcp?key=***&region=eu [headers: Authorization]  HOME/mcp.json
cli   enabled   stdio      npx -y some-mcp --api-key *** --token=*** *** PASSWORD=*** [env: A, B]          HOME/mcp.json
cur   enabled   stdio      cursor-mcp                                                                      HOME/.cursor/mcp.json
fs    enabled   stdio      mcp-fs .                                                                        HOME/mcp.json
off   disabled  stdio      off                                                                             HOME/mcp.json

policy:
  settings: approveTools "destructive"; excludeTools ["*_drop_*"]; approvals wait 30s for the page or ` + "`mcpgw approve`" + `; audit on
  environment: stdio servers get mcpgw's, never its MCPGW_* variables; with inheritEnv false only HOME LOGNAME PATH SHELL TERM USER, plus env
  cli (HOME/mcp.json):
    approveTools ["delete_*"] (mcpServers.cli.approveTools; overrides settings)
    environment: only HOME LOGNAME PATH SHELL TERM USER, plus env (inheritEnv false)
  cur (HOME/.cursor/mcp.json):
    never asked: ["read_*"]

warnings:
  mcpServers.loop: runs mcpgw's stdio shim, which connects back to mcpgw itself; skipped
  HOME/.cursor/mcp.json: mcpServers.cur.comand: unknown field (did you mean "command"?)
  mcpServers.fs.args: . is relative, and the server runs in your home directory for every session; set cwd, or define it in a project's .mcp.json to run it in the project

OK: 5 servers (4 enabled), 3 warnings
`
	if want = strings.ReplaceAll(want, "HOME/", home+"/"); out != want {
		t.Errorf("check output:\n%s\nwant:\n%s", out, want)
	}

	// A project: untrusted, then trusted.
	out, _, err = runCmd(t, "check", "--config", config, "--project", proj)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"project: " + proj + ", not trusted: its servers are not started (mcpgw trust " + proj + ")",
		"repo  untrusted",
		proj + ": not trusted, so its 1 project server(s) are listed but not started; to allow them: mcpgw trust " + proj,
	} {
		if !strings.Contains(out, line) {
			t.Errorf("check --project (untrusted) lacks %q:\n%s", line, out)
		}
	}
	if _, _, err := runCmd(t, "trust", home); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCmd(t, "check", "--config", config, "--project", proj)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "project: "+proj+", trusted (through "+home+")") || !strings.Contains(out, "repo  enabled   stdio      ./repo-mcp") {
		t.Errorf("check --project (trusted):\n%s", out)
	}
}

func TestCheckInvalid(t *testing.T) {
	home := checkEnv(t)
	config := filepath.Join(home, "mcp.json")
	writeTestFile(t, config, `{"mcpServers": {"a": {"command": "x", "lifecycle": "sometimes"}}, "imports": ["cursor"]}`)
	writeTestFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"b": {"url": "ftp://x"}}}`)
	out, _, err := runCmd(t, "check", "--config", config)
	// The user's key, and where in the file.
	want := config + `:1:52: mcpServers.a.lifecycle: "sometimes" is not one of lazy, eager, keep-alive, lazy-keep-alive`
	if err == nil || err.Error() != want {
		t.Errorf("check error: %v\nwant: %s\noutput: %s", err, want, out)
	}
	writeTestFile(t, config, `{"mcpServers": {"a": {"command": "x"}}, "imports": ["cursor"]}`)
	_, _, err = runCmd(t, "check", "--config", config)
	// Another program's file: the daemon skips it, and check fails.
	want = filepath.Join(home, ".cursor", "mcp.json") + `: mcpServers.b.url: "ftp://x": scheme "ftp" is not http or https; skipped: its servers are left out until it is fixed`
	if err == nil || err.Error() != want {
		t.Errorf("check error: %v\nwant: %s", err, want)
	}
}

func TestTrustCommands(t *testing.T) {
	home := checkEnv(t)
	proj := filepath.Join(home, "src", "proj")
	if err := os.MkdirAll(filepath.Join(proj, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(home, ".local", "state", "mcpgw", "trust.json")
	steps := []struct {
		args    []string
		out     string
		wantErr string
	}{
		{[]string{"trust", "--list"}, "", ""},
		{[]string{"trust", proj}, "trusted " + proj + ": its project MCP servers may now start (store " + store + ")\n", ""},
		{[]string{"trust", filepath.Join(proj, "sub")}, filepath.Join(proj, "sub") + " is already trusted (through " + proj + ")\n", ""},
		{[]string{"trust", "--list"}, proj + "\n", ""},
		{[]string{"untrust", filepath.Join(proj, "sub")}, "", filepath.Join(proj, "sub") + " is not trusted itself but through " + proj + "; run: mcpgw untrust " + proj},
		{[]string{"untrust", proj}, "untrusted " + proj + ": its project MCP servers no longer start\n", ""},
		{[]string{"trust", "--list"}, "", ""},
		{[]string{"trust", filepath.Join(home, "missing")}, "", "trusting " + filepath.Join(home, "missing") + ": lstat " + filepath.Join(home, "missing") + ": no such file or directory"},
		{[]string{"trust"}, "", "usage: mcpgw trust DIR (or --list)"},
	}
	for _, s := range steps {
		out, _, err := runCmd(t, s.args...)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if out != s.out || gotErr != s.wantErr {
			t.Errorf("mcpgw %s:\n out %q, err %q\nwant %q, err %q", strings.Join(s.args, " "), out, gotErr, s.out, s.wantErr)
		}
	}
	fi, err := os.Stat(store)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("store %s: %v, mode %v", store, err, fi.Mode().Perm())
	}
}

// TestCheckFindsCommandsAsTheDaemonWill: check resolves each command on
// the PATH the daemon will have (the installed service's, else this
// process's) and says what is missing and how to get it.
func TestCheckFindsCommandsAsTheDaemonWill(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the service file read here is systemd's")
	}
	home := checkEnv(t)
	bin := filepath.Join(home, "bin")
	writeTestFile(t, filepath.Join(bin, "tool"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(bin, "tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	config := filepath.Join(home, "mcp.json")
	writeTestFile(t, config, `{"mcpServers": {
		"fetch": {"command": "uvx-not-here", "args": ["mcp-server-fetch"]},
		"uv": {"command": "uvx"},
		"mine": {"command": "tool"},
		"rel": {"command": "./nope"},
		"off": {"command": "missing-too", "enabled": false},
		"web": {"url": "https://example.com/mcp"}
	}}`)
	t.Setenv("PATH", bin)
	out, _, err := runCmd(t, "check", "--config", config)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`mcpServers.uv.command: "uvx" is not on the daemon's PATH, this shell's`,
		"install uv (https://docs.astral.sh/uv/",
		`mcpServers.fetch.command: "uvx-not-here" is not on the daemon's PATH`,
		"mcpServers.rel.command: " + filepath.Join(home, "nope") + " does not exist",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"mcpServers.mine.command", "mcpServers.off.command", "mcpServers.web"} {
		if strings.Contains(out, not) {
			t.Errorf("check warns about %s:\n%s", not, out)
		}
	}

	// With a service installed, its PATH is the daemon's: a command this
	// shell has but the service's PATH lacks is named, with the fix.
	writeTestFile(t, filepath.Join(home, ".config", "systemd", "user", "mcpgw.service"),
		"[Service]\nExecStart=/usr/local/bin/mcpgw serve\nEnvironment=\"PATH=/usr/bin:/bin\"\n")
	out, _, err = runCmd(t, "check", "--config", config)
	if err != nil {
		t.Fatal(err)
	}
	want := `mcpServers.mine.command: "tool" is not on the daemon's PATH, the service's, in ` + filepath.Join(home, ".config", "systemd", "user", "mcpgw.service") +
		"; this shell has it (" + filepath.Join(bin, "tool") + "): run `mcpgw service install` again"
	if !strings.Contains(out, want) {
		t.Errorf("check output lacks %q:\n%s", want, out)
	}
}

// TestHelp: every command has `mcpgw help CMD` with usage, a summary and
// examples; the examples name commands that exist; and no secret from the
// environment is ever printed as a default.
func TestHelp(t *testing.T) {
	checkEnv(t)
	t.Setenv("MCPGW_TOKEN", "s3cret-value")
	for name := range docs {
		out, _, err := runCmd(t, "help", name)
		if err != nil {
			t.Errorf("help %s: %v", name, err)
			continue
		}
		d := docs[name]
		for _, want := range []string{"usage: mcpgw " + d.usage + "\n", "\n" + d.summary + "\n", "\nExamples:\n"} {
			if d.summary == "" || !strings.Contains(out, want) {
				t.Errorf("help %s lacks %q:\n%s", name, want, out)
			}
		}
		if strings.Contains(out, "s3cret-value") {
			t.Errorf("help %s prints $MCPGW_TOKEN's value:\n%s", name, out)
		}
		for _, e := range d.examples {
			f := strings.Fields(e)
			for i, w := range f {
				if w == "mcpgw" && i+1 < len(f) {
					if _, ok := docs[strings.Trim(f[i+1], `"],`)]; !ok && !strings.HasPrefix(f[i+1], `"`) {
						t.Errorf("help %s: example %q names no command", name, e)
					}
				}
			}
		}
	}
	// The overview lists every command documented, and nothing else.
	out, _, _ := runCmd(t, "help")
	for name := range docs {
		if !strings.Contains(out, "  mcpgw "+name) {
			t.Errorf("mcpgw help does not list %s", name)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "mcpgw" && f[1] != "—" {
			if _, ok := docs[f[1]]; !ok {
				t.Errorf("mcpgw help lists %q, which has no documentation", f[1])
			}
		}
	}
}

// TestCheckMisspeltTransport: `mcpgw check` on an entry whose command is
// misspelt says which field was meant, not only that one is missing.
func TestCheckMisspeltTransport(t *testing.T) {
	home := checkEnv(t)
	config := filepath.Join(home, "mcp.json")
	writeTestFile(t, config, `{"mcpServers": {"gh": {"comand": "true"}}}`)
	_, _, err := runCmd(t, "check", "--config", config)
	if err == nil || !strings.Contains(err.Error(), `mcpServers.gh: needs command or url (did you mean "command" for "comand"?)`) {
		t.Errorf("mcpgw check: %v", err)
	}
}

// TestCheckMissingConfig: `mcpgw check --config` naming a file that is
// not there is an error naming the path, not "OK: 0 servers".
func TestCheckMissingConfig(t *testing.T) {
	home := checkEnv(t)
	missing := filepath.Join(home, "mpc.json")
	out, _, err := runCmd(t, "check", "--config", missing)
	if err == nil || err.Error() != "checking "+missing+": no such file" {
		t.Errorf("mcpgw check --config %s: %v", missing, err)
	}
	if strings.Contains(out, "OK:") {
		t.Errorf("mcpgw check of a missing file says:\n%s", out)
	}
}
