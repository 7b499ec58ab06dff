package deploy

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// OpenBrowser opens url in the user's browser: $BROWSER when set (run as
// `$BROWSER URL`, the usual convention), else the platform's opener. It
// returns once the opener has started, not when the page is closed.
func OpenBrowser(url string) error {
	var cmd *exec.Cmd
	switch b := os.Getenv("BROWSER"); {
	case b != "":
		f := strings.Fields(b)
		cmd = exec.Command(f[0], append(f[1:], url)...)
	case runtime.GOOS == "darwin":
		cmd = exec.Command("open", url)
	case runtime.GOOS == "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
