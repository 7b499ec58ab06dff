//go:build unix

package e2e

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/identity/testissuer"
)

// TeamAudience is the audience of the team daemons this package writes
// configurations for: their users' tokens are the test issuer's for it.
const TeamAudience = "mcpgw"

// Team is what a team daemon's configuration holds besides its issuer
// and audience.
type Team struct {
	Servers  map[string]any // mcpServers
	Settings map[string]any // settings; nil for none
	// Block adds to the team block (groupsClaim, store, …); issuer and
	// audience are always the test issuer's and TeamAudience.
	Block map[string]any
}

// NewIssuer starts a test issuer that closes when the test ends, after the
// daemons the test started later have stopped.
func NewIssuer(t testing.TB) *testissuer.Issuer {
	t.Helper()
	iss := testissuer.New()
	t.Cleanup(iss.Close)
	return iss
}

// WriteTeamConfig writes, into dir, the mcp.json of a daemon in team mode
// whose users are iss's for TeamAudience, and returns its path.
func WriteTeamConfig(t testing.TB, dir string, iss *testissuer.Issuer, team Team) string {
	t.Helper()
	block := map[string]any{"issuer": iss.URL, "audience": TeamAudience}
	maps.Copy(block, team.Block)
	cfg := map[string]any{"team": block, "mcpServers": team.Servers}
	cfg["settings"] = withTestDiscovery(team.Settings)
	path := filepath.Join(dir, "mcp.json")
	WriteJSON(t, path, cfg)
	return path
}

// TeamDaemon is a daemon in team mode, and the issuer of its users' tokens.
type TeamDaemon struct {
	*Daemon
	Issuer *testissuer.Issuer
}

// StartTeamDaemon writes team's configuration into a directory of its own
// and starts a daemon on it, open to remote clients (in team mode every
// request needs a user's token, so --allow-remote needs no token of the
// daemon's own), with extra flags after.
func StartTeamDaemon(t testing.TB, iss *testissuer.Issuer, team Team, extra ...string) *TeamDaemon {
	t.Helper()
	dir := t.TempDir()
	config := WriteTeamConfig(t, dir, iss, team)
	return &TeamDaemon{Daemon: StartDaemon(t, dir, config, append([]string{"--allow-remote"}, extra...)...), Issuer: iss}
}

// Token is user's bearer token for the daemon.
func (d *TeamDaemon) Token(user string) string { return d.Issuer.Token(user, TeamAudience) }

// As is the daemon's MCP endpoint reached as user.
func (d *TeamDaemon) As(user string) Target { return d.WithToken(d.Token(user)) }

// WithToken is the daemon's MCP endpoint reached with token, a bearer
// token the test made itself (other claims, another signature).
func (d *TeamDaemon) WithToken(token string) Target {
	return Target{URL: d.MCPURL(), Headers: map[string]string{"Authorization": "Bearer " + token}}
}

// CLIAs runs `mcpgw COMMAND --url URL ARGS…` against d as the user whose
// bearer token is token ("" sends none), with d's home and state
// directories, and returns what it printed.
func (d *Daemon) CLIAs(t testing.TB, token, command string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(BuildMcpgw(t), append([]string{command, "--url", d.URL}, args...)...)
	cmd.Env = append(os.Environ(), "MCPGW_TOKEN="+token, "HOME="+d.Dir, "XDG_STATE_HOME="+filepath.Join(d.Dir, "state"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}
