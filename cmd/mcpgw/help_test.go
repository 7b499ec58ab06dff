package main

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestHelpNamesOnlyRealFlags: every --flag that a command's help shows
// in its usage line or examples is one of that command's flags.
func TestHelpNamesOnlyRealFlags(t *testing.T) {
	var names []string
	for name := range docs {
		names = append(names, name)
	}
	sort.Strings(names)
	flagRE := regexp.MustCompile(`(?:^|\s|\[)--?([a-z][a-z0-9-]*)`)
	for _, name := range names {
		switch name {
		case "service", "completion", "version", "bench":
			continue // their flags are parsed elsewhere, or they have none
		}
		var out bytes.Buffer
		err := run(context.Background(), []string{"help", name}, nil, &out, &out)
		if err != nil {
			t.Errorf("mcpgw help %s: %v", name, err)
			continue
		}
		text := out.String()
		i := strings.Index(text, "\nFlags:\n")
		if i < 0 {
			continue
		}
		var have []string
		for _, l := range strings.Split(text[i:], "\n") {
			if strings.HasPrefix(l, "  -") {
				have = append(have, strings.Fields(l)[0][1:])
			}
		}
		d := docs[name]
		for _, l := range append([]string{"mcpgw " + d.usage}, d.examples...) {
			l, _, _ = strings.Cut(l, "#")
			if strings.Contains(l, "{") { // a config snippet, not a command line
				continue
			}
			for _, m := range flagRE.FindAllStringSubmatch(l, -1) {
				if !slices.Contains(have, m[1]) {
					t.Errorf("mcpgw help %s shows --%s, which %s does not take (its flags: %v)", name, m[1], name, have)
				}
			}
		}
	}
}

// TestUnknownCommandSuggests: a command mcpgw does not have, that another
// command has as a subcommand or that is one letter off, is answered
// with the command meant.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"install", `unknown command "install"; did you mean "mcpgw service install"?`},
		{"uninstall", `unknown command "uninstall"; did you mean "mcpgw service uninstall"?`},
		{"stauts", `unknown command "stauts"; did you mean "mcpgw status"?`},
		{"serach", `unknown command "serach"; did you mean "mcpgw search"?`},
		{"start", `unknown command "start"; did you mean "mcpgw serve"?`},
		{"frobnicate", `unknown command "frobnicate"`},
	} {
		var out bytes.Buffer
		err := run(context.Background(), []string{tc.cmd}, nil, &out, &out)
		if err == nil || err.Error() != tc.want {
			t.Errorf("mcpgw %s: %v, want %s", tc.cmd, err, tc.want)
		}
	}
}
