package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestProxyArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd  string
		rest []string
		f    proxyFlags
		want map[string]any
		err  string
	}{
		{cmd: "tools", f: proxyFlags{Server: "gh"}, want: map[string]any{"server": "gh"}},
		{cmd: "search", rest: []string{"open", "issue"}, f: proxyFlags{Regex: true}, want: map[string]any{"search": "open issue", "regex": true, "includeSchemas": false}},
		{cmd: "search", err: "usage: mcpgw search"},
		{cmd: "call", rest: []string{"gh_list", `{"n": 2}`}, want: map[string]any{"tool": "gh_list", "args": map[string]any{"n": 2.0}}},
		{cmd: "call", rest: []string{"gh_list", `[1]`}, err: "arguments must be a JSON object"},
		{cmd: "connect", rest: []string{"gh"}, want: map[string]any{"connect": "gh"}},
		{cmd: "describe", rest: []string{"a", "b"}, err: "usage: mcpgw describe TOOL"},
	} {
		got, err := proxyArgs(tc.cmd, tc.rest, tc.f)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("proxyArgs(%s %v) = %v, %v; want error %q", tc.cmd, tc.rest, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("proxyArgs(%s %v) = %v, %v; want %v", tc.cmd, tc.rest, got, err, tc.want)
		}
	}
}
