package deploy

import (
	"fmt"
	"strings"
)

// CompletionScript is mcpgw's completion script for shell (bash, zsh or
// fish): the subcommands, and server names (`mcpgw __servers`, read from
// the config when completing) after connect, login, logout, logs and
// --server.
func CompletionScript(shell string, commands []string) (string, error) {
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
