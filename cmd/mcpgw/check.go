package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream"
)

// checkCmd is `mcpgw check`: load the config as the daemon would, with its
// imports (and, with --project, a project's files), and print the merged
// servers with where each came from, and the warnings. A config that does
// not load is an error naming the file and the field.
func checkCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", stderr)
	config := fs.String("config", "", "config file (default "+registry.DefaultConfigPath()+")")
	listen := fs.String("listen", defaultListen(), "the daemon's listen address: servers pointing at it are skipped")
	project := fs.String("project", "", "also show what a session working in `DIR` sees")
	trustFile := fs.String("trust-file", registry.DefaultTrustPath(), "trust store")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("check: unexpected argument %q", fs.Arg(0))
	}
	if *config != "" {
		// The default file may be missing (no servers yet); a file named
		// on the command line is one the user means to check.
		if _, err := os.Stat(*config); errors.Is(err, iofs.ErrNotExist) {
			return fmt.Errorf("checking %s: no such file", *config)
		} else if err != nil {
			return fmt.Errorf("checking config: %w", err)
		}
	}
	// As the daemon starts: another program's file that does not load is
	// skipped, and said so (then check fails).
	opts := &registry.LoadOptions{Listen: *listen, TrustFile: *trustFile, SkipBroken: func(string) bool { return true }}
	cfg, err := registry.Load(*config, opts)
	if err != nil {
		return err
	}
	writeSources(stdout, cfg)
	if *project != "" {
		dir, err := filepath.Abs(*project)
		if err != nil {
			return err
		}
		if cfg, err = cfg.WithProject(dir, cfg.Trust, opts); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "project: %s, %s\n", dir, cfg.Trust.Describe(dir))
	}
	fmt.Fprintln(stdout)
	writeServers(stdout, cfg)
	writePolicy(stdout, cfg)
	path, serviceFile := deploy.DaemonPATH()
	from := "this shell's (no service installed; a daemon `mcpgw stdio` starts inherits its client's)"
	if serviceFile != "" {
		from = "the service's, in " + serviceFile
	}
	warnings := slices.DeleteFunc(checkWarnings(cfg, path, from), func(w string) bool {
		return slices.ContainsFunc(cfg.Skipped, func(sk registry.SkippedFile) bool { return sk.Warning() == w })
	})
	if len(warnings) > 0 {
		fmt.Fprintf(stdout, "\nwarnings:\n")
		for _, w := range warnings {
			fmt.Fprintf(stdout, "  %s\n", w)
		}
	}
	if len(cfg.Skipped) > 0 {
		// The servers above run; the daemon says the same in its log and
		// status.
		var errs []error
		for _, sk := range cfg.Skipped {
			errs = append(errs, errors.New(sk.Warning()))
		}
		return errors.Join(errs...)
	}
	fmt.Fprintf(stdout, "\nOK: %d servers (%d enabled), %d warnings\n", len(cfg.Servers), cfg.Enabled(), len(warnings))
	return nil
}

// writeServers prints a table of the servers: name, state, transport,
// command or URL (secrets masked; header, env names only) and source.
func writeServers(w io.Writer, cfg *registry.Config) {
	if len(cfg.Servers) == 0 {
		fmt.Fprintln(w, "no servers")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tTRANSPORT\tCOMMAND OR URL\tSOURCE")
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s := cfg.Servers[name]
		state := "enabled"
		switch {
		case s.Untrusted:
			state = "untrusted"
		case !s.Enabled:
			state = "disabled"
		}
		transport, target := "stdio", s.MaskedCommand()
		if s.IsRemote() {
			transport, target = "http", registry.MaskURL(s.URL)
			if len(s.Headers) > 0 {
				target += " [headers: " + strings.Join(slices.Sorted(maps.Keys(s.Headers)), ", ") + "]"
			}
			if s.BearerToken != "" || s.BearerTokenEnv != "" {
				target += " [bearer token]"
			}
		} else if len(s.Env) > 0 {
			target += " [env: " + strings.Join(slices.Sorted(maps.Keys(s.Env)), ", ") + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, state, transport, target, s.Source)
	}
	tw.Flush()
}

// writeSources prints the config file's path (saying when it does not
// exist) and the files it imports.
func writeSources(w io.Writer, cfg *registry.Config) {
	fmt.Fprintf(w, "config: %s", cfg.Path)
	if cfg.Missing {
		fmt.Fprint(w, " (does not exist)")
	}
	fmt.Fprintln(w)
	if len(cfg.Imports) > 0 {
		fmt.Fprintf(w, "imports: %s\n", strings.Join(cfg.Imports, ", "))
	}
}

// checkWarnings returns the config's warnings and, for each server, what
// would stop it from starting: arguments relative to a directory it will
// not run in, and a stdio command that is not on path (the daemon's PATH,
// which from describes), with how to get it.
func checkWarnings(cfg *registry.Config, path, from string) []string {
	warnings := slices.Clone(cfg.Warnings)
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		srv := cfg.Servers[name]
		if rel := srv.RelativeArgs(); len(rel) > 0 {
			warnings = append(warnings, fmt.Sprintf("mcpServers.%s.args: %s is relative, and the server runs in your home directory for every session; set cwd, or define it in a project's .mcp.json to run it in the project", name, strings.Join(rel, ", ")))
		}
		if w := commandWarning(name, srv, path, from); w != "" {
			warnings = append(warnings, w)
		}
	}
	return warnings
}

// commandWarning says what is wrong with an enabled stdio server's command
// on the daemon's PATH, if anything, and how to fix it.
func commandWarning(name string, srv *registry.Server, path, from string) string {
	if srv.IsRemote() || !srv.Enabled || srv.Untrusted || srv.Command == "" {
		return ""
	}
	_, err := upstream.ResolveCommand(srv, path)
	switch {
	case err == nil:
		return ""
	case strings.ContainsRune(srv.Command, filepath.Separator):
		return fmt.Sprintf("mcpServers.%s.command: %v", name, err)
	}
	msg := fmt.Sprintf("mcpServers.%s.command: %q is not on the daemon's PATH, %s", name, srv.Command, from)
	if found, err := exec.LookPath(srv.Command); err == nil && os.Getenv("PATH") != path {
		return msg + fmt.Sprintf("; this shell has it (%s): run `mcpgw service install` again to give the service this shell's PATH", found)
	}
	return msg + "; " + upstream.InstallHint(srv.Command)
}
