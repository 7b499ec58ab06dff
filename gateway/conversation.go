package gateway

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/gateway/identity"
	"github.com/mcpgw/mcpgw/gateway/transport"
)

// Conversations: protocol 2026-07-28 has no session. Each request names
// its protocol version, client and capabilities in its _meta, and over
// Streamable HTTP it is a POST of its own (SEP-2575, SEP-2567). Over the
// shim a connection is still one client, and stays one session (see
// ServeSession); over HTTP a request is answered by the conversation its
// headers describe: the session options a 2025 client gives when it opens
// a session (mode, working directory, direct tools, client prefix), read
// from every request instead.
//
// A conversation is that description and nothing a client could call its
// own: requests that describe themselves alike share one, whoever sends
// them. So it keeps only what follows from the description — the tools it
// lists, the project overlay of its working directory and that project's
// servers in the pool — and nothing a session keeps for its client alone:
//
//   - toolsearch mode is served as proxy mode: activation changes what a
//     session lists, and no request says which activations are its own
//     (the mcp tool reaches the same tools: search, describe, call);
//   - an approval granted "for the session" holds for that call only;
//   - a result too big to show is cut, not saved for mcp({read}), which a
//     later request could not claim as its own;
//   - nothing is asked of the client mid-call (sampling, elicitation,
//     roots): the protocol has no server-to-client request, and an
//     approval waits for the page or mcpgw approve.
//
// A conversation ends when no request has used it for conversationIdle
// (and none is in flight), or with the daemon.

// conversationIdle is how long a conversation outlives its last request.
var conversationIdle = 10 * time.Minute

// maxConversations bounds the conversations kept at once; the one idle
// longest makes room for a new one.
const maxConversations = 64

// conversationKey is what identifies a conversation: its request's
// description, the mode as the request gave it.
type conversationKey struct {
	cwd, mode, directTools, clientPrefix string
	user                                 string // in team mode, each user's own
}

// conversations are the daemon's open conversations, by key.
type conversations struct {
	mu    sync.Mutex
	byKey map[conversationKey]*session
}

// Conversation implements transport.Hub: the server of the conversation
// opts describe, opened if it is not (nil once the daemon is closing).
func (s *Hub) Conversation(opts SessionOptions) *mcp.Server {
	if ss := s.conversation(opts); ss != nil {
		return ss.server
	}
	return nil
}

// ConversationSession implements transport.Hub.
func (s *Hub) ConversationSession(opts SessionOptions) (transport.Session, bool) {
	ss := s.conversation(opts)
	return ss, ss != nil
}

// conversation is the session of the conversation opts describe, opened
// if it is not; nil once the daemon is closing.
func (s *Hub) conversation(opts SessionOptions) *session {
	key := conversationKey{opts.Cwd, string(opts.Mode), opts.DirectTools, opts.ClientPrefix, identity.NameOf(opts.User)}
	s.convs.mu.Lock()
	defer s.convs.mu.Unlock()
	if ss, ok := s.convs.byKey[key]; ok && ss.ctx.Err() == nil {
		ss.lastActive.Store(time.Now().UnixNano())
		return ss
	}
	if s.ctx.Err() != nil {
		return nil
	}
	if s.convs.byKey == nil {
		s.convs.byKey = make(map[conversationKey]*session)
	}
	if len(s.convs.byKey) >= maxConversations {
		s.evictConversationLocked()
	}
	opts.ID, opts.Resume, opts.Secret = "", false, ""
	ss := s.newConversation(opts)
	if ss == nil {
		return nil
	}
	s.convs.byKey[key] = ss
	context.AfterFunc(ss.ctx, func() {
		s.convs.mu.Lock()
		if s.convs.byKey[key] == ss {
			delete(s.convs.byKey, key)
		}
		s.convs.mu.Unlock()
		s.unregister(ss)
	})
	ss.expireIdle()
	return ss
}

// newConversation makes and registers the session that serves a
// conversation; nil if the daemon is closing.
func (s *Hub) newConversation(opts SessionOptions) *session {
	ss := s.newSession(opts, nil, true)
	ss.lastActive.Store(time.Now().UnixNano())
	if !s.join(ss, "") {
		ss.cancel()
		return nil
	}
	return ss
}

// evictConversationLocked ends the conversation idle longest that has no
// request in flight; with every one busy, none (the new one is kept all
// the same: the bound is on idle ones). s.convs.mu is held.
func (s *Hub) evictConversationLocked() {
	var oldest *session
	for _, ss := range s.convs.byKey {
		if ss.inFlight.Load() > 0 {
			continue
		}
		if oldest == nil || ss.lastActive.Load() < oldest.lastActive.Load() {
			oldest = ss
		}
	}
	if oldest != nil {
		oldest.cancel()
	}
}

// expireIdle ends the conversation once conversationIdle has passed since
// its last request with none in flight; until then it looks again. One
// timer, stopped when the conversation ends.
func (ss *session) expireIdle() {
	e := &idleExpiry{ss: ss}
	e.t = time.AfterFunc(time.Duration(math.MaxInt64), e.check)
	e.t.Reset(conversationIdle)
	context.AfterFunc(ss.ctx, func() { e.t.Stop() })
}

// idleExpiry is a conversation's idle timer.
type idleExpiry struct {
	ss *session
	t  *time.Timer
}

func (e *idleExpiry) check() {
	wait := time.Until(time.Unix(0, e.ss.lastActive.Load()).Add(conversationIdle))
	switch {
	case wait > 0:
		e.t.Reset(wait)
	case e.ss.inFlight.Load() > 0:
		e.t.Reset(conversationIdle)
	default:
		e.ss.cancel()
	}
}
