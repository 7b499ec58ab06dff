package registry

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Override entries: Pi's project files may name a server defined
// elsewhere with only fields that change how it is shown —
// {"github": {"exposure": "hidden"}} — rather than define it again. Such
// an entry is not a server (it has no command or url); it restricts the
// server of that name from any other source. Only restrictions are
// applied (hiding, excluding, disabling, asking for approval): a file
// cannot widen what another file allowed this way.

// overrideFields are the fields an override entry may hold.
var overrideFields = []string{"enabled", "disabled", "exposure", "toolExposure", "excludeTools", "includeTools", "approveTools"}

// splitOverrides moves the override entries of servers (entries with no
// transport and only overrideFields) out of it.
func splitOverrides(servers map[string]any) (defs, overrides map[string]any) {
	for name, v := range servers {
		obj, ok := v.(map[string]any)
		if !ok || len(obj) == 0 {
			continue
		}
		only := true
		for k := range obj {
			if !slices.Contains(overrideFields, k) {
				only = false
				break
			}
		}
		if !only {
			continue
		}
		if overrides == nil {
			overrides = map[string]any{}
			defs = maps.Clone(servers)
		}
		overrides[name] = obj
		delete(defs, name)
	}
	if overrides == nil {
		return servers, nil
	}
	return defs, overrides
}

// applyOverrides returns servers with the override entries of srcs
// applied; a server changed is copied, never modified in place. settings
// are the user's, whose approveTools an override's adds to.
func applyOverrides(servers map[string]*Server, srcs []*sourceFile, settings *Settings) (warns []string) {
	for _, sf := range srcs {
		for _, name := range slices.Sorted(maps.Keys(sf.overrides)) {
			s, ok := servers[name]
			if !ok {
				warns = append(warns, fmt.Sprintf("%s: mcpServers.%s: overrides a server no file defines; ignored", sf.path, name))
				continue
			}
			c := *s
			warns = append(warns, overrideServer(&c, sf.path, name, sf.overrides[name].(map[string]any), settings)...)
			servers[name] = &c
		}
	}
	return warns
}

// overrideServer applies one override entry to s.
func overrideServer(s *Server, file, name string, ov map[string]any, settings *Settings) (warns []string) {
	field := func(k string) string { return fmt.Sprintf("%s: mcpServers.%s.%s", file, name, k) }
	s.PolicyNotes = append(slices.Clip(s.PolicyNotes), fmt.Sprintf("restricted by %s: %s", file, compactJSON(ov)))
	if b, ok := ov["enabled"].(bool); ok && !b {
		s.Enabled = false
	}
	if b, ok := ov["disabled"].(bool); ok && b {
		s.Enabled = false
	}
	n := &normalizer{file: file, field: "mcpServers." + name}
	obj := maps.Clone(ov)
	n.restrictions(obj)
	for _, w := range n.warns {
		warns = append(warns, w)
	}
	if list, ok := obj["excludeTools"].([]any); ok {
		s.ExcludeTools = slices.Clone(s.ExcludeTools)
		for _, v := range list {
			if g, ok := v.(string); ok {
				s.ExcludeTools = append(s.ExcludeTools, g)
			}
		}
	}
	if list, ok := obj["includeTools"].([]any); ok && len(list) > 0 {
		var globs []string
		for _, v := range list {
			if g, ok := v.(string); ok {
				globs = append(globs, g)
			}
		}
		s.IncludeAlso = append(slices.Clip(s.IncludeAlso), globs) // narrows: a tool must match it too
	}
	if v, ok := ov["approveTools"]; ok {
		a, err := approvalOf(v, fmt.Sprintf("mcpServers.%s.approveTools (in %s)", name, file))
		switch {
		case err != nil:
			warns = append(warns, field("approveTools")+": "+err.Error()+"; ignored")
		case asksForSome(a): // "false" would lift approvals, and is not taken
			base := s.ApproveTools
			if !base.Set {
				base = settings.ApproveTools
			}
			s.ApproveTools = unionApproval(base, a) // adds to what was asked, never replaces it
		}
	}
	return warns
}

// approvalOf reads an approveTools value decoded from JSON.
func approvalOf(v any, field string) (Approval, error) {
	a := Approval{Set: true, Field: field}
	switch v := v.(type) {
	case bool:
		a.All = v
	case string:
		if v != ApproveDestructive {
			return Approval{}, fmt.Errorf(`%q is not true, false, "destructive" or a list of tool names`, v)
		}
		a.Destructive = true
	case []any:
		for _, e := range v {
			g, ok := e.(string)
			if !ok {
				return Approval{}, fmt.Errorf("must list tool names, got %s", goKindName(e))
			}
			if strings.EqualFold(g, ApproveDestructive) {
				a.Destructive = true
				continue
			}
			a.Tools = append(a.Tools, g)
		}
	default:
		return Approval{}, fmt.Errorf(`must be true, false, "destructive" or a list of tool names, got %s`, goKindName(v))
	}
	return a, nil
}

// withFilePolicy applies the policy in the settings of a file in mcpgw's
// own shape (Pi's mcp.json, a project's .pi/mcp.json) to the servers it
// defines: pi-mcp-adapter's settings.approveTools, for servers with none
// of their own, and settings.excludeTools. Written over the names the
// adapter shows (server_tool), they match as mcpgw's do.
func withFilePolicy(format sourceFormat, root any, servers map[string]any) map[string]any {
	if format != formatMCPServers || len(servers) == 0 {
		return servers
	}
	obj, _ := root.(map[string]any)
	settings, _ := obj["settings"].(map[string]any)
	approve, hasApprove := settings["approveTools"]
	exclude, _ := settings["excludeTools"].([]any)
	if !hasApprove && len(exclude) == 0 {
		return servers
	}
	out := make(map[string]any, len(servers))
	for name, v := range servers {
		def, ok := v.(map[string]any)
		if !ok {
			out[name] = v
			continue
		}
		def = maps.Clone(def)
		if _, own := def["approveTools"]; hasApprove && !own {
			def["approveTools"] = approve // the file's settings.approveTools
		}
		if len(exclude) > 0 { // the file's settings.excludeTools
			old, _ := def["excludeTools"].([]any)
			def["excludeTools"] = append(slices.Clone(old), exclude...)
		}
		out[name] = def
	}
	return out
}
