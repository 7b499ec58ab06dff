//go:build linux

package conformance

import (
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// TestMain lets the test binary double as the helper processes the tests
// start (see e2e.Main): the conformance suite's client, the CLI under its
// auth scenarios, and the browser that `mcpgw login` opens.
func TestMain(m *testing.M) {
	e2e.Main(m, map[string]func(string) error{
		"conformance-client": conformanceClientMain,
		"conformance-cli":    conformanceCLIMain,
		"browse":             browseMain,
	})
}
