//go:build unix

package pi

import (
	"testing"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m, nil) }
