//go:build linux

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/e2e"
)

// conformanceAuthThroughCLI are, for each protocol revision, the client
// auth scenarios of the suite (0.2.0-alpha.12, conformance-next) run at
// that revision through the CLI, all of which must pass: at 2026-07-28
// and 2025-11-25 those the revision's client requirements score, and
// client-credentials-basic of the unscored extensions (the machine
// account grant mcpgw offers; client-credentials-jwt, DPoP, workload
// identity and enterprise-managed authorization it does not); at
// 2025-03-26 the scenarios of servers without protected-resource
// metadata. At 2026-07-28 the suite's server speaks that revision only
// (initialize is answered 400), so `mcpgw login` must ask it with
// server/discover; authorization-server-migration moves the resource to a
// new authorization server after its first authorized request, where
// mcpgw must register a client of its own (SEP-2352).
//
// Scenarios passed, before → after mcpgw's login spoke 2026-07-28 and
// kept credentials per authorization server:
//
//	2026-07-28  22 of 25 → 25 of 25 (scored), client-credentials-basic passing
//	2025-11-25  14 of 14 → 14 of 14
var conformanceAuthThroughCLI = map[string][]string{
	"2026-07-28": {
		"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
		"auth/basic-cimd",
		"auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
		"auth/scope-step-up", "auth/scope-retry-limit",
		"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
		"auth/pre-registration", "auth/resource-mismatch",
		"auth/offline-access-scope", "auth/offline-access-not-supported",
		"auth/authorization-server-migration",
		"auth/iss-supported", "auth/iss-not-advertised", "auth/iss-supported-missing", "auth/iss-wrong-issuer",
		"auth/iss-unexpected", "auth/iss-normalized", "auth/metadata-issuer-mismatch",
		"auth/client-credentials-basic",
	},
	// The same flows as at 2026-07-28 but for the protocol the server
	// and mcpgw's login speak (initialize rather than server/discover):
	// one of each way a login starts (metadata found, a pre-registered
	// client, a machine account) and the step-up a call causes. All 14
	// scored ones passed on the day the login learned both eras.
	"2025-11-25": {
		"auth/metadata-default", "auth/scope-step-up", "auth/pre-registration", "auth/client-credentials-basic",
	},
	"2025-03-26": {
		"auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
	},
}

// TestConformanceAuthThroughCLI runs the suite's client auth scenarios
// (conformanceAuthThroughCLI) at each revision with the commands a user
// runs: the server in mcpgw's default config file with "auth": "oauth", a
// daemon, `mcpgw login` with a browser that follows the redirects, then
// `mcpgw call` — and, when a command says the server wants a login (more
// scope, or the daemon's connect with the new login was refused) and
// which command to run, that command once.
func TestConformanceAuthThroughCLI(t *testing.T) {
	t.Parallel()
	node22, cli := needConformanceNext(t)
	bin := e2e.BuildMcpgw(t)
	run := conformanceRun{env: []string{envConformanceMcpgw + "=" + bin}}
	for _, rev := range slices.Sorted(maps.Keys(conformanceAuthThroughCLI)) {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			runConformanceScenarios(t, run, conformanceAuthThroughCLI[rev], func(sc string) []string {
				// --force: an extension scenario is on no revision's
				// timeline, and is skipped without it.
				return []string{node22, cli, "client", "--command", e2e.TestServerBin + " conformance-cli", "--scenario", sc,
					"--spec-version", rev, "--force", "--timeout", conformanceClientTimeout}
			})
		})
	}
}

// envConformanceMcpgw passes the mcpgw binary to conformanceCLIMain.
const envConformanceMcpgw = "MCPGW_CONFORMANCE_BIN"

// conformanceCLIMain is the client program of TestConformanceAuthThroughCLI:
// a user with a fresh home directory, who puts the server in the default
// config file and runs the daemon, `mcpgw login` and `mcpgw call`.
func conformanceCLIMain(url string) error {
	bin := os.Getenv(envConformanceMcpgw)
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	home, err := os.MkdirTemp("", "mcpgw-user-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	entry := map[string]any{"url": url, "auth": "oauth"}
	sc := conformanceContext()
	oauthBlock := map[string]any{}
	switch {
	case strings.HasPrefix(scenario, "auth/client-credentials"):
		oauthBlock = map[string]any{"clientId": sc.ClientID, "clientSecret": sc.ClientSecret, "grantType": "client_credentials"}
	case sc.ClientID != "":
		oauthBlock = map[string]any{"clientId": sc.ClientID, "clientSecret": sc.ClientSecret}
	case scenario == "auth/basic-cimd":
		oauthBlock = map[string]any{"clientMetadataUrl": "https://conformance-test.local/client-metadata.json"}
	}
	if len(oauthBlock) > 0 {
		entry["oauth"] = oauthBlock
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"conformance": entry}})
	configDir := filepath.Join(home, ".config", "mcpgw")
	if err := os.MkdirAll(configDir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(configDir, "mcp.json"), cfg, 0o600); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	listen := ln.Addr().String()
	ln.Close()
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_RUNTIME_DIR="+filepath.Join(home, "run"),
		"MCPGW_LISTEN="+listen, "BROWSER="+e2e.TestServerBin+" browse")
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		fmt.Fprintf(os.Stderr, "$ mcpgw %s\n%s", strings.Join(args, " "), out)
		return string(out), err
	}
	daemon := exec.Command(bin, "serve", "--no-bootstrap")
	daemon.Env = env
	daemon.Stderr = os.Stderr
	if err := daemon.Start(); err != nil {
		return err
	}
	defer func() { daemon.Process.Signal(os.Interrupt); daemon.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if resp, err := http.Get("http://" + listen + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the daemon did not answer on %s", listen)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// login logs in, and once more if the daemon's connect with the new
	// login was refused and the command said to log in again (a server
	// that moved to another authorization server meanwhile).
	login := func() error {
		out, err := run("login", "conformance")
		if err == nil && strings.Contains(out, "run: mcpgw login conformance") {
			_, err = run("login", "conformance")
		}
		return err
	}
	if !strings.HasPrefix(scenario, "auth/client-credentials") {
		// A machine account needs no login: the daemon gets its tokens.
		if err := login(); err != nil {
			return err
		}
	}
	out, err := run("call", "conformance_test-tool")
	if err != nil && strings.Contains(out, "run: mcpgw login conformance") {
		// What the call said to do, once.
		if err := login(); err != nil {
			return err
		}
		_, err = run("call", "conformance_test-tool")
	}
	return err
}

// browseMain is a browser for `mcpgw login`: it opens the URL and follows
// the redirects, as a person's browser does when the authorization server
// consents at once, to the callback mcpgw listens on.
func browseMain(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode >= 400 {
		return fmt.Errorf("%s: %s", resp.Request.URL, resp.Status)
	}
	return nil
}
