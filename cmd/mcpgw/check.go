package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

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
	opts := &registry.LoadOptions{Listen: *listen, TrustFile: *trustFile}
	cfg, err := registry.Load(*config, opts)
	if err != nil {
		return err
	}
	cfg.WriteSources(stdout)
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
	cfg.WriteServers(stdout)
	writePolicy(stdout, cfg)
	path, from := deploy.DaemonPATH()
	warnings := upstream.CheckWarnings(cfg, path, from)
	if len(warnings) > 0 {
		fmt.Fprintf(stdout, "\nwarnings:\n")
		for _, w := range warnings {
			fmt.Fprintf(stdout, "  %s\n", w)
		}
	}
	fmt.Fprintf(stdout, "\nOK: %d servers (%d enabled), %d warnings\n", len(cfg.Servers), cfg.Enabled(), len(warnings))
	return nil
}
