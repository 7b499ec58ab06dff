package registry

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// A trusted project narrows the user's servers; it never widens them
// (decision 13: nothing another file supplies widens what the user's own
// config allows). A project entry whose name the user also defines is not
// a second definition of that server. The user's definition is used
// whole: command, args, env, cwd, url, headers, auth, lifecycle, and every
// policy field. The project's entry adds only restrictions:
//
//   - excludeTools (and Pi's "exposure": "hidden" and toolExposure, which
//     become excludeTools) join the user's;
//   - includeTools narrows: a tool must match the user's includeTools (if
//     any) and the project's;
//   - approveTools adds approvals to the user's (or, when the server has
//     none of its own, to settings.approveTools), never removes one;
//   - "disabled": true (or "enabled": false) disables it.
//
// Everything else the entry says differently — its command, args, env,
// url, a looser approveTools false, autoApprove — is ignored, with a
// warning naming the fields. The user's connection wins, rather than the
// project's entry becoming a server of its own, because the name is the
// user's handle on the server: their policy, their secrets (env, headers)
// and the tool names the model knows (github_*) are all attached to it. A
// project that swapped the command under that name kept the name's
// approvals out of the way, and one that ran its own command with the
// user's env would hand the user's secrets to the project's program. A
// project that wants another server gives it another name.

// narrowByProject adds a trusted project's servers (srcs, in precedence
// order) to servers, the user's: a name the user does not define is the
// project's server, its first definition winning; a name the user defines
// stays the user's server, narrowed by each project entry of that name.
// A server narrowed is copied, never modified in place. It returns the
// warnings about ignored fields.
func narrowByProject(servers map[string]*Server, srcs []*sourceFile, settings *Settings) (warns []string) {
	users := maps.Clone(servers)
	for _, sf := range srcs {
		for _, name := range slices.Sorted(maps.Keys(sf.servers)) {
			proj := sf.servers[name]
			user, ok := users[name]
			if !ok {
				if _, taken := servers[name]; !taken {
					servers[name] = proj
				}
				continue
			}
			s := *servers[name]
			_, defaultCwd := sf.plainHash[name]
			narrowServer(&s, proj, sf.path, settings)
			servers[name] = &s
			if ignored := ignoredFields(user, proj, defaultCwd); len(ignored) > 0 {
				warns = append(warns, fmt.Sprintf("%s: %s: %s ignored: the server is yours (%s), and a project only restricts a server you define (excludeTools, includeTools, approveTools, exposure, disabled); give the project's another name to run it as well",
					sf.path, joinField("mcpServers", name), strings.Join(ignored, ", "), user.Source))
			}
		}
	}
	return warns
}

// narrowServer applies the restrictions of proj, a project's entry from
// file, to s.
func narrowServer(s, proj *Server, file string, settings *Settings) {
	var applied []string
	if !proj.Enabled && s.Enabled {
		s.Enabled = false
		applied = append(applied, "disabled")
	}
	if add := missingFrom(s.ExcludeTools, proj.ExcludeTools); len(add) > 0 {
		s.ExcludeTools = append(slices.Clip(s.ExcludeTools), add...)
		applied = append(applied, "excludeTools "+compactJSON(add))
	}
	if len(proj.IncludeTools) > 0 {
		s.IncludeAlso = append(slices.Clip(s.IncludeAlso), slices.Clone(proj.IncludeTools))
		applied = append(applied, "includeTools "+compactJSON(proj.IncludeTools))
	}
	if a := proj.ApproveTools; asksForSome(a) {
		base := s.ApproveTools
		if !base.Set {
			base = settings.ApproveTools
		}
		s.ApproveTools = unionApproval(base, a)
		applied = append(applied, "approveTools "+a.String())
	}
	if len(applied) > 0 {
		s.PolicyNotes = append(slices.Clip(s.PolicyNotes), fmt.Sprintf("restricted by %s: %s", file, strings.Join(applied, ", ")))
	}
}

// asksForSome reports whether a asks for an approval of any tool.
func asksForSome(a Approval) bool { return a.All || a.Destructive || len(a.Tools) > 0 }

// unionApproval asks for every approval a or b asks for.
func unionApproval(a, b Approval) Approval {
	if !a.Set {
		return b
	}
	return Approval{
		Set:         true,
		All:         a.All || b.All,
		Destructive: a.Destructive || b.Destructive,
		Tools:       append(slices.Clone(a.Tools), missingFrom(a.Tools, b.Tools)...),
		Field:       a.Field + " and " + b.Field,
	}
}

// missingFrom returns the entries of add that list does not hold.
func missingFrom(list, add []string) []string {
	var out []string
	for _, v := range add {
		if !slices.Contains(list, v) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// ignoredFields names the fields of proj, a project's entry, that differ
// from user, the user's definition of the same name, and are not applied:
// everything that says how the server is reached and run, and what would
// loosen its policy. A cwd the project's entry did not write (defaultCwd)
// is not among them. Only names, never values: they may be secrets.
func ignoredFields(user, proj *Server, defaultCwd bool) []string {
	var out []string
	add := func(field string, differs bool) {
		if differs {
			out = append(out, field)
		}
	}
	add("command", proj.Command != user.Command)
	add("args", !slices.Equal(proj.Args, user.Args))
	add("env", !maps.Equal(proj.Env, user.Env))
	add("cwd", !defaultCwd && proj.Cwd != user.Cwd)
	add("url", proj.URL != user.URL)
	add("headers", !maps.Equal(proj.Headers, user.Headers))
	add("auth", proj.Auth != user.Auth || !reflect.DeepEqual(proj.OAuth, user.OAuth))
	add("bearerToken", proj.BearerToken != user.BearerToken || proj.BearerTokenEnv != user.BearerTokenEnv)
	add("inheritEnv", proj.InheritsEnv() != user.InheritsEnv())
	add("exposeResources", proj.ExposesResources() != user.ExposesResources())
	add("autoApprove", len(missingFrom(user.AutoApprove, proj.AutoApprove)) > 0)
	add("approveTools false", proj.ApproveTools.Set && !asksForSome(proj.ApproveTools))
	return out
}

// SamePolicy reports whether s and o show and gate the same tools alike:
// the same enabled state, includeTools, excludeTools, approveTools and
// autoApprove. Two definitions of one identity (the same Hash) may differ
// in these when a project narrows one of them.
func (s *Server) SamePolicy(o *Server) bool {
	return s.Enabled == o.Enabled &&
		slices.Equal(s.IncludeTools, o.IncludeTools) &&
		slices.EqualFunc(s.IncludeAlso, o.IncludeAlso, slices.Equal) &&
		slices.Equal(s.ExcludeTools, o.ExcludeTools) &&
		reflect.DeepEqual(s.ApproveTools, o.ApproveTools) &&
		slices.Equal(s.AutoApprove, o.AutoApprove)
}
