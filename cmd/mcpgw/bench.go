package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mcpgw/mcpgw/registry/search"
)

// benchCmd is `mcpgw bench search`.
func benchCmd(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "search" {
		writeDoc(stdout, "bench", nil)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errors.New("mcpgw bench: say what to measure (mcpgw bench search)")
	}
	return benchSearch(args[1:], stdout)
}

func benchSearch(args []string, stdout io.Writer) error {
	fs := newFlagSet("bench search", stdout)
	catalog := fs.String("catalog", "", "catalog file in the metadata-cache shape")
	queries := fs.String("queries", "", "queries, JSON Lines of {\"query\", \"relevant\": [\"server/tool\"]}")
	k := fs.Int("k", 10, "result limit of the timed searches")
	explain := fs.Int("explain", 0, "explain this many queries whose first result is not relevant")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *catalog == "" || *queries == "" {
		return errors.New("usage: mcpgw bench search --catalog FILE --queries FILE [--k 10] [--explain N]")
	}
	cf, err := os.Open(*catalog)
	if err != nil {
		return err
	}
	defer cf.Close()
	qf, err := os.Open(*queries)
	if err != nil {
		return err
	}
	defer qf.Close()
	if _, err := search.RunBench(cf, qf, stdout, &search.BenchOptions{K: *k, Explain: *explain}); err != nil {
		return fmt.Errorf("bench search: %w", err)
	}
	return nil
}
