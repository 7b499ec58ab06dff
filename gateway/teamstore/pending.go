package teamstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/registry"
)

// Pending is a dispatch.Pending in the store: a call waiting on one
// replica is listed on every replica and decided on any. The decision
// reaches the replica whose call waits by pub/sub (and is kept a while
// under the approval's key, for a replica that was resubscribing when it
// was published).
//
// In the store: PREFIX approval:ID holds the approval as listed; the
// sorted sets PREFIX approvals (all), approvals:user:USER and
// approvals:session:SESSION hold the IDs, scored by when each expires,
// for the lists and the limits; PREFIX decision:ID is a decision made.
// An approval expires a minute after its deadline, or InSessionTTL after
// it was listed while its session's client is asked (which has no
// deadline): a replica that dies with calls waiting leaves them listed
// until then, or until someone decides them (their calls died with the
// replica).
type Pending struct {
	st *Store

	// mu guards waiting: the decision channels of the calls waiting on
	// this replica, by approval ID.
	mu      sync.Mutex
	waiting map[string]chan dispatch.Decision
}

var _ dispatch.Pending = (*Pending)(nil)

// InSessionTTL is how long an approval is kept while its session's client
// is asked, which has no deadline.
const InSessionTTL = time.Hour

// afterDeadline is how long an approval is kept after its deadline: its
// call has given up by then, and removed it, unless its replica died.
const afterDeadline = time.Minute

// decisionTTL is how long a decision is kept for a replica that missed
// its message.
const decisionTTL = 10 * time.Minute

// opTimeout bounds one operation on the store made without a caller's
// context (dispatch.Pending has none).
const opTimeout = 5 * time.Second

func newPending(st *Store) *Pending {
	return &Pending{st: st, waiting: make(map[string]chan dispatch.Decision)}
}

// decisionMsg is a decision as published and kept.
type decisionMsg struct {
	ID string `json:"id"`
	dispatch.Decision
}

func (p *Pending) recKey(id string) string      { return p.st.key("approval", esc(id)) }
func (p *Pending) allKey() string               { return p.st.key("approvals") }
func (p *Pending) userKey(user string) string   { return p.st.key("approvals", "user", esc(user)) }
func (p *Pending) sessionKey(sid string) string { return p.st.key("approvals", "session", esc(sid)) }
func (p *Pending) decisionKey(id string) string { return p.st.key("decision", esc(id)) }
func (p *Pending) channel() string              { return p.st.key("decisions") }

// ttl is how long pa is kept from now.
func ttl(pa api.PendingApproval, now time.Time) time.Duration {
	d := InSessionTTL
	if !pa.Deadline.IsZero() {
		d = pa.Deadline.Sub(now) + afterDeadline
	}
	return max(d, time.Second)
}

// addScript lists an approval unless a limit refuses it: 1 for its
// session's, 2 for the store's. KEYS: the approval, all, its user's, its
// session's. ARGV: now (ms), expiry (ms), TTL (ms), the approval, the
// session's limit, the store's limit, its ID.
var addScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[5]) then return 1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return 2 end
redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[3])
for i = 2, 4 do
  redis.call('ZADD', KEYS[i], ARGV[2], ARGV[7])
  if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
end
return 0
`)

// takeScript takes an approval off the lists and returns it, or false
// when it is not listed; with a decision (ARGV[2]), it keeps and
// publishes it. KEYS: the approval, all, its user's, its session's, its
// decision. ARGV: its ID, the decision or "", the channel, the
// decision's TTL (ms).
var takeScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
for i = 2, 4 do redis.call('ZREM', KEYS[i], ARGV[1]) end
if not cur then return false end
redis.call('DEL', KEYS[1])
if ARGV[2] ~= '' then
  redis.call('SET', KEYS[5], ARGV[2], 'PX', ARGV[4])
  redis.call('PUBLISH', ARGV[3], ARGV[2])
end
return cur
`)

// Add implements dispatch.Pending. A store that cannot be reached
// refuses the call, saying so.
func (p *Pending) Add(pa api.PendingApproval, args json.RawMessage, l registry.Limits) (<-chan dispatch.Decision, string) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	pa.Full = dispatch.ArgsWhole(args)
	data, err := json.Marshal(pa)
	if err != nil {
		return nil, "its approval cannot be kept: " + err.Error()
	}
	ch := make(chan dispatch.Decision, 1)
	p.mu.Lock()
	p.waiting[pa.ID] = ch
	p.mu.Unlock()
	now := time.Now()
	d := ttl(pa, now)
	res, err := addScript.Run(ctx, p.st.rdb,
		[]string{p.recKey(pa.ID), p.allKey(), p.userKey(pa.User), p.sessionKey(pa.Session)},
		now.UnixMilli(), now.Add(d).UnixMilli(), d.Milliseconds(), data, l.ApprovalsPerSession, l.ApprovalsPerDaemon, pa.ID).Int()
	var why string
	switch {
	case err != nil:
		why = "it cannot be listed for approval: " + p.st.unreachable(err).Error()
	case res == 1:
		why = fmt.Sprintf("too many calls of this session wait for approval (limit %d, settings.approvalsPerSession)", l.ApprovalsPerSession)
	case res == 2:
		why = fmt.Sprintf("too many calls wait for approval in mcpgw (limit %d, settings.approvalsPerDaemon, counted across the replicas sharing team.store)", l.ApprovalsPerDaemon)
	}
	if why != "" {
		p.forget(pa.ID)
		return nil, why
	}
	return ch, ""
}

// forget drops the decision channel of id.
func (p *Pending) forget(id string) {
	p.mu.Lock()
	delete(p.waiting, id)
	p.mu.Unlock()
}

// deliver hands a decision to the call of its ID, if it waits here; the
// first decision wins.
func (p *Pending) deliver(m decisionMsg) {
	p.mu.Lock()
	ch := p.waiting[m.ID]
	p.mu.Unlock()
	if ch != nil {
		select {
		case ch <- m.Decision:
		default:
		}
	}
}

// take takes id off the lists; with d, it is decided. It returns the
// approval as listed, nil when none is.
func (p *Pending) take(ctx context.Context, id string, d *dispatch.Decision) (*api.PendingApproval, error) {
	data, err := p.st.rdb.Get(ctx, p.recKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, p.st.unreachable(err)
	}
	var pa api.PendingApproval
	if err := json.Unmarshal(data, &pa); err != nil {
		return nil, fmt.Errorf("reading approval %s from the team store: %w", id, err)
	}
	var msg []byte
	if d != nil {
		msg, _ = json.Marshal(decisionMsg{ID: id, Decision: *d})
	}
	_, err = takeScript.Run(ctx, p.st.rdb,
		[]string{p.recKey(id), p.allKey(), p.userKey(pa.User), p.sessionKey(pa.Session), p.decisionKey(id)},
		id, msg, p.channel(), decisionTTL.Milliseconds()).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil // taken meanwhile
	}
	if err != nil {
		return nil, p.st.unreachable(err)
	}
	return &pa, nil
}

// Remove implements dispatch.Pending.
func (p *Pending) Remove(id string) {
	p.forget(id)
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	if _, err := p.take(ctx, id, nil); err != nil {
		p.st.log.Warn("removing an approval from the team store; it stays listed until it expires", "id", id, "err", err)
	}
}

// WaitOutside implements dispatch.Pending.
func (p *Pending) WaitOutside(id string, deadline time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	err := func() error {
		data, err := p.st.rdb.Get(ctx, p.recKey(id)).Bytes()
		if errors.Is(err, redis.Nil) {
			return nil // decided meanwhile
		}
		if err != nil {
			return err
		}
		var pa api.PendingApproval
		if err := json.Unmarshal(data, &pa); err != nil {
			return err
		}
		pa.InSession, pa.Deadline = false, deadline
		if data, err = json.Marshal(pa); err != nil {
			return err
		}
		now := time.Now()
		d := ttl(pa, now)
		_, err = p.st.rdb.TxPipelined(ctx, func(tx redis.Pipeliner) error {
			tx.SetXX(ctx, p.recKey(id), data, d)
			for _, k := range []string{p.allKey(), p.userKey(pa.User), p.sessionKey(pa.Session)} {
				tx.ZAddXX(ctx, k, redis.Z{Score: float64(now.Add(d).UnixMilli()), Member: id})
			}
			return nil
		})
		return err
	}()
	if err != nil {
		p.st.log.Warn("updating an approval's deadline in the team store", "id", id, "err", err)
	}
}

// List implements dispatch.Pending. A store that cannot be reached lists
// nothing: the control API checks it first (ListErr) and says so.
func (p *Pending) List(user string) []api.PendingApproval {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	out, err := p.ListErr(ctx, user)
	if err != nil {
		p.st.log.Warn("listing approvals", "err", err)
	}
	return out
}

// ListErr is List, with the store's error.
func (p *Pending) ListErr(ctx context.Context, user string) ([]api.PendingApproval, error) {
	key := p.userKey(user)
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	if err := p.st.rdb.ZRemRangeByScore(ctx, key, "-inf", now).Err(); err != nil {
		return nil, p.st.unreachable(err)
	}
	ids, err := p.st.rdb.ZRange(ctx, key, 0, -1).Result()
	if err != nil {
		return nil, p.st.unreachable(err)
	}
	out := []api.PendingApproval{}
	if len(ids) == 0 {
		return out, nil
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = p.recKey(id)
	}
	vals, err := p.st.rdb.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, p.st.unreachable(err)
	}
	for _, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue // expired
		}
		var pa api.PendingApproval
		if json.Unmarshal([]byte(s), &pa) == nil && pa.User == user {
			out = append(out, pa)
		}
	}
	slices.SortStableFunc(out, func(a, b api.PendingApproval) int { return a.Since.Compare(b.Since) })
	return out, nil
}

// Decide implements dispatch.Pending.
func (p *Pending) Decide(user, id string, d dispatch.Decision) (api.PendingApproval, error) {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	// Look before taking: another user's approval stays listed.
	data, err := p.st.rdb.Get(ctx, p.recKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return api.PendingApproval{}, dispatch.ErrNoApproval
	}
	if err != nil {
		return api.PendingApproval{}, p.st.unreachable(err)
	}
	var pa api.PendingApproval
	if json.Unmarshal(data, &pa) != nil || pa.User != user {
		return api.PendingApproval{}, dispatch.ErrNoApproval
	}
	got, err := p.take(ctx, id, &d)
	if err != nil {
		return api.PendingApproval{}, err
	}
	if got == nil {
		return api.PendingApproval{}, dispatch.ErrNoApproval
	}
	p.deliver(decisionMsg{ID: id, Decision: d}) // waiting here: no need to wait for the message
	return *got, nil
}

// subscribe delivers the decisions published by every replica to the
// calls waiting here, until ctx ends. After each (re)subscription it
// reads the decisions kept for those calls, in case one was published
// while it was not subscribed.
func (p *Pending) subscribe(ctx context.Context) {
	ps := p.st.rdb.Subscribe(ctx, p.channel())
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer stop()
	defer ps.Close()
	for ctx.Err() == nil {
		m, err := ps.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// Down: go-redis resubscribes on the next Receive; wait a
			// little so that a store that is down is not hammered.
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		switch m := m.(type) {
		case *redis.Message:
			var d decisionMsg
			if json.Unmarshal([]byte(m.Payload), &d) == nil {
				p.deliver(d)
			}
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				p.catchUp(ctx)
			}
		}
	}
}

// catchUp delivers the decisions kept for the calls waiting here.
func (p *Pending) catchUp(ctx context.Context) {
	p.mu.Lock()
	ids := make([]string, 0, len(p.waiting))
	for id := range p.waiting {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	for _, id := range ids {
		data, err := p.st.rdb.Get(ctx, p.decisionKey(id)).Bytes()
		var d decisionMsg
		if err == nil && json.Unmarshal(data, &d) == nil {
			p.deliver(d)
		}
	}
}
