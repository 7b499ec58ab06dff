//lint:file-ignore SA1019 sampling and roots are deprecated as of protocol 2026-07-28 but still spoken by the clients and servers mcpgw sits between; a gateway forwards them.

package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Multi round trips (protocol 2026-07-28): a server that needs the
// client's input answers a call with input requests instead of a result,
// and the client calls again with the answers. The pool does this itself
// rather than through the SDK's client middleware, so that every request,
// roots included, is answered by the caller's peer.

// maxRoundTrips bounds the rounds of one call; maxLoadShedding the rounds
// a server answers with no input request at all (it is busy).
const (
	maxRoundTrips   = 10
	maxLoadShedding = 3
)

// roundTrips runs call until its result needs no more input, answering the
// input requests through the caller's peer between rounds.
func roundTrips[R any](ctx context.Context, u *Upstream, call func(mcp.InputResponseMap, string) (R, error), pending func(R) (mcp.InputRequestMap, string, bool)) (R, error) {
	var (
		answers mcp.InputResponseMap
		state   string
		shed    int
	)
	for round := 1; ; round++ {
		res, err := call(answers, state)
		if err != nil {
			return res, err
		}
		reqs, st, needs := pending(res)
		if !needs {
			return res, nil
		}
		if len(reqs) == 0 {
			if shed++; shed >= maxLoadShedding {
				return res, fmt.Errorf("the server asked to retry %d times without saying for what", shed)
			}
		}
		if round >= maxRoundTrips {
			return res, fmt.Errorf("the server still needed input after %d rounds", round)
		}
		if answers, err = u.answerInputs(ctx, reqs); err != nil {
			return res, err
		}
		state = st
	}
}

// answerInputs answers input requests, concurrently, through the peer of
// ctx.
func (u *Upstream) answerInputs(ctx context.Context, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	var (
		mu   sync.Mutex
		out  = make(mcp.InputResponseMap, len(reqs))
		errs []error
		wg   sync.WaitGroup
	)
	for id, in := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := u.answerInput(ctx, in)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("input request %q: %w", id, err))
				return
			}
			out[id] = r
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

func (u *Upstream) answerInput(ctx context.Context, in mcp.InputRequest) (mcp.InputResponse, error) {
	switch p := in.(type) {
	case *mcp.CreateMessageParams:
		return u.sample(ctx, withTools(p))
	case *mcp.CreateMessageWithToolsParams:
		return u.sample(ctx, p)
	case *mcp.ElicitParams:
		peer, err := u.peerFor(ctx, p.Meta, "elicitation/create")
		if err != nil {
			return nil, err
		}
		return peer.Elicit(ctx, p)
	case *mcp.ListRootsParams:
		return u.listRoots(ctx, p.Meta)
	}
	return nil, fmt.Errorf("mcpgw does not know input requests of type %T", in)
}

func (u *Upstream) sample(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	peer, err := u.peerFor(ctx, p.Meta, "sampling/createMessage")
	if err != nil {
		return nil, err
	}
	return peer.CreateMessage(ctx, p)
}

// withTools is p in the form that allows several content blocks.
func withTools(p *mcp.CreateMessageParams) *mcp.CreateMessageWithToolsParams {
	msgs := make([]*mcp.SamplingMessageV2, 0, len(p.Messages))
	for _, m := range p.Messages {
		if m != nil {
			msgs = append(msgs, &mcp.SamplingMessageV2{Role: m.Role, Content: []mcp.Content{m.Content}})
		}
	}
	return &mcp.CreateMessageWithToolsParams{
		Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Messages: msgs,
		Metadata: p.Metadata, ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences,
		SystemPrompt: p.SystemPrompt, Temperature: p.Temperature,
	}
}
