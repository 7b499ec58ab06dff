package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/zalando/go-keyring"
)

// keyringService names mcpgw's items in the OS keyring.
const keyringService = "mcpgw-oauth"

// key names serverURL's credentials: the same digest as the file name.
func (s *Store) key(serverURL string) string {
	sum := sha256.Sum256([]byte(serverURL))
	return hex.EncodeToString(sum[:12])
}

// read returns serverURL's stored credentials as written; an error
// wrapping os.ErrNotExist when there are none.
func (s *Store) read(serverURL string) ([]byte, error) {
	if s.Backend != nil {
		return s.Backend.Read(serverURL)
	}
	if !s.Keyring {
		return os.ReadFile(s.path(serverURL))
	}
	v, err := keyring.Get(keyringService, s.key(serverURL))
	switch {
	case errors.Is(err, keyring.ErrNotFound):
		return nil, os.ErrNotExist
	case err != nil:
		return nil, keyringError(err)
	}
	return []byte(v), nil
}

// remove deletes serverURL's stored credentials, if any.
func (s *Store) remove(serverURL string) error {
	if s.Backend != nil {
		return s.Backend.Remove(serverURL)
	}
	if !s.Keyring {
		if err := os.Remove(s.path(serverURL)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := keyring.Delete(keyringService, s.key(serverURL)); err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return keyringError(err)
	}
	return nil
}

func keyringSet(key string, data []byte) error {
	if err := keyring.Set(keyringService, key, string(data)); err != nil {
		return keyringError(err)
	}
	return nil
}

// keyringError says that the keyring failed, and what to do: the
// credentials were not written anywhere else.
func keyringError(err error) error {
	return fmt.Errorf("the OS keyring (settings.oauthCredentialStore \"keyring\") is not available: %w; nothing was stored elsewhere; start a Secret Service (gnome-keyring, KeePassXC) or set oauthCredentialStore to \"file\"", err)
}
