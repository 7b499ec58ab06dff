package main

import (
	"os"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/upstream/oauth"
)

// oauthStore is where the daemon and mcpgw login keep OAuth logins.
func oauthStore(s registry.Settings) *oauth.Store {
	dir := os.Getenv("MCPGW_OAUTH_DIR")
	if dir == "" {
		dir = oauth.DefaultDir(deploy.StateDir())
	}
	return &oauth.Store{Dir: dir, Keyring: s.OAuthCredentialStore == registry.CredentialStoreKeyring}
}
