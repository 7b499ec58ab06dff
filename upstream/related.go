package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// relatedStream tags the server-to-client requests on the SSE response
// stream of one call (Streamable HTTP sends a request on the stream of the
// call that caused it) with the calling peer's number, in the request's
// _meta under metaKeyPeer, so that the handler can route it to that peer
// (Upstream.peerFor). Everything else passes through byte for byte.
type relatedStream struct {
	body io.ReadCloser
	r    *bufio.Reader
	tag  int64
	out  bytes.Buffer // what Read hands out next
	ev   []byte       // the event being read: its lines so far
	data []byte       // the event's data, joined
	done bool
}

func tagRelatedStream(resp *http.Response, tag int64) {
	if tag == 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return
	}
	resp.Body = &relatedStream{body: resp.Body, r: bufio.NewReader(resp.Body), tag: tag}
}

func (s *relatedStream) Read(p []byte) (int, error) {
	for s.out.Len() == 0 {
		if s.done {
			return 0, io.EOF
		}
		if err := s.next(); err != nil {
			s.done = true
			s.out.Write(s.ev) // a partial event, as it came
			s.ev = s.ev[:0]
			if s.out.Len() == 0 {
				return 0, err
			}
		}
	}
	return s.out.Read(p)
}

// next reads one line; at the end of an event, it moves the event (tagged
// if it is a server-to-client request) to s.out.
func (s *relatedStream) next() error {
	line, err := s.r.ReadBytes('\n')
	if len(line) == 0 && err != nil {
		return err
	}
	trimmed := bytes.TrimRight(line, "\r\n")
	if len(trimmed) > 0 {
		s.ev = append(s.ev, line...)
		if v, ok := bytes.CutPrefix(trimmed, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if len(s.data) > 0 {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, v...)
		}
		return err
	}
	// A blank line ends the event.
	if tagged, ok := tagRequest(s.data, s.tag); ok {
		s.rewrite(tagged)
	} else {
		s.out.Write(s.ev)
	}
	s.out.Write(line)
	s.ev, s.data = s.ev[:0], s.data[:0]
	return err
}

// rewrite writes the event with its data replaced by data (one line).
func (s *relatedStream) rewrite(data []byte) {
	for ev := s.ev; len(ev) > 0; {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i+1], ev[i+1:]
		} else {
			ev = nil
		}
		if !bytes.HasPrefix(line, []byte("data:")) {
			s.out.Write(line)
		}
	}
	s.out.WriteString("data: ")
	s.out.Write(data)
	s.out.WriteByte('\n')
}

func (s *relatedStream) Close() error { return s.body.Close() }

// tagRequest returns data with tag set in params._meta, if data is a
// JSON-RPC request (a method and an id) of sampling, elicitation or roots.
func tagRequest(data []byte, tag int64) ([]byte, bool) {
	if !bytes.Contains(data, []byte(`"method"`)) || !bytes.Contains(data, []byte(`"id"`)) {
		return nil, false
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(data, &msg) != nil || msg["id"] == nil {
		return nil, false
	}
	var method string
	if json.Unmarshal(msg["method"], &method) != nil {
		return nil, false
	}
	switch method {
	case "sampling/createMessage", "elicitation/create", "roots/list":
	default:
		return nil, false
	}
	params := map[string]json.RawMessage{}
	if p := msg["params"]; len(p) > 0 && !bytes.Equal(p, []byte("null")) {
		if json.Unmarshal(p, &params) != nil {
			return nil, false
		}
	}
	meta := map[string]json.RawMessage{}
	if m := params["_meta"]; len(m) > 0 && !bytes.Equal(m, []byte("null")) {
		if json.Unmarshal(m, &meta) != nil {
			return nil, false
		}
	}
	meta[metaKeyPeer], _ = json.Marshal(tag)
	var err error
	if params["_meta"], err = json.Marshal(meta); err != nil {
		return nil, false
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return nil, false
	}
	out, err := json.Marshal(msg)
	return out, err == nil
}
