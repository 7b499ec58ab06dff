package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/mcpgw/mcpgw/registry"
)

// benchSearch is `mcpgw bench search`: it measures the search ranking the
// gateway uses on a catalog and a query file and prints R@k, MRR and
// per-query latency.
func benchSearch(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench search", flag.ContinueOnError)
	fs.SetOutput(stdout)
	catalog := fs.String("catalog", "", "catalog file in the metadata-cache shape")
	queries := fs.String("queries", "", "queries, JSON Lines of {\"query\", \"relevant\": [\"server/tool\"]}")
	k := fs.Int("k", 10, "result limit of the timed searches")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *catalog == "" || *queries == "" {
		return errors.New("usage: mcpgw bench search --catalog FILE --queries FILE [--k 10]")
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
	if _, err := registry.RunSearchBenchWith(cf, qf, stdout, &registry.BenchOptions{K: *k}); err != nil {
		return fmt.Errorf("bench search: %w", err)
	}
	return nil
}
