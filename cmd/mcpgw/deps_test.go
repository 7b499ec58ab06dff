package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The production binary links no test code, the gateway reads the cache
// only through the registry, and links none of the CLI's side: layering
// that a stray import would silently undo.
func TestImportBoundaries(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	list := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command(goBin, append([]string{"list"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	for _, dep := range list("-deps", ".") {
		if dep == "testing" || strings.HasSuffix(dep, "/fakeupstream") {
			t.Errorf("mcpgw links %s", dep)
		}
	}
	// The bench command runs fakeupstream's servers, never test glue.
	for _, dep := range list("-deps", "../mcpgw-bench") {
		if dep == "testing" || strings.HasSuffix(dep, "/testmain") {
			t.Errorf("mcpgw-bench links %s", dep)
		}
	}
	imports := list("-f", `{{join .Imports " "}}`, "../../gateway")
	if slices.Contains(imports, "github.com/mcpgw/mcpgw/cachefile") {
		t.Error("the gateway imports cachefile; it reads listings through the registry")
	}
	// What runs in the CLI's process stays out of the daemon's packages:
	// they share only the shim's wire protocol.
	for _, dep := range list("-deps", "../../gateway/...") {
		if dep == "github.com/mcpgw/mcpgw/internal/shim" || dep == "github.com/mcpgw/mcpgw/internal/control" {
			t.Errorf("the gateway links %s, which runs in the CLI", dep)
		}
	}
}
