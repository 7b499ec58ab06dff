// Package deploy is how mcpgw sits in the operating system: the per-user
// runtime and state directories, the daemon's unix socket and its
// single-instance lock, and the socket location a daemon advertises so that
// clients with a trimmed environment still find it. It knows nothing about
// MCP.
package deploy
