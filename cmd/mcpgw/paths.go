package main

import "github.com/mcpgw/mcpgw/deploy"

// sessionDir is where the daemon keeps shim sessions' state across
// restarts; none for a private --stdio session.
func sessionDir(private bool) string {
	if private {
		return ""
	}
	return deploy.SessionDir()
}
