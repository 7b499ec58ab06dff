package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"testing"

	"github.com/mcpgw/mcpgw/gateway/shim/wire"
)

// TestShimHandshakeIdentity: the secret a shim presents reaches the hub
// with its resume, and the welcome tells the shim the ID and secret its
// session is resumed with, as the hub decided them.
func TestShimHandshakeIdentity(t *testing.T) {
	hub := &fakeHub{ss: &fakeSession{id: "d41d8cd98f00b204", secret: "the-daemons-secret"}}
	tr := New(hub, Options{Version: "v"})
	daemon, shim := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- tr.ServeShim(context.Background(), daemon) }()

	hello, _ := json.Marshal(wire.Hello{Protocol: wire.HandshakeProtocol, Session: "0123", Resume: true, Secret: "the-shims-secret"})
	if _, err := shim.Write(append(hello, '\n')); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(shim).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var wel wire.Welcome
	if err := json.Unmarshal(line, &wel); err != nil || !wel.OK || wel.Session != "d41d8cd98f00b204" || wel.Secret != "the-daemons-secret" {
		t.Errorf("welcome %s, want the session's ID and secret", line)
	}
	shim.Close()
	<-done
	if len(hub.served) != 1 || hub.served[0].ID != "0123" || !hub.served[0].Resume || hub.served[0].Secret != "the-shims-secret" {
		t.Errorf("the hub was asked for %+v", hub.served)
	}
}
