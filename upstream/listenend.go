package upstream

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// From 2026-07-28 on a resource subscription is a subscriptions/listen
// request whose response stream carries the updates, and there is no HTTP
// session whose loss says the server restarted: the go-sdk ends a listen
// stream that ends without a response quietly (its call has nobody
// waiting), and a ping reaches the restarted server as well as it did the
// first. mcpgw watches the listen streams' ends itself: a stream that
// ends while its connection still holds one of its resources, and not
// because mcpgw cancelled it, loses the connection, which the keep-alive
// loop makes again and subscribes as after any other loss.

// listenURIs returns the resources a subscriptions/listen POST subscribes
// to; nil for any other request.
func listenURIs(req *http.Request) []string {
	// Only protocol 2026-07-28 and later have subscriptions/listen, and
	// their requests name their method in a header: no other request's
	// body is read again (this is every call's path).
	if req.Method != http.MethodPost || req.GetBody == nil || req.Header.Get("Mcp-Method") != "subscriptions/listen" {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil || !bytes.Contains(data, []byte("subscriptions/listen")) {
		return nil
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		} `json:"params"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.Method != "subscriptions/listen" {
		return nil
	}
	return msg.Params.Notifications.ResourceSubscriptions
}

// watchListen calls ended when resp's body, a listen stream, ends
// while req's context is live.
func watchListen(req *http.Request, resp *http.Response, ended func()) {
	if resp.StatusCode >= 300 {
		return
	}
	resp.Body = &listenStream{ReadCloser: resp.Body, alive: func() bool { return req.Context().Err() == nil }, ended: ended}
}

type listenStream struct {
	io.ReadCloser
	alive func() bool
	ended func()
	once  sync.Once
}

func (s *listenStream) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	if err != nil && s.alive() {
		s.once.Do(s.ended)
	}
	return n, err
}

// listenEnded is a listen stream's end on the connection whose transport
// is ht, for uris: the connection is dropped if it still holds one of
// them, and made again and subscribed by the keep-alive loop.
func (u *Upstream) listenEnded(ht *headerTransport, uris []string) {
	u.mu.Lock()
	s := u.sess
	u.mu.Unlock()
	if s == nil || s.http != ht {
		return
	}
	for _, uri := range uris {
		if s.holds(uri) {
			u.log.Info("upstream ended a subscription's listen stream; connecting again", "uri", uri)
			u.dropSession(s, "the server ended a subscription's listen stream")
			return
		}
	}
}
