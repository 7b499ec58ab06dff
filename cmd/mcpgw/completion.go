package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/mcpgw/mcpgw/deploy"
	"github.com/mcpgw/mcpgw/registry"
)

// commands are the subcommands completion offers.
var commands = []string{
	"serve", "stdio", "status", "ui", "logs", "tools", "search", "describe", "call", "connect", "approve", "audit", "reload",
	"check", "trust", "untrust", "login", "logout", "service", "healthcheck", "bench",
	"completion", "version", "help",
}

// completionCmd is `mcpgw completion bash|zsh|fish`: a script that completes
// subcommands, and server names (from the config, read when completing)
// after connect, login, logout and tools --server.
func completionCmd(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: mcpgw completion bash|zsh|fish\n\n" +
			"  bash: add  source <(mcpgw completion bash)  to ~/.bashrc\n" +
			"  zsh:  add  source <(mcpgw completion zsh)  to ~/.zshrc\n" +
			"  fish: mcpgw completion fish > ~/.config/fish/completions/mcpgw.fish")
	}
	script, err := deploy.CompletionScript(args[0], commands)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, script)
	return err
}

// serverNames is `mcpgw __servers`, for completion: the config's server
// names, one a line; nothing when the config does not load.
func serverNames(stdout io.Writer) error {
	cfg, err := registry.Load("", &registry.LoadOptions{})
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(cfg.Servers))
	for name := range cfg.Servers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintln(stdout, n)
	}
	return nil
}
