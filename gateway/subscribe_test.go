package gateway

import (
	"slices"
	"testing"

	"github.com/mcpgw/mcpgw/registry"
)

// Two sessions share an upstream; one subscribes to test://hello, the
// other to test://readme. An update of test://hello reaches the first,
// under its URI, and not the other; after unsubscribing, no update of
// test://hello reaches either, while both hear of test://data.json, to
// which both subscribed then. Every wait ends on an event: the subscription's
// acknowledgement (which the upstream's has come before), an update that
// was sent after the one that must not arrive, and, for a listen stream,
// whose end has no answer, the upstream releasing the subscription.
func TestResourceUpdateReachesOnlySubscriber(t *testing.T) {
	t.Parallel()
	for _, protocol := range subscribeProtocols {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			gw, _ := newTestGateway(t, registry.Settings{Mode: ModeDirect}, "alpha")
			connectNow(t, gw, "alpha")
			subscriber := connectUpdates(t, gw, protocol, SessionOptions{})
			other := connectUpdates(t, gw, protocol, SessionOptions{})
			subscriber.subscribe(t, "test://hello")
			other.subscribe(t, "test://readme")

			other.touch(t, "test://hello")
			if got := subscriber.waitFor(t, "test://hello"); !slices.Equal(got, []string{"test://hello"}) {
				t.Errorf("the subscriber heard %v, want test://hello once", got)
			}
			// The other session's first update is of test://readme, sent
			// after test://hello's: an update of test://hello to it would
			// have come first.
			other.touch(t, "test://readme")
			if got := other.waitFor(t, "test://readme"); !slices.Equal(got, []string{"test://readme"}) {
				t.Errorf("the session subscribed to test://readme alone heard %v", got)
			}

			subscriber.unsubscribe(t, "test://hello")
			if protocol >= sessionless {
				// The stream's end reaches mcpgw after the client has
				// ended it; the shared upstream then holds test://readme
				// alone.
				subscriber.waitHeld(t, "alpha", "test://readme")
			}
			subscriber.subscribe(t, "test://data.json")
			other.subscribe(t, "test://data.json")
			subscriber.touch(t, "test://hello")
			subscriber.touch(t, "test://data.json")
			if got := subscriber.waitFor(t, "test://data.json"); !slices.Equal(got, []string{"test://hello", "test://data.json"}) {
				t.Errorf("after unsubscribing from test://hello the subscriber heard %v, want test://hello then test://data.json", got)
			}
			if got := other.waitFor(t, "test://data.json"); !slices.Equal(got, []string{"test://readme", "test://data.json"}) {
				t.Errorf("the session never subscribed to test://hello heard %v, want test://readme then test://data.json", got)
			}
		})
	}
}
