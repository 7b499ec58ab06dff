package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

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
	rep, err := search.RunBench(cf, qf, &search.BenchOptions{K: *k, Explain: *explain})
	if err != nil {
		return fmt.Errorf("bench search: %w", err)
	}
	writeBenchReport(stdout, rep)
	return nil
}

// writeBenchReport writes the figures of a search bench, then the misses
// it explains.
func writeBenchReport(w io.Writer, r *search.BenchReport) {
	fmt.Fprintf(w, "catalog   %d tools, %d servers; index built in %v\n", r.Tools, r.Servers, r.Build.Round(time.Microsecond))
	fmt.Fprintf(w, "queries   %d", r.Queries)
	if r.Unknown > 0 {
		fmt.Fprintf(w, " (%d name no tool of the catalog, counted as misses)", r.Unknown)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "R@1 %.3f  R@5 %.3f  R@10 %.3f", r.RecallAt1, r.RecallAt5, r.RecallAt10)
	if r.K != 1 && r.K != 5 && r.K != 10 {
		fmt.Fprintf(w, "  R@%d %.3f", r.K, r.RecallAtK)
	}
	fmt.Fprintf(w, "  MRR %.3f\n", r.MRR)
	for _, l := range slices.Sorted(maps.Keys(r.ByLevel)) {
		lv := r.ByLevel[l]
		fmt.Fprintf(w, "  level %d  %d queries  R@5 %.3f  MRR %.3f\n", l, lv.Queries, lv.RecallAt5, lv.MRR)
	}
	fmt.Fprintf(w, "latency   p50 %v  p99 %v  max %v  (per query, limit %d)\n",
		r.P50.Round(100*time.Nanosecond), r.P99.Round(100*time.Nanosecond), r.Max.Round(100*time.Nanosecond), r.K)
	for _, m := range r.Misses {
		fmt.Fprintf(w, "\nmiss: %s\n", m.Query)
		fmt.Fprintf(w, "#1 %s: %s\n", m.First, m.FirstWhy)
		switch {
		case m.Rank > 0:
			fmt.Fprintf(w, "#%d %s (relevant): %s\n", m.Rank, m.Relevant, m.RelevantWhy)
		case m.Relevant != "":
			fmt.Fprintf(w, "unranked %s (relevant): %s\n", m.Relevant, m.RelevantWhy)
		}
	}
}
