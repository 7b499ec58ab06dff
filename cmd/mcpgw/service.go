package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mcpgw/mcpgw/deploy"
)

// serviceCmd is `mcpgw service ACTION [--dry-run]`: install, uninstall or
// report on the per-user service (deploy.Service), saying each step as it
// happens.
func serviceCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	svc, err := deploy.NewService(&deploy.ServiceOptions{DryRun: *dryRun, Events: serviceSteps(stdout)})
	if err != nil {
		return err
	}
	switch action {
	case "install":
		inst, err := svc.Install(ctx)
		if err != nil || *dryRun {
			return err
		}
		writeInstallation(stdout, inst)
		return nil
	case "uninstall":
		file, err := svc.File()
		if err != nil {
			return err
		}
		installed, err := svc.Uninstall(ctx)
		if err == nil && !installed {
			fmt.Fprintf(stdout, "not installed: there is no %s\n", file)
		}
		return err
	case "status":
		file, installed, err := svc.Installed()
		if err != nil {
			return err
		}
		if installed {
			fmt.Fprintf(stdout, "service file: %s\n", file)
		} else {
			fmt.Fprintf(stdout, "service file: %s (not installed)\n", file)
		}
		return svc.Status(ctx)
	}
	fmt.Fprintln(stderr, usage)
	return fmt.Errorf("unknown service action %q", action)
}

// serviceSteps says each step of a service action on w: the file written
// (in a dry run, with its content), each command as typed and what it
// printed.
func serviceSteps(w io.Writer) func(deploy.ServiceEvent) {
	return func(e deploy.ServiceEvent) {
		switch e.Kind {
		case deploy.ServiceWrite:
			if e.DryRun {
				fmt.Fprintf(w, "dry run: would write %s:\n%s", e.Path, e.Data)
			} else {
				fmt.Fprintf(w, "wrote %s\n", e.Path)
			}
		case deploy.ServiceRemove:
			if e.DryRun {
				fmt.Fprintf(w, "dry run: would remove %s\n", e.Path)
			} else {
				fmt.Fprintf(w, "removed %s\n", e.Path)
			}
		case deploy.ServiceRun:
			if e.DryRun {
				fmt.Fprintf(w, "dry run: would run %s\n", e.CommandLine())
			} else {
				fmt.Fprintf(w, "$ %s\n", e.CommandLine())
			}
		case deploy.ServiceOutput:
			w.Write(e.Data)
			if len(e.Data) > 0 && e.Data[len(e.Data)-1] != '\n' {
				fmt.Fprintln(w)
			}
		case deploy.ServiceFailureOK:
			fmt.Fprintf(w, "(%v; that is fine here)\n", e.Err)
		}
	}
}

// writeInstallation says what runs the daemon now, and where its log is.
func writeInstallation(w io.Writer, inst *deploy.Installation) {
	switch inst.Manager {
	case deploy.Systemd:
		fmt.Fprintf(w, "mcpgw runs as the systemd user service %s (PATH=%s).\nLogs: journalctl --user -u %s -f\n", inst.Name, inst.PATH, strings.TrimSuffix(inst.Name, ".service"))
	case deploy.Launchd:
		fmt.Fprintf(w, "mcpgw runs as the launchd agent %s (PATH=%s).\nLogs: %s\n", inst.Name, inst.PATH, inst.Log)
	}
}
