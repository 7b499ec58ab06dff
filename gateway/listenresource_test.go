package gateway

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/registry"
)

// waitBound bounds a wait only a broken gateway makes long.
const waitBound = 30 * time.Second

// listener is a 2026-07-28 client over HTTP that hears resource updates on
// its subscriptions/listen streams.
type listener struct {
	cs      *mcp.ClientSession
	updates chan *mcp.ResourceUpdatedNotificationParams
	acks    chan *mcp.SubscriptionsAcknowledgedParams
}

func listen(t *testing.T, url string) *listener {
	t.Helper()
	l := &listener{updates: make(chan *mcp.ResourceUpdatedNotificationParams, 64), acks: make(chan *mcp.SubscriptionsAcknowledgedParams, 4)}
	c := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { l.updates <- req.Params },
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
				l.acks <- p
			}
			return next(ctx, method, req)
		}
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: sessionless})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	l.cs = cs
	return l
}

// subscribe listens for updates of uri, and returns once mcpgw has
// acknowledged the listen stream.
func (l *listener) subscribe(t *testing.T, uri string) {
	t.Helper()
	if err := l.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	var ack *mcp.SubscriptionsAcknowledgedParams
	select {
	case ack = <-l.acks:
	case <-time.After(waitBound):
		t.Fatalf("subscribing to %s: no acknowledgement in %v", uri, waitBound)
	}
	if len(ack.Notifications.ResourceSubscriptions) != 1 || ack.Notifications.ResourceSubscriptions[0] != uri {
		t.Fatalf("subscribing to %s: acknowledged %+v", uri, ack.Notifications)
	}
}

// A 2026-07-28 client over HTTP hears of an upstream's resource updates on
// the subscriptions/listen stream that asked for them, tagged with that
// stream's subscription ID, under the URI mcpgw offers. Two clients of one
// conversation listen for the same resource: when one stops, the other
// still hears, and no client of another conversation does.
func TestSessionlessResourceUpdates(t *testing.T) {
	t.Parallel()
	gw, _ := newTestGateway(t, registry.Settings{Mode: ModeDirect}, "alpha")
	connectNow(t, gw, "alpha")
	ts := httptest.NewServer(gw.Handler(nil))
	t.Cleanup(ts.Close)
	url := ts.URL + "/mcp?mode=direct"
	first, second := listen(t, url), listen(t, url)
	other := listen(t, ts.URL+"/mcp?mode=proxy")
	first.subscribe(t, "test://hello")
	second.subscribe(t, "test://hello")
	other.subscribe(t, "test://readme")

	touch := func() {
		t.Helper()
		if text, isErr := callText(t, first.cs, "alpha_touch", map[string]any{"uri": "test://hello"}); isErr {
			t.Fatal(text)
		}
	}
	got := func(l *listener, who string) {
		t.Helper()
		var u *mcp.ResourceUpdatedNotificationParams
		select {
		case u = <-l.updates:
		case <-time.After(waitBound):
			t.Fatalf("%s got no update in %v", who, waitBound)
		}
		if u.URI != "test://hello" || u.Meta[mcp.MetaKeySubscriptionID] == nil {
			t.Errorf("%s got %+v, want an update of test://hello tagged with its subscription", who, u)
		}
	}
	touch()
	got(first, "the first listener")
	got(second, "the second listener")

	if err := first.cs.Unsubscribe(context.Background(), &mcp.UnsubscribeParams{URI: "test://hello"}); err != nil {
		t.Fatal(err)
	}
	touch()
	got(second, "the second listener, after the first stopped")
	if n := len(other.updates); n != 0 {
		t.Errorf("a listener for another resource got %d updates", n)
	}
}
