package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"strings"

	"github.com/mcpgw/mcpgw/registry"
)

// commands are the subcommands completion offers.
var commands = []string{
	"serve", "stdio", "status", "ui", "logs", "tools", "search", "describe", "call", "script", "connect", "approve", "audit", "reload",
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
	script, err := completionScript(args[0], commands)
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

// completionScript is mcpgw's completion script for shell (bash, zsh or
// fish): the subcommands, and server names (`mcpgw __servers`, read from
// the config when completing) after connect, login, logout, logs and
// --server.
func completionScript(shell string, commands []string) (string, error) {
	var b strings.Builder
	stdout := &b
	words := strings.Join(commands, " ")
	switch shell {
	case "bash", "zsh":
		if shell == "zsh" {
			fmt.Fprintln(stdout, "autoload -U +X bashcompinit && bashcompinit")
		}
		fmt.Fprintf(stdout, `_mcpgw() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W %q -- "$cur"))
		return
	fi
	case "${COMP_WORDS[1]}" in
	connect|login|logout|logs)
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "$(mcpgw __servers 2>/dev/null)" -- "$cur")) ;;
	tools|search)
		[ "$prev" = "--server" ] && COMPREPLY=($(compgen -W "$(mcpgw __servers 2>/dev/null)" -- "$cur")) ;;
	service)
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "install uninstall status" -- "$cur")) ;;
	completion)
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "bash zsh fish" -- "$cur")) ;;
	help)
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W %q -- "$cur")) ;;
	esac
}
complete -F _mcpgw mcpgw
`, words, words)
	case "fish":
		fmt.Fprintf(stdout, `complete -c mcpgw -f
complete -c mcpgw -n __fish_use_subcommand -a %q
complete -c mcpgw -n '__fish_seen_subcommand_from connect login logout logs' -a '(mcpgw __servers 2>/dev/null)'
complete -c mcpgw -n '__fish_seen_subcommand_from tools search' -l server -a '(mcpgw __servers 2>/dev/null)'
complete -c mcpgw -n '__fish_seen_subcommand_from service' -a 'install uninstall status'
complete -c mcpgw -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'
`, words)
	default:
		return "", fmt.Errorf("completion: %q is not bash, zsh or fish", shell)
	}
	return b.String(), nil
}
