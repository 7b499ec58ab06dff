package teamstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
)

// Logins keeps each user's own OAuth logins (servers with "auth": "oauth"
// and "isolation": "user" in team mode) in the store, so that a login
// made through one replica serves the user's calls through every other.
// A login is the JSON record oauth.Store writes for one server URL; it is
// kept as PREFIX login:USER:SERVER (SERVER a digest of the server's URL),
// sealed with AES-256-GCM under team.credentialKey, with a fresh random
// nonce at each write and the user and the server's URL as associated
// data: the store holds no token in the clear, and a value copied to
// another user's or server's key does not open there. A login expires
// LoginTTL after it was last read or written.
//
// A refresh of a user's token takes PREFIX loginlock:USER:SERVER
// (Lock), so that two replicas never both spend a refresh token that
// rotates; the one that waited reads the refreshed login.
type Logins struct {
	st  *Store
	key func() []byte // team.credentialKey as configured now
}

// LoginTTL is how long a login is kept after it was last used: a user who
// has not called the server for that long logs in again.
const LoginTTL = 30 * 24 * time.Hour

// Refresh locks: held at most lockTTL (a replica that dies holding one
// delays the others that long), waited for at most lockWait.
const (
	lockTTL  = 15 * time.Second
	lockWait = 20 * time.Second
)

// ErrNoCredentialKey: team.credentialKey is not set, so users' logins
// cannot be kept in the store.
var ErrNoCredentialKey = errors.New("team.credentialKey is not set: users' own logins cannot be kept in the team store")

// ErrSealBroken is a stored login that does not open: sealed under another
// team.credentialKey, for another user or server, or altered.
var ErrSealBroken = errors.New("the stored login does not open (sealed with another team.credentialKey, for another user or server, or altered); log in again")

// Logins returns the store's users' logins, sealed with the key key gives
// (read at each use, so that a reload's new key takes effect).
func (s *Store) Logins(key func() []byte) *Logins { return &Logins{st: s, key: key} }

// For returns user's logins: an oauth.Backend and oauth.Locker.
func (l *Logins) For(user string) *UserLogins { return &UserLogins{l: l, user: user} }

// UserLogins are one user's logins in the store. Its methods are safe for
// concurrent use; each waits for the store a few seconds at most.
type UserLogins struct {
	l    *Logins
	user string
}

// storeTimeout bounds each of UserLogins' requests: they are called
// without a context, on a call's path.
const storeTimeout = 5 * time.Second

func serverKey(serverURL string) string {
	sum := sha256.Sum256([]byte(serverURL))
	return hex.EncodeToString(sum[:12])
}

// Key is the store's key of user's login to serverURL.
func (l *Logins) Key(user, serverURL string) string {
	return l.st.key("login", esc(user), serverKey(serverURL))
}

func (l *Logins) lockKey(user, serverURL string) string {
	return l.st.key("loginlock", esc(user), serverKey(serverURL))
}

// Read returns user's login to serverURL, opened; an error wrapping
// os.ErrNotExist when there is none.
func (u *UserLogins) Read(serverURL string) ([]byte, error) {
	key := u.l.key()
	if key == nil {
		return nil, ErrNoCredentialKey
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	sealed, err := u.l.st.rdb.GetEx(ctx, u.l.Key(u.user, serverURL), LoginTTL).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, os.ErrNotExist
	case err != nil:
		return nil, u.l.st.unreachable(err)
	}
	return unseal(key, u.user, serverURL, sealed)
}

// Write seals data, user's login to serverURL, and stores it.
func (u *UserLogins) Write(serverURL string, data []byte) error {
	key := u.l.key()
	if key == nil {
		return ErrNoCredentialKey
	}
	sealed, err := seal(key, u.user, serverURL, data)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := u.l.st.rdb.Set(ctx, u.l.Key(u.user, serverURL), sealed, LoginTTL).Err(); err != nil {
		return u.l.st.unreachable(err)
	}
	return nil
}

// Remove deletes user's login to serverURL.
func (u *UserLogins) Remove(serverURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := u.l.st.rdb.Del(ctx, u.l.Key(u.user, serverURL)).Err(); err != nil {
		return u.l.st.unreachable(err)
	}
	return nil
}

// unlockScript releases a lock only if it is still the holder's: one held
// past lockTTL may have gone to another replica meanwhile.
var unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// Lock takes user's refresh lock for serverURL, waiting while another
// replica holds it (lockWait at most), and returns its release.
func (u *UserLogins) Lock(serverURL string) (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	defer cancel()
	key := u.l.lockKey(u.user, serverURL)
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	holder := hex.EncodeToString(b)
	wait := 5 * time.Millisecond
	for {
		ok, err := u.l.st.rdb.SetNX(ctx, key, holder, lockTTL).Result()
		if err != nil {
			return nil, u.l.st.unreachable(err)
		}
		if ok {
			return func() {
				ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
				defer cancel()
				_ = unlockScript.Run(ctx, u.l.st.rdb, []string{key}, holder).Err() // else it expires
			}, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("another replica has been refreshing %s's login for %v", u.user, lockWait)
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// sealVersion starts every sealed login: the format below.
const sealVersion = 1

// associated is what a sealed login is bound to: whose login, to which
// server. GCM checks it as it opens.
func associated(user, serverURL string) []byte {
	return []byte("mcpgw login\x00" + user + "\x00" + serverURL)
}

// seal returns data sealed for user and serverURL under key (32 bytes:
// AES-256-GCM): the version byte, a fresh random nonce, the ciphertext
// and its tag.
func seal(key []byte, user, serverURL string, data []byte) ([]byte, error) {
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+gcm.NonceSize(), 1+gcm.NonceSize()+len(data)+gcm.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return gcm.Seal(out, out[1:], data, associated(user, serverURL)), nil
}

// unseal opens what seal made for user and serverURL under key;
// ErrSealBroken for anything else.
func unseal(key []byte, user, serverURL string, sealed []byte) ([]byte, error) {
	gcm, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	n := 1 + gcm.NonceSize()
	if len(sealed) < n+gcm.Overhead() || sealed[0] != sealVersion {
		return nil, ErrSealBroken
	}
	data, err := gcm.Open(nil, sealed[1:n], sealed[n:], associated(user, serverURL))
	if err != nil {
		return nil, ErrSealBroken
	}
	return data, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("team.credentialKey is %d bytes; want 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
