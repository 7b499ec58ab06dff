// Package oauth keeps the OAuth credentials of remote upstream servers and
// runs the login that obtains them. The daemon only reads and refreshes
// stored credentials; a login, which needs a browser, is run by `mcpgw
// login`, never by the daemon on its own.
package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// Credentials are what a login leaves for one server URL and one
// authorization server: the client the authorization server knows
// (registered dynamically, pre-registered, or a metadata document), its
// endpoints, and the tokens. They never appear in logs, status or errors.
type Credentials struct {
	ServerURL string `json:"serverUrl"`
	// Issuer is the authorization server's issuer identifier (RFC 8414):
	// its client and tokens are good there and nowhere else (SEP-2352).
	// Empty in credentials stored before it was recorded.
	Issuer       string        `json:"issuer,omitempty"`
	ClientID     string        `json:"clientId"`
	ClientSecret string        `json:"clientSecret,omitempty"`
	AuthURL      string        `json:"authUrl,omitempty"`
	TokenURL     string        `json:"tokenUrl"`
	AuthStyle    int           `json:"authStyle,omitempty"`
	RedirectURL  string        `json:"redirectUrl,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	Token        *oauth2.Token `json:"token,omitempty"`
	// Registered marks a client registered dynamically by a login, which
	// the next login reuses.
	Registered bool `json:"registered,omitempty"`
	// Grant is "client_credentials" for a machine account, whose tokens
	// are renewed with the same grant; else the authorization code flow's.
	Grant    string `json:"grant,omitempty"`
	Resource string `json:"resource,omitempty"` // RFC 8707 resource indicator
	// Wanted are scopes the server asked for since this login (a 403
	// with insufficient_scope: a step-up): the next login asks for them
	// with those granted.
	Wanted []string `json:"wantedScopes,omitempty"`
}

// NoteWanted records scopes the server at serverURL asked for beyond its
// login's (see Credentials.Wanted); it reports whether they are new.
func (s *Store) NoteWanted(serverURL string, scopes []string) (bool, error) {
	c, err := s.Load(serverURL)
	if err != nil {
		return false, err
	}
	before := len(c.Wanted)
	for _, sc := range scopes {
		if !slices.Contains(c.Scopes, sc) && !slices.Contains(c.Wanted, sc) {
			c.Wanted = append(c.Wanted, sc)
		}
	}
	if len(c.Wanted) == before {
		return false, nil
	}
	return true, s.update(c)
}

func (c *Credentials) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     c.ClientID,
		ClientSecret: c.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: c.AuthURL, TokenURL: c.TokenURL, AuthStyle: oauth2.AuthStyle(c.AuthStyle)},
		RedirectURL:  c.RedirectURL,
		Scopes:       c.Scopes,
	}
}

// A Store keeps Credentials in files of mode 0600, one per server URL, in a
// directory of mode 0700. Writes are atomic (a temporary file renamed), so
// the daemon and a login in another process never see half a file.
//
// A server's file holds the credentials of its last login and, apart,
// those of other authorization servers it named before (SEP-2352: a
// protected resource may move to another authorization server, and a
// client registered with one, or its refresh token, must never be sent to
// another). The credentials in use are at the top level, the shape of a
// file written before issuers were kept apart; the others under
// "otherIssuers".
//
// With Keyring set, the credentials live in the OS keyring instead (the
// Secret Service over D-Bus on Linux, the login keychain on macOS), and
// nothing is written to Dir. A keyring that cannot be reached is an error:
// credentials never fall back to files.
//
// With Backend set, the records are kept there instead of either (each
// user's own logins in team mode).
type Store struct {
	Dir     string
	Keyring bool
	Backend Backend
}

// record is what the store keeps for one server URL.
type record struct {
	Credentials                // in use: the last login's
	Others      []*Credentials `json:"otherIssuers,omitempty"` // of other authorization servers, one each
}

// DefaultDir is where a daemon and `mcpgw login` keep credentials, under
// stateDir.
func DefaultDir(stateDir string) string { return filepath.Join(stateDir, "oauth") }

func (s *Store) path(serverURL string) string {
	return filepath.Join(s.Dir, s.key(serverURL)+".json")
}

// ErrNotLoggedIn is returned for a server with no stored token.
var ErrNotLoggedIn = errors.New("not logged in")

// Load returns the credentials of serverURL's last login, whatever its
// authorization server; ErrNotLoggedIn when there are none. Credentials
// stored for another URL (a hash collision, a hand-copied file) are never
// returned.
func (s *Store) Load(serverURL string) (*Credentials, error) {
	r, err := s.load(serverURL)
	if err != nil {
		return nil, err
	}
	return &r.Credentials, nil
}

// LoadIssuer returns the credentials serverURL's logins got from the
// authorization server issuer, whether or not they are the ones in use;
// ErrNotLoggedIn when there are none.
func (s *Store) LoadIssuer(serverURL, issuer string) (*Credentials, error) {
	r, err := s.load(serverURL)
	if err != nil {
		return nil, err
	}
	if c := r.find(issuer); c != nil {
		return c, nil
	}
	return nil, ErrNotLoggedIn
}

// find returns the credentials of issuer in r, nil if none.
func (r *record) find(issuer string) *Credentials {
	if sameIssuer(r.Issuer, issuer) {
		return &r.Credentials
	}
	for _, c := range r.Others {
		if sameIssuer(c.Issuer, issuer) {
			return c
		}
	}
	return nil
}

// sameIssuer compares issuer identifiers as the go-sdk does: a trailing
// slash makes no difference.
func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// load reads serverURL's record; ErrNotLoggedIn when there is none.
func (s *Store) load(serverURL string) (*record, error) {
	data, err := s.read(serverURL)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotLoggedIn
	}
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("reading stored credentials: %w", err)
	}
	if r.ServerURL != serverURL {
		return nil, ErrNotLoggedIn
	}
	r.Others = slices.DeleteFunc(r.Others, func(c *Credentials) bool { return c == nil || c.ServerURL != serverURL })
	return &r, nil
}

// Save stores c, a login's credentials, as those its server uses from now
// on. Credentials of another authorization server are kept apart for a
// return to it; those of an unknown one (stored before issuers were
// recorded) are dropped once c names its issuer.
func (s *Store) Save(c *Credentials) error {
	r, err := s.load(c.ServerURL)
	if errors.Is(err, ErrNotLoggedIn) {
		return s.write(&record{Credentials: *c})
	}
	if err != nil {
		return err
	}
	others := slices.DeleteFunc(r.Others, func(o *Credentials) bool { return sameIssuer(o.Issuer, c.Issuer) })
	if prev := r.Credentials; !sameIssuer(prev.Issuer, c.Issuer) && (prev.Issuer != "" || c.Issuer == "") {
		others = append(others, &prev)
	}
	return s.write(&record{Credentials: *c, Others: others})
}

// update stores c in place of the credentials of the same authorization
// server (new tokens, scopes noted), without changing which ones the
// server uses: a login in another process may have moved it meanwhile.
func (s *Store) update(c *Credentials) error {
	r, err := s.load(c.ServerURL)
	if errors.Is(err, ErrNotLoggedIn) {
		return s.write(&record{Credentials: *c})
	}
	if err != nil {
		return err
	}
	old := r.find(c.Issuer)
	if old == nil {
		r.Others = append(r.Others, c)
	} else {
		*old = *c
	}
	return s.write(r)
}

// write stores r as its server's record.
func (s *Store) write(r *record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if s.Backend != nil {
		return s.Backend.Write(r.ServerURL, data)
	}
	if s.Keyring {
		return keyringSet(s.key(r.ServerURL), data)
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(s.Dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.path(r.ServerURL))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Forget removes serverURL's tokens, from every authorization server,
// keeping the registered clients for the next login unless all.
func (s *Store) Forget(serverURL string, all bool) error {
	r, err := s.load(serverURL)
	if errors.Is(err, ErrNotLoggedIn) {
		return nil
	}
	if err != nil || all {
		return s.remove(serverURL)
	}
	r.Token = nil
	for _, c := range r.Others {
		c.Token = nil
	}
	return s.write(r)
}

// A Source gives the access token of one server: the stored one, refreshed
// when it expires (one refresh at a time, the new tokens stored before the
// new access token is used). It re-reads the store when the file changes,
// so a login in another process takes effect at the next request.
type Source struct {
	store     *Store
	serverURL string
	ctx       context.Context // for refreshes: the HTTP client to use

	mu      sync.Mutex
	creds   *Credentials
	modTime time.Time
}

// Source returns the token source of serverURL. ctx carries the HTTP client
// refreshes use (oauth2.HTTPClient), if any.
func (s *Store) Source(ctx context.Context, serverURL string) *Source {
	return &Source{store: s, serverURL: serverURL, ctx: ctx}
}

// Reset makes the next Token read the store again, for a login that
// changed elsewhere (a Backend is otherwise read again only after
// keyringRecheck).
func (src *Source) Reset() {
	src.mu.Lock()
	defer src.mu.Unlock()
	src.creds = nil
}

// From reports whether src gives the tokens of store.
func (src *Source) From(store *Store) bool { return src.store == store }

// ErrLoginExpired is returned, wrapped with the reason, when the access
// token has expired and cannot be renewed: the server gave no refresh
// token, or the authorization server refused it (revoked, expired). Only
// a new login helps.
var ErrLoginExpired = errors.New("the login has expired")

// expiryMargin is how long before its expiry a token is refreshed.
const expiryMargin = 30 * time.Second

// Token returns a valid access token; ErrNotLoggedIn or ErrLoginExpired when
// a login is needed.
func (src *Source) Token() (*oauth2.Token, error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	if err := src.reload(); err != nil {
		return nil, err
	}
	c := src.creds
	if c == nil || c.Token == nil || c.Token.AccessToken == "" {
		return nil, ErrNotLoggedIn
	}
	if c.Token.Expiry.IsZero() || time.Until(c.Token.Expiry) > expiryMargin {
		return c.Token, nil
	}
	if locker, ok := src.store.Backend.(Locker); ok {
		// Another process may be refreshing the same login: wait for
		// it, and use what it stored if it did.
		unlock, err := locker.Lock(src.serverURL)
		if err != nil {
			return nil, fmt.Errorf("waiting to refresh the access token: %w", err)
		}
		defer unlock()
		refused := c.Token.AccessToken
		src.creds = nil
		if err := src.reload(); err != nil {
			return nil, err
		}
		if c = src.creds; c == nil || c.Token == nil || c.Token.AccessToken == "" {
			return nil, ErrNotLoggedIn
		}
		if c.Token.AccessToken != refused && (c.Token.Expiry.IsZero() || time.Until(c.Token.Expiry) > expiryMargin) {
			return c.Token, nil
		}
	}
	if c.Grant == "client_credentials" {
		tok, err := c.clientCredentials(src.ctx, nil)
		if err != nil {
			return nil, err
		}
		c.Token = tok
		if err := src.store.update(c); err != nil {
			return nil, fmt.Errorf("storing the new token: %w", err)
		}
		src.stat()
		return tok, nil
	}
	if c.Token.RefreshToken == "" {
		return nil, fmt.Errorf("%w (the access token expired, and the server gave no refresh token)", ErrLoginExpired)
	}
	old := *c.Token
	old.Expiry = time.Now().Add(-time.Minute) // make the library refresh
	tok, err := c.config().TokenSource(src.ctx, &old).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.Response != nil && re.Response.StatusCode == 400) {
			c.Token = nil
			_ = src.store.update(c) // no retry loop: the next request finds no token
			return nil, fmt.Errorf("%w (the refresh token was refused)", ErrLoginExpired)
		}
		return nil, fmt.Errorf("refreshing the access token: %v", err)
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = old.RefreshToken
	}
	c.Token = tok
	if err := src.store.update(c); err != nil {
		return nil, fmt.Errorf("storing the refreshed token: %w", err)
	}
	src.stat()
	return tok, nil
}

// reload re-reads the credentials when they changed: the file's
// modification time, or, in the keyring or a Backend, at most once per
// keyringRecheck (every time while there are none).
func (src *Source) reload() error {
	version := time.Now()
	if src.store.Keyring || src.store.Backend != nil {
		if src.creds != nil && time.Since(src.modTime) < keyringRecheck {
			return nil
		}
	} else {
		fi, err := os.Stat(src.store.path(src.serverURL))
		if errors.Is(err, os.ErrNotExist) {
			src.creds = nil
			return nil
		}
		if err != nil {
			return err
		}
		if src.creds != nil && fi.ModTime().Equal(src.modTime) {
			return nil
		}
		version = fi.ModTime()
	}
	c, err := src.store.Load(src.serverURL)
	if errors.Is(err, ErrNotLoggedIn) {
		src.creds = nil
		return nil
	}
	if err != nil && src.store.Backend != nil && src.creds != nil {
		// A store that cannot be read now (the team store down) leaves
		// the login read last in use until it needs a refresh.
		return nil
	}
	if err != nil {
		return err
	}
	src.creds, src.modTime = c, version
	return nil
}

// keyringRecheck is how long a Source trusts what it read from the
// keyring (a login in another process shows after at most this long).
const keyringRecheck = 2 * time.Second

func (src *Source) stat() {
	if src.store.Keyring || src.store.Backend != nil {
		src.modTime = time.Now()
		return
	}
	if fi, err := os.Stat(src.store.path(src.serverURL)); err == nil {
		src.modTime = fi.ModTime()
	}
}

// Invalidate forgets the access token refused, after the server refused
// it, so that the next Token refreshes. A token other than the one refused
// is kept: when several requests are refused at once, the first to get
// here refreshes, and the others' refusals must not undo that refresh.
func (src *Source) Invalidate(refused string) {
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.creds != nil && src.creds.Token != nil && src.creds.Token.AccessToken == refused {
		t := *src.creds.Token
		t.Expiry = time.Now().Add(-time.Hour)
		src.creds.Token = &t
	}
}
