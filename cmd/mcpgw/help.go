package main

import (
	_ "embed"
	"flag"
	"fmt"
	"io"
	"strings"
)

// cmdDoc is what `mcpgw help CMD` and `mcpgw CMD -h` say about a command,
// in the style of the go command: usage, what it does, flags, examples.
type cmdDoc struct {
	usage    string   // after "mcpgw "
	summary  string   // one line
	examples []string // command lines, each with a comment after "#"
	more     string   // further paragraphs, if any
}

// help.txt holds the usage summary, then a section per command:
// "== USAGE", a one-line summary, examples indented by two spaces, and
// further paragraphs.
//
//go:embed help.txt
var helpText string

var usage, docs = parseHelp(helpText)

func parseHelp(text string) (string, map[string]cmdDoc) {
	sections := strings.Split(text, "\n== ")
	docs := map[string]cmdDoc{}
	for _, sec := range sections[1:] {
		lines := strings.Split(strings.TrimRight(sec, "\n"), "\n")
		d := cmdDoc{usage: lines[0]}
		var more []string
		for _, l := range lines[1:] {
			switch {
			case strings.HasPrefix(l, "  "):
				d.examples = append(d.examples, l[2:])
			case d.summary == "":
				d.summary = l
			default:
				more = append(more, l)
			}
		}
		d.more = strings.TrimSpace(strings.Join(more, "\n"))
		docs[strings.Fields(d.usage)[0]] = d
	}
	return sections[0] + "\n", docs
}

// newFlagSet is a subcommand's flag set, writing to stderr, whose -h
// prints the command's documentation.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { writeDoc(fs.Output(), name, fs) }
	return fs
}

// writeDoc prints the documentation of command name (its flags from fs,
// if any).
func writeDoc(w io.Writer, name string, fs *flag.FlagSet) {
	d, ok := docs[strings.Fields(name)[0]]
	if !ok {
		d = cmdDoc{usage: name + " [flags]"}
	}
	fmt.Fprintf(w, "usage: mcpgw %s\n", d.usage)
	if d.summary != "" {
		fmt.Fprintf(w, "\n%s\n", d.summary)
	}
	if d.more != "" {
		fmt.Fprintf(w, "\n%s\n", d.more)
	}
	hasFlags := false
	if fs != nil {
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	}
	if hasFlags {
		fmt.Fprintln(w, "\nFlags:")
		fs.PrintDefaults()
	}
	if len(d.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range d.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}
