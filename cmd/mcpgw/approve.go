package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/gateway/audit"
)

// approveCmd decides calls that wait for the user's approval.
func approveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("approve", stderr)
	var c clientFlags
	c.register(fs)
	list := fs.Bool("list", false, "list the calls waiting for approval")
	full := fs.Bool("full", false, "with --list: every argument whole (the list cuts long values as the approval form does)")
	deny := fs.Bool("deny", false, "deny the call instead")
	tool := fs.Bool("tool", false, "allow this tool for the rest of the calling session")
	server := fs.Bool("server", false, "allow every tool of the server for the rest of the calling session")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctl, err := c.control()
	if err != nil {
		return err
	}
	if *list || fs.NArg() == 0 {
		pending, err := ctl.Approvals(ctx)
		if err != nil {
			return err
		}
		if len(pending) == 0 {
			fmt.Fprintln(stdout, "No call waits for approval.")
			return nil
		}
		now := time.Now()
		for _, p := range pending {
			who := p.Session
			if p.Client != "" {
				who += " (" + p.Client + ")"
			}
			left := time.Until(p.Deadline).Round(time.Second).String() + " left"
			if p.InSession {
				left = "asked in its session"
			}
			fmt.Fprintf(stdout, "%s  %s on %s  session %s  waiting %s, %s  [%s]\n",
				oneLine(p.ID), oneLine(p.Tool), oneLine(p.Server), oneLine(who),
				now.Sub(p.Since).Round(time.Second), left, oneLine(p.Rule))
			args := p.Args
			if *full && p.Full != "" {
				args = p.Full
			}
			for _, line := range strings.Split(args, "\n") {
				fmt.Fprintf(stdout, "    %s\n", oneLine(line))
			}
		}
		fmt.Fprintln(stdout, "\nmcpgw approve ID allows one; --deny ID denies it; --tool or --server allows it for the rest of its session.")
		return nil
	}
	if fs.NArg() != 1 {
		return errors.New("approve: name one approval ID (mcpgw approve --list shows them)")
	}
	decision := "once"
	switch {
	case *deny && (*tool || *server):
		return errors.New("approve: --deny cannot be combined with --tool or --server")
	case *deny:
		decision = "deny"
	case *tool && *server:
		return errors.New("approve: choose --tool or --server")
	case *tool:
		decision = "tool"
	case *server:
		decision = "server"
	}
	msg, err := ctl.Approve(ctx, fs.Arg(0), decision)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, lines(msg))
	return nil
}

// auditCmd prints the audit log readably.
func auditCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("audit", stderr)
	follow := fs.Bool("f", false, "keep printing lines as they are written")
	server := fs.String("server", "", "only calls of this `server`")
	asJSON := fs.Bool("json", false, "print the lines as written (JSON)")
	file := fs.String("file", deploy.AuditPath(), "the audit log")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("audit: unexpected argument %q", fs.Arg(0))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	print := func(line []byte) {
		var r audit.Record
		if json.Unmarshal(line, &r) != nil || (*server != "" && r.Server != *server) {
			return
		}
		if *asJSON {
			fmt.Fprintf(tw, "%s\n", oneLine(string(line)))
			return
		}
		fmt.Fprintln(tw, auditLine(r))
	}
	// The rotated files first, oldest first: they hold the older lines.
	for _, name := range slices.Backward(rotatedFiles(*file)) {
		readAll(name, print)
	}
	offset, err := readAll(*file, print)
	tw.Flush()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if errors.Is(err, os.ErrNotExist) && !*follow {
		fmt.Fprintf(stderr, "no audit log at %s yet: the daemon writes one line per tool call there\n", *file)
		return nil
	}
	for *follow {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(300 * time.Millisecond):
		}
		fi, err := os.Stat(*file)
		if err != nil {
			continue
		}
		if fi.Size() < offset {
			offset = 0 // rotated
		}
		if fi.Size() == offset {
			continue
		}
		offset, _ = readFrom(*file, offset, print)
		tw.Flush()
	}
	return nil
}

// auditLine is one record as `mcpgw audit` prints it, one line whatever
// its fields hold.
func auditLine(r audit.Record) string {
	for _, f := range []*string{&r.Event, &r.Session, &r.Client, &r.Server, &r.Tool, &r.Script, &r.Args, &r.Outcome, &r.Approval, &r.DecidedBy, &r.Rule} {
		*f = oneLine(*f)
	}
	who := r.Session
	if r.Client != "" {
		who += " (" + r.Client + ")"
	}
	what := r.Outcome
	if r.Event == audit.EventApproval {
		what = "approval " + r.Approval + " by " + r.DecidedBy
	} else if r.Approval != "" {
		what += " (approval " + r.Approval + " by " + r.DecidedBy + ")"
	}
	if r.Script != "" {
		who += " script " + r.Script
	}
	if r.Method != "" {
		what = r.Method + " " + what
	}
	dur := ""
	if r.DurationMs > 0 {
		dur = fmt.Sprintf("%.1fms", r.DurationMs)
	}
	return fmt.Sprintf("%s\t%s/%s\t%s\t%s\tsession %s\t%s",
		r.Time.Local().Format("2006-01-02 15:04:05"), r.Server, r.Tool, what, dur, who, r.Args)
}

// rotatedFiles are the rotated files of the audit log at path, newest
// (path.1) first.
func rotatedFiles(path string) []string {
	var names []string
	for i := 1; ; i++ {
		name := audit.RotatedName(path, i)
		if _, err := os.Stat(name); err != nil {
			return names
		}
		names = append(names, name)
	}
}

// readAll calls fn with each complete line of path; it returns the offset
// after the last one.
func readAll(path string, fn func([]byte)) (int64, error) {
	return readFrom(path, 0, fn)
}

func readFrom(path string, offset int64, fn func([]byte)) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return offset, nil // a partial last line is read next time
		}
		offset += int64(len(line))
		fn(line[:len(line)-1])
	}
}
