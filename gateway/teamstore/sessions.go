package teamstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sessions keeps HTTP sessions in the store, so that a request for one
// may land on any replica: what is kept is the gateway's (its client's
// initialize, mode, ToolSearch activations, grants), as bytes. A session
// is PREFIX session:USER:ID, so that one user's lookup never finds
// another's; it expires SessionTTL after its last request.
type Sessions struct{ st *Store }

func (s *Sessions) key(user, id string) string { return s.st.key("session", esc(user), esc(id)) }

// Get returns what is kept for user's session id, nil for nothing, and
// starts its time to live again.
func (s *Sessions) Get(ctx context.Context, user, id string) ([]byte, error) {
	data, err := s.st.rdb.GetEx(ctx, s.key(user, id), s.st.ttl).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil:
		return nil, s.st.unreachable(err)
	}
	return data, nil
}

// maxUpdateTries bounds the retries of an update that raced another
// replica's; between them it waits a random while, up to twice as long
// each time (at most maxUpdateWait), so that racing writers spread out.
const (
	maxUpdateTries = 32
	maxUpdateWait  = 50 * time.Millisecond
)

// Update sets what is kept for user's session id to what merge makes of
// what is kept now (nil for nothing), atomically against other replicas'
// updates: merge may run again, with what they wrote. A merge error ends
// the update with that error.
func (s *Sessions) Update(ctx context.Context, user, id string, merge func(old []byte) ([]byte, error)) error {
	key := s.key(user, id)
	wait := time.Millisecond
	for range maxUpdateTries {
		err := s.st.rdb.Watch(ctx, func(tx *redis.Tx) error {
			old, err := tx.Get(ctx, key).Bytes()
			if errors.Is(err, redis.Nil) {
				old, err = nil, nil
			}
			if err != nil {
				return err
			}
			data, err := merge(old)
			if err != nil {
				return mergeError{err}
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, key, data, s.st.ttl)
				return nil
			})
			return err
		}, key)
		var me mergeError
		switch {
		case err == nil:
			return nil
		case errors.Is(err, redis.TxFailedErr):
			// Another replica wrote meanwhile: merge again, after a while.
			t := time.NewTimer(rand.N(wait))
			select {
			case <-ctx.Done():
				t.Stop()
				return s.st.unreachable(ctx.Err())
			case <-t.C:
			}
			wait = min(2*wait, maxUpdateWait)
		case errors.As(err, &me):
			return me.err
		default:
			return s.st.unreachable(err)
		}
	}
	return errors.New("updating a session in the team store: too many concurrent updates")
}

// mergeError is a merge's own error, passed through Update.
type mergeError struct{ err error }

func (e mergeError) Error() string { return e.err.Error() }

// Delete forgets user's session id; existed says whether it was kept.
func (s *Sessions) Delete(ctx context.Context, user, id string) (existed bool, _ error) {
	n, err := s.st.rdb.Del(ctx, s.key(user, id)).Result()
	if err != nil {
		return false, s.st.unreachable(err)
	}
	return n > 0, nil
}

// Ping says whether the store answers.
func (s *Sessions) Ping(ctx context.Context) error { return s.st.Ping(ctx) }
