package teamstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgw/mcpgw/gateway/api"
	"github.com/mcpgw/mcpgw/gateway/dispatch"
	"github.com/mcpgw/mcpgw/internal/redistest"
	"github.com/mcpgw/mcpgw/registry"
)

// open opens a store at url, as one replica, closed when the test ends.
func open(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(url, &Options{Prefix: "test:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// raw is a plain client of the server, to look at what the store wrote.
func raw(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { c.Close() })
	return c
}

var limits = registry.Limits{ApprovalsPerSession: 2, ApprovalsPerDaemon: 3}

func approval(id, user, session string, deadline time.Time) api.PendingApproval {
	return api.PendingApproval{
		ID: id, Session: session, User: user, Server: "go", Tool: "add", Args: "a: 2", Rule: "approveTools = add",
		Since: time.Now().Round(time.Millisecond), Deadline: deadline, InSession: deadline.IsZero(),
	}
}

// TestPendingAcrossReplicas: a call waiting on replica A is listed on B,
// with its arguments whole, to its user only; decided on B, the decision
// reaches A's call; bob neither sees nor decides alice's.
func TestPendingAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t)
	a, b := open(t, srv.URL), open(t, srv.URL)
	deadline := time.Now().Add(2 * time.Minute).Round(time.Millisecond)
	pa := approval("ap1", "alice", "s1", deadline)
	decided, why := a.Pending().Add(pa, json.RawMessage(`{"a":2,"token":"hunter2"}`), limits)
	if why != "" {
		t.Fatalf("Add refused: %s", why)
	}
	list := b.Pending().List("alice")
	if len(list) != 1 {
		t.Fatalf("B lists %d approvals of alice's, want 1: %+v", len(list), list)
	}
	want := pa
	want.Full = dispatch.ArgsWhole(json.RawMessage(`{"a":2,"token":"hunter2"}`))
	if got := list[0]; !got.Since.Equal(want.Since) || !got.Deadline.Equal(want.Deadline) {
		t.Errorf("listed times %v %v, want %v %v", got.Since, got.Deadline, want.Since, want.Deadline)
	} else {
		got.Since, got.Deadline = want.Since, want.Deadline
		if got != want {
			t.Errorf("B lists %+v, want %+v", got, want)
		}
	}
	if strings.Contains(list[0].Full, "hunter2") || !strings.Contains(list[0].Full, "a: 2") {
		t.Errorf("Full %q: want every value, the secret masked", list[0].Full)
	}
	if l := b.Pending().List("bob"); len(l) != 0 {
		t.Errorf("bob lists %+v", l)
	}
	if _, err := b.Pending().Decide("bob", "ap1", dispatch.Decision{Grant: "once", By: "cli"}); !errors.Is(err, dispatch.ErrNoApproval) {
		t.Errorf("bob's decision: %v, want ErrNoApproval", err)
	}
	got, err := b.Pending().Decide("alice", "ap1", dispatch.Decision{Grant: "tool", By: "cli"})
	if err != nil || got.ID != "ap1" || got.Tool != "add" {
		t.Fatalf("alice's decision on B: %+v, %v", got, err)
	}
	if d := <-decided; d != (dispatch.Decision{Grant: "tool", By: "cli"}) {
		t.Errorf("A's call got %+v", d)
	}
	if _, err := a.Pending().Decide("alice", "ap1", dispatch.Decision{Grant: "deny", By: "page"}); !errors.Is(err, dispatch.ErrNoApproval) {
		t.Errorf("a second decision: %v, want ErrNoApproval", err)
	}
	if l := a.Pending().List("alice"); len(l) != 0 {
		t.Errorf("after the decision, A lists %+v", l)
	}
	a.Pending().Remove("ap1") // the call's own cleanup, after its answer
}

// TestPendingLimitsAndRemove: the limits count across replicas; a removed
// approval is listed nowhere and cannot be decided; WaitOutside's
// deadline is what is listed.
func TestPendingLimitsAndRemove(t *testing.T) {
	srv := redistest.Start(t)
	a, b := open(t, srv.URL), open(t, srv.URL)
	add := func(s *Store, id, session string) string {
		_, why := s.Pending().Add(approval(id, "alice", session, time.Time{}), json.RawMessage(`{}`), limits)
		return why
	}
	for _, tc := range []struct {
		s           *Store
		id, session string
		want        string
	}{
		{a, "1", "s1", ""},
		{b, "2", "s1", ""},
		{a, "3", "s1", "too many calls of this session wait for approval (limit 2, settings.approvalsPerSession)"},
		{b, "4", "s2", ""},
		{a, "5", "s3", "too many calls wait for approval in mcpgw (limit 3, settings.approvalsPerDaemon, counted across the replicas sharing team.store)"},
	} {
		if got := add(tc.s, tc.id, tc.session); got != tc.want {
			t.Errorf("Add %s: %q, want %q", tc.id, got, tc.want)
		}
	}
	ids := func() []string {
		var out []string
		for _, p := range b.Pending().List("alice") {
			out = append(out, p.ID)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []string{"1", "2", "4"}) {
		t.Errorf("listed %v, want [1 2 4] oldest first", got)
	}
	a.Pending().Remove("1")
	if got := ids(); !slices.Equal(got, []string{"2", "4"}) {
		t.Errorf("after Remove, listed %v", got)
	}
	if _, err := b.Pending().Decide("alice", "1", dispatch.Decision{Grant: "once"}); !errors.Is(err, dispatch.ErrNoApproval) {
		t.Errorf("deciding a removed approval: %v", err)
	}
	if why := add(a, "6", "s1"); why != "" {
		t.Errorf("after Remove, s1 has room again: %q", why)
	}
	deadline := time.Now().Add(90 * time.Second).Round(time.Millisecond)
	b.Pending().WaitOutside("6", deadline)
	for _, p := range a.Pending().List("alice") {
		if p.ID == "6" && (p.InSession || !p.Deadline.Equal(deadline)) {
			t.Errorf("after WaitOutside: InSession %v, deadline %v, want false, %v", p.InSession, p.Deadline, deadline)
		}
	}
	r := raw(t, srv)
	if ttl := r.PTTL(context.Background(), "test:approval:6").Val(); ttl < 90*time.Second || ttl > 90*time.Second+afterDeadline {
		t.Errorf("approval 6 expires in %v, want its deadline and a minute", ttl)
	}
	if ttl := r.PTTL(context.Background(), "test:approval:2").Val(); ttl <= InSessionTTL-time.Minute || ttl > InSessionTTL {
		t.Errorf("approval 2, asked in its session, expires in %v, want %v", ttl, InSessionTTL)
	}
}

// TestPendingOfDeadReplica: a replica that dies with a call waiting
// leaves its approval listed on the others, where it can be decided.
func TestPendingOfDeadReplica(t *testing.T) {
	srv := redistest.Start(t)
	a, b := open(t, srv.URL), open(t, srv.URL)
	if _, why := a.Pending().Add(approval("d1", "alice", "s1", time.Now().Add(time.Minute)), json.RawMessage(`{}`), limits); why != "" {
		t.Fatal(why)
	}
	a.Close() // killed: nothing removed
	if l := b.Pending().List("alice"); len(l) != 1 || l[0].ID != "d1" {
		t.Fatalf("B lists %+v, want d1", l)
	}
	if _, err := b.Pending().Decide("alice", "d1", dispatch.Decision{Grant: "deny", By: "cli"}); err != nil {
		t.Errorf("deciding d1 on B: %v", err)
	}
	if l := b.Pending().List("alice"); len(l) != 0 {
		t.Errorf("after the decision B lists %+v", l)
	}
}

// TestPendingCatchUp: a decision published while a replica was not
// subscribed is found under its key when it subscribes again.
func TestPendingCatchUp(t *testing.T) {
	srv := redistest.Start(t)
	a := open(t, srv.URL)
	decided, why := a.Pending().Add(approval("c1", "alice", "s1", time.Now().Add(time.Minute)), json.RawMessage(`{}`), limits)
	if why != "" {
		t.Fatal(why)
	}
	msg, _ := json.Marshal(decisionMsg{ID: "c1", Decision: dispatch.Decision{Grant: "server", By: "page"}})
	if err := raw(t, srv).Set(context.Background(), "test:decision:c1", msg, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	a.Pending().catchUp(context.Background())
	if d := <-decided; d != (dispatch.Decision{Grant: "server", By: "page"}) {
		t.Errorf("caught up %+v", d)
	}
}

// TestSessions: a session is its user's; updates from replicas racing
// each other all land; it expires a TTL after its last request; deleted,
// it is gone.
func TestSessions(t *testing.T) {
	srv := redistest.Start(t)
	a, b := open(t, srv.URL), open(t, srv.URL)
	ctx := context.Background()
	if got, err := a.Sessions().Get(ctx, "alice", "id1"); got != nil || err != nil {
		t.Fatalf("Get of nothing: %q, %v", got, err)
	}
	// Each update adds its word to a JSON list, from one replica or the
	// other, at once.
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			errs <- s.Sessions().Update(ctx, "alice", "id1", func(old []byte) ([]byte, error) {
				var words []string
				if old != nil {
					if err := json.Unmarshal(old, &words); err != nil {
						return nil, err
					}
				}
				return json.Marshal(append(words, fmt.Sprint(i)))
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
	}
	data, err := b.Sessions().Get(ctx, "alice", "id1")
	var words []string
	if err != nil || json.Unmarshal(data, &words) != nil {
		t.Fatalf("Get: %q, %v", data, err)
	}
	slices.Sort(words)
	want := []string{"0", "1", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "2", "3", "4", "5", "6", "7", "8", "9"}
	if !slices.Equal(words, want) {
		t.Errorf("after 20 racing updates: %v", words)
	}
	if got, err := b.Sessions().Get(ctx, "bob", "id1"); got != nil || err != nil {
		t.Errorf("bob's Get of alice's session: %q, %v", got, err)
	}
	stop := errors.New("no")
	if err := a.Sessions().Update(ctx, "alice", "id1", func([]byte) ([]byte, error) { return nil, stop }); err != stop {
		t.Errorf("a merge's error: %v", err)
	}
	r := raw(t, srv)
	if ttl := r.PTTL(ctx, "test:session:alice:id1").Val(); ttl <= DefaultSessionTTL-time.Minute || ttl > DefaultSessionTTL {
		t.Errorf("the session expires in %v, want %v", ttl, DefaultSessionTTL)
	}
	if existed, err := b.Sessions().Delete(ctx, "bob", "id1"); existed || err != nil {
		t.Errorf("bob's Delete: %v, %v", existed, err)
	}
	if existed, err := b.Sessions().Delete(ctx, "alice", "id1"); !existed || err != nil {
		t.Errorf("alice's Delete: %v, %v", existed, err)
	}
	if got, err := a.Sessions().Get(ctx, "alice", "id1"); got != nil || err != nil {
		t.Errorf("Get after Delete: %q, %v", got, err)
	}
}

// TestKeysPrefixedWithTTL: everything the store writes is under its
// prefix and expires.
func TestKeysPrefixedWithTTL(t *testing.T) {
	srv := redistest.Start(t)
	a := open(t, srv.URL)
	ctx := context.Background()
	_, _ = a.Pending().Add(approval("k1", "alice", "s1", time.Now().Add(time.Minute)), json.RawMessage(`{}`), limits)
	_, _ = a.Pending().Add(approval("k2", "bob:x", "s2", time.Time{}), json.RawMessage(`{}`), limits)
	_, _ = a.Pending().Decide("bob:x", "k2", dispatch.Decision{Grant: "once", By: "cli"})
	_ = a.Sessions().Update(ctx, "user with spaces:and colons", "id", func([]byte) ([]byte, error) { return []byte("{}"), nil })
	r := raw(t, srv)
	keys := r.Keys(ctx, "*").Val()
	slices.Sort(keys)
	want := []string{
		"test:approval:k1", "test:approvals", "test:approvals:session:s1", "test:approvals:user:alice",
		"test:decision:k2", "test:session:user+with+spaces%3Aand+colons:id",
	}
	if !slices.Equal(keys, want) {
		t.Errorf("keys:\n%s\nwant:\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
	for _, k := range keys {
		if ttl := r.PTTL(ctx, k).Val(); ttl <= 0 {
			t.Errorf("%s has no time to live (%v)", k, ttl)
		}
	}
}

// TestStoreDown: while the store is down, a call that needs approval is
// refused saying why, the lists and decisions fail saying why, and so do
// sessions; once it is back, all works again.
func TestStoreDown(t *testing.T) {
	srv := redistest.Start(t)
	a := open(t, srv.URL)
	ctx := context.Background()
	srv.Stop()
	_, why := a.Pending().Add(approval("x1", "alice", "s1", time.Now().Add(time.Minute)), json.RawMessage(`{}`), limits)
	wantDown := "the team store (redis://" + srv.Addr + "/0) cannot be reached: "
	if !strings.HasPrefix(why, "it cannot be listed for approval: "+wantDown) {
		t.Errorf("Add while down: %q", why)
	}
	if _, err := a.Pending().ListErr(ctx, "alice"); err == nil || !strings.HasPrefix(err.Error(), wantDown) {
		t.Errorf("ListErr while down: %v", err)
	}
	if _, err := a.Pending().Decide("alice", "x1", dispatch.Decision{Grant: "once"}); err == nil || !strings.HasPrefix(err.Error(), wantDown) {
		t.Errorf("Decide while down: %v", err)
	}
	if _, err := a.Sessions().Get(ctx, "alice", "id"); err == nil || !strings.HasPrefix(err.Error(), wantDown) {
		t.Errorf("Get while down: %v", err)
	}
	if err := a.Ping(ctx); err == nil || !strings.HasPrefix(err.Error(), wantDown) {
		t.Errorf("Ping while down: %v", err)
	}
	redistest.StartAt(t, srv.Addr)
	if err := a.Ping(ctx); err != nil {
		t.Fatalf("Ping once back: %v", err)
	}
	decided, why := a.Pending().Add(approval("x2", "alice", "s1", time.Now().Add(time.Minute)), json.RawMessage(`{}`), limits)
	if why != "" {
		t.Fatalf("Add once back: %s", why)
	}
	// The decision comes by the subscription made again, or by the
	// local delivery: either way it arrives.
	if _, err := a.Pending().Decide("alice", "x2", dispatch.Decision{Grant: "once", By: "cli"}); err != nil {
		t.Fatal(err)
	}
	if d := <-decided; d.Grant != "once" {
		t.Errorf("decision once back: %+v", d)
	}
}
