package main

import (
	"flag"
	"runtime"
	"testing"
)

// The memory profiler is off in mcpgw's processes (main.go's init), so
// that a daemon's RSS holds no table of sampled stacks nobody reads.
func TestMemoryProfilerOff(t *testing.T) {
	if f := flag.Lookup("test.memprofilerate"); f != nil && f.Value.String() != "0" {
		t.Skip("the test run profiles memory itself")
	}
	if f := flag.Lookup("test.memprofile"); f != nil && f.Value.String() != "" {
		t.Skip("the test run profiles memory itself")
	}
	if runtime.MemProfileRate != 0 {
		t.Fatalf("runtime.MemProfileRate = %d, want 0", runtime.MemProfileRate)
	}
}
