package upstream

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestStateText: a failed connect's first line says the server's own last
// stderr line when it exited, the error and that line when it did not,
// and never ends on a header with nothing after it.
func TestStateText(t *testing.T) {
	t.Parallel()
	exit := &ExitError{Server: "gh", PID: 7, Status: "exit status 1",
		Stderr: []string{"starting", "boom: GITHUB_TOKEN is not set", "", "Node.js v22.1.0"}}
	tests := []struct {
		name string
		err  error
		want string // the first line
	}{
		{"exited", fmt.Errorf("initializing upstream %q: %w", "gh", exit), "boom: GITHUB_TOKEN is not set (exit status 1)"},
		{"exited, failed at start", failedAtStart{fmt.Errorf("initializing upstream %q: %w", "gh", exit)}, "boom: GITHUB_TOKEN is not set (exit status 1)"},
		{"exited silently", &ExitError{Server: "gh", PID: 7, Status: "signal: killed"}, `upstream "gh": process 7 exited (signal: killed)`},
		{"timed out", &TimeoutError{Server: "gh", Op: "connect", After: time.Second,
			Detail: "initializing upstream \"gh\": context deadline exceeded" + stderrSuffix([]string{"listening on stdio"})},
			`upstream "gh": connect timed out after 1s; initializing upstream "gh": context deadline exceeded (stderr: listening on stdio)`},
		{"plain", errors.New("upstream \"gh\" has neither command nor url"), `upstream "gh" has neither command nor url`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stateText(tt.err)
			first, rest, _ := strings.Cut(got, "\n")
			if first != tt.want {
				t.Errorf("first line %q, want %q", first, tt.want)
			}
			if rest != "" && rest != tt.err.Error() {
				t.Errorf("after the first line %q, want the whole error %q", rest, tt.err.Error())
			}
		})
	}
}
