// Package teamstore is team mode's shared store (the config's team.store,
// DESIGN decision 16): what replicas of one team daemon must share, kept
// in Redis. It holds the calls waiting for approval and the decisions on
// them (Pending, a dispatch.Pending), and the HTTP sessions any replica
// may continue (Sessions). It is opened only when team.store is set; a
// daemon without it keeps all of this in its own memory.
//
// Every key starts with the prefix (Options.Prefix, "mcpgw:" by default)
// and has a time to live, so that a store shared with other programs, or
// left behind by replicas that died, holds nothing for ever.
//
// A store that cannot be reached fails what needs it, with an error that
// says so, and nothing else: a call that needs approval is refused, the
// approvals cannot be listed or decided, and a session cannot be resumed
// on a replica that does not have it; sessions go on where they are.
//
// The client is github.com/redis/go-redis/v9, the Redis project's own Go
// client: connection pooling, RESP3, pub/sub with resubscription after a
// reconnect, Lua scripts, and redis:// and rediss:// URLs as team.store
// takes them.
package teamstore

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configure a Store. The zero value is usable.
type Options struct {
	Logger *slog.Logger // nil = discard
	// Prefix starts every key and channel; "" is "mcpgw:". Replicas of
	// one team share a prefix.
	Prefix string
	// SessionTTL is how long a session is kept after its last request;
	// 0 is DefaultSessionTTL.
	SessionTTL time.Duration
}

// DefaultSessionTTL is how long a session is kept after its last request:
// a day, as a shim session's state outlives its daemon.
const DefaultSessionTTL = 24 * time.Hour

// Store is a connection to team.store. Its methods are safe for
// concurrent use. Close it once its users are done.
type Store struct {
	rdb    *redis.Client
	prefix string
	addr   string // the store's address, without credentials, for messages
	log    *slog.Logger
	ttl    time.Duration

	pending *Pending

	stop context.CancelFunc
	done chan struct{} // closed when the subscriber has returned
	once sync.Once
}

// Open returns the store at rawURL (redis://[:PASSWORD@]HOST:PORT[/DB] or
// rediss:// for TLS). It connects lazily: a store that is down now is
// not an error, only a warning in the log; what needs it fails until it
// is up.
func Open(rawURL string, o *Options) (*Store, error) {
	var opts Options
	if o != nil {
		opts = *o
	}
	ro, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("team.store: %w", err)
	}
	// A store that is down answers a request in about a second, not in
	// the client's defaults (5 s to dial, three retries).
	if ro.DialTimeout == 0 {
		ro.DialTimeout = 2 * time.Second
	}
	if ro.ReadTimeout == 0 {
		ro.ReadTimeout = 2 * time.Second
	}
	if ro.WriteTimeout == 0 {
		ro.WriteTimeout = 2 * time.Second
	}
	if ro.MaxRetries == 0 {
		ro.MaxRetries = 1
	}
	// go-redis logs to the standard logger on its own; this package says
	// what failed in its errors and its logger instead.
	redis.SetLogger(quietLogger{})
	s := &Store{
		rdb:    redis.NewClient(ro),
		prefix: opts.Prefix,
		log:    opts.Logger,
		ttl:    opts.SessionTTL,
		done:   make(chan struct{}),
	}
	if s.prefix == "" {
		s.prefix = "mcpgw:"
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.ttl <= 0 {
		s.ttl = DefaultSessionTTL
	}
	scheme := "redis"
	if ro.TLSConfig != nil {
		scheme = "rediss"
	}
	s.addr = (&url.URL{Scheme: scheme, Host: ro.Addr, Path: fmt.Sprintf("/%d", ro.DB)}).String()
	s.pending = newPending(s)
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go func() {
		defer close(s.done)
		s.pending.subscribe(ctx)
	}()
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := s.Ping(pctx); err != nil {
		s.log.Warn("the team store cannot be reached yet; approvals and session resumption fail until it can", "err", err)
	}
	return s, nil
}

// Addr is the store's URL without credentials.
func (s *Store) Addr() string { return s.addr }

// Ping says whether the store answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return s.unreachable(err)
	}
	return nil
}

// Pending is the store's dispatch.Pending: calls waiting for approval on
// any replica, listed and decided on any.
func (s *Store) Pending() *Pending { return s.pending }

// Sessions is the store's HTTP sessions.
func (s *Store) Sessions() *Sessions { return &Sessions{s} }

// Close stops the store's subscription and closes its connections. It is
// safe to call twice.
func (s *Store) Close() error {
	var err error
	s.once.Do(func() {
		s.stop()
		<-s.done
		err = s.rdb.Close()
	})
	return err
}

// unreachable is err as a store failure: what was asked, and where.
func (s *Store) unreachable(err error) error {
	return fmt.Errorf("the team store (%s) cannot be reached: %w", s.addr, err)
}

// key is the store's key of parts.
func (s *Store) key(parts ...string) string {
	k := s.prefix
	for i, p := range parts {
		if i > 0 {
			k += ":"
		}
		k += p
	}
	return k
}

// esc makes a user name or client-given ID one key part: no ':' or
// spaces in it.
func esc(s string) string { return url.QueryEscape(s) }

// quietLogger drops go-redis's own log lines (its pool's reconnects,
// which the errors of the calls that failed report).
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
