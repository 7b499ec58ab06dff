package main

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
)

// TestterminalBrowser: the URL is always printed; pasted, the redirect is
// read from stdin and nothing is opened; otherwise the URL is opened and
// the callback listener's redirect returned.
func TestTerminalBrowser(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	opened := ""
	open := func(u string) error { opened = u; return nil }
	b := terminalBrowser(true, strings.NewReader("http://127.0.0.1:9/oauth/callback?code=c&state=s\n"), &out, open)
	got, err := b(context.Background(), "https://as.example/authorize?x=1", nil)
	if err != nil || got.Query().Get("code") != "c" || opened != "" || !strings.Contains(out.String(), "https://as.example/authorize?x=1") {
		t.Errorf("paste: %v, %v, opened %q, printed %q", got, err, opened, out.String())
	}
	out.Reset()
	redirect := make(chan *url.URL, 1)
	redirect <- &url.URL{RawQuery: "code=d&state=t"}
	b = terminalBrowser(false, strings.NewReader(""), &out, open)
	got, err = b(context.Background(), "https://as.example/authorize?y=2", redirect)
	if err != nil || got.Query().Get("code") != "d" || opened != "https://as.example/authorize?y=2" || !strings.Contains(out.String(), "y=2") {
		t.Errorf("browser: %v, %v, opened %q, printed %q", got, err, opened, out.String())
	}
}
