package main

import (
	"os"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// sessionDir is where the daemon keeps shim sessions' state across
// restarts; none for a private --stdio session.
func sessionDir(private bool) string {
	if private {
		return ""
	}
	return deploy.SessionDir()
}

// oauthStore is where the daemon and mcpgw login keep OAuth logins.
func oauthStore() *oauth.Store {
	if d := os.Getenv("MCPGW_OAUTH_DIR"); d != "" {
		return &oauth.Store{Dir: d}
	}
	return &oauth.Store{Dir: oauth.DefaultDir(deploy.StateDir())}
}
