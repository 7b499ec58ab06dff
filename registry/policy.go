package registry

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tailscale/hujson"
)

// Policy: which tools a call must be approved for (approveTools), which
// are never approved (autoApprove), which are gone altogether
// (excludeTools, in the catalogue), and what environment a stdio server
// gets (inheritEnv). The gateway enforces them; the registry reads them
// and answers "does this call need an approval, and by which rule".

// ApproveDestructive is approveTools' "destructive": every tool whose
// annotations do not say it is read-only or non-destructive.
const ApproveDestructive = "destructive"

// Approval is an approveTools value: true, false, "destructive", or a
// list of globs (which may hold "destructive" too).
type Approval struct {
	Set         bool     // the field was given
	All         bool     // true
	Destructive bool     // "destructive"
	Tools       []string // globs
	// Field is where the value was written, e.g. "servers.gh.approveTools"
	// in /home/u/.config/mcpgw/mcp.json.
	Field string
}

// String is the value as the config writes it.
func (a Approval) String() string {
	switch {
	case !a.Set:
		return "unset"
	case a.All:
		return "true"
	case !a.Destructive && len(a.Tools) == 0:
		return "false"
	}
	var parts []string
	if a.Destructive {
		parts = append(parts, `"destructive"`)
	}
	for _, t := range a.Tools {
		parts = append(parts, fmt.Sprintf("%q", t))
	}
	if len(parts) == 1 && a.Destructive {
		return parts[0]
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// matches reports whether the approval covers a tool named by any of
// names, with annotations ann.
func (a Approval) matches(names []string, ann *mcp.ToolAnnotations) bool {
	switch {
	case !a.Set:
		return false
	case a.All:
		return true
	case a.Destructive && Destructive(ann):
		return true
	}
	return matchAny(a.Tools, names)
}

// Destructive reports whether a tool with annotations ann may change its
// environment destructively. MCP's defaults make an unannotated tool
// destructive: readOnlyHint false, destructiveHint true.
func Destructive(ann *mcp.ToolAnnotations) bool {
	if ann == nil {
		return true
	}
	if ann.ReadOnlyHint {
		return false
	}
	return ann.DestructiveHint == nil || *ann.DestructiveHint
}

// ApprovalRule says why a call needs an approval: the field and value
// that asked for it. Empty Field means no approval is needed.
type ApprovalRule struct {
	Field string // e.g. "settings.approveTools", "servers.gh.approveTools"
	Value string // as written
}

// NeedsApproval reports whether calling t needs the user's approval, and
// which rule says so. A server's own approveTools (over its own tool
// names) overrides settings' (over the names mcpgw shows); a tool the
// server's autoApprove names never needs one.
func (v *View) NeedsApproval(t *Tool) (ApprovalRule, bool) {
	srv := v.Config.Servers[t.Server]
	if srv == nil || (!srv.ApproveTools.Set && !v.Config.Settings.ApproveTools.Set) {
		return ApprovalRule{}, false
	}
	own := []string{t.Original, srv.Name + "/" + t.Original}
	if matchAny(srv.AutoApprove, append(own, t.Name)) {
		return ApprovalRule{}, false
	}
	var ann *mcp.ToolAnnotations
	if t.Def != nil {
		ann = t.Def.Annotations
	}
	if t.Resource != nil {
		ann = &mcp.ToolAnnotations{ReadOnlyHint: true} // reading a resource changes nothing
	}
	a, names := v.Config.Settings.ApproveTools, []string{t.Name, srv.Name + "/" + t.Original}
	if srv.ApproveTools.Set {
		// The server's own names; its prefixed ones too, as an imported
		// file's settings-wide value is written over those.
		a, names = srv.ApproveTools, append(own, t.Name)
	}
	if !a.matches(names, ann) {
		return ApprovalRule{}, false
	}
	return ApprovalRule{Field: a.Field, Value: a.String()}, true
}

// approval reads an approveTools value.
func (p *configParser) approval(v *hujson.Value, field string) Approval {
	a := Approval{Set: true, Field: field}
	switch v.Value.Kind() {
	case 'n':
		return Approval{}
	case 't':
		a.All = true
	case 'f':
	case '"':
		if s := hujsonString(*v); s == ApproveDestructive {
			a.Destructive = true
		} else {
			p.fail(v, field, s, fmt.Errorf(`%q is not true, false, "destructive" or a list of tool names`, s))
			return Approval{}
		}
	case '[':
		list := p.globs(v, field)
		if list == nil {
			return Approval{}
		}
		for _, s := range list {
			if s == ApproveDestructive {
				a.Destructive = true
				continue
			}
			a.Tools = append(a.Tools, s)
		}
	default:
		p.failf(v, field, `must be true, false, "destructive" or a list of tool names, %s`, jsonGot(v, false))
		return Approval{}
	}
	return a
}

// globs reads a list of tool-name globs (excludeTools, autoApprove).
func (p *configParser) globs(v *hujson.Value, field string) []string {
	list, ok := p.stringList(v, field)
	if !ok {
		return nil
	}
	out := list[:0:0]
	for i, s := range list {
		if _, err := path.Match(s, ""); err != nil {
			e := &v.Value.(*hujson.Array).Elements[i]
			p.fail(e, fmt.Sprintf("%s[%d]", field, i), s, fmt.Errorf("%q: %w", s, err))
			continue
		}
		out = append(out, s)
	}
	return out
}

// DefaultInheritedEnv are the variables a stdio server gets of mcpgw's
// environment when inheritEnv is false, as the MCP TypeScript SDK's
// default for stdio servers.
var DefaultInheritedEnv = []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

// ServerEnv is the environment srv's process starts with, from base (the
// daemon's, as os.Environ gives it): without mcpgw's own MCPGW_*
// variables, which are the daemon's secrets and settings, never an
// upstream's; only DefaultInheritedEnv of it when srv does not inherit
// the environment; then srv.Env over it.
func ServerEnv(srv *Server, base []string) []string {
	out := make([]string, 0, len(base)+len(srv.Env))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if IsOwnVar(k) {
			continue
		}
		if !srv.InheritsEnv() && !slices.Contains(DefaultInheritedEnv, k) {
			continue
		}
		if _, over := srv.Env[k]; over {
			continue
		}
		out = append(out, kv)
	}
	keys := make([]string, 0, len(srv.Env))
	for k := range srv.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, k+"="+srv.Env[k])
	}
	return out
}

// WithoutOwnVars returns env (KEY=value entries, as os.Environ gives them)
// without mcpgw's own MCPGW_* variables: the environment of anything else
// the daemon starts (a secret command, the reaper).
func WithoutOwnVars(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !IsOwnVar(k) {
			out = append(out, kv)
		}
	}
	return out
}

// InheritsEnv reports whether srv's process gets mcpgw's environment
// (less MCPGW_*): inheritEnv, the server's else settings', default true.
func (s *Server) InheritsEnv() bool { return s.InheritEnv == nil || *s.InheritEnv }

// PolicyRule is one kind of rule that restricts a server's tools or what
// its process is given: the config field that sets it.
type PolicyRule string

const (
	// RuleApproveTools: calls of the tools Approval covers wait for a
	// decision.
	RuleApproveTools PolicyRule = "approveTools"
	// RuleAutoApprove: Tools are never asked about.
	RuleAutoApprove PolicyRule = "autoApprove"
	// RuleIncludeTools: only Tools are offered; Narrowed when the list is
	// a trusted project's, which a tool must match too.
	RuleIncludeTools PolicyRule = "includeTools"
	// RuleExcludeTools: Tools are gone from every list, search and call.
	RuleExcludeTools PolicyRule = "excludeTools"
	// RuleInheritEnv: On, the process gets mcpgw's environment less
	// MCPGW_*; off, only DefaultInheritedEnv, plus its env.
	RuleInheritEnv PolicyRule = "inheritEnv"
	// RuleDirectTools: Tools ("*" for all) are listed to direct-mode
	// sessions as themselves; none when Tools is empty.
	RuleDirectTools PolicyRule = "directTools"
	// RuleExposeResources: On, its resources are offered as tools; off,
	// they are not.
	RuleExposeResources PolicyRule = "exposeResources"
	// RuleNote: a restriction written in another tool's terms, or by a
	// project, and how it became mcpgw's (Note).
	RuleNote PolicyRule = "note"
	// RuleVisibleTo: in team mode only Principals see the server; for
	// anyone else it is hidden whole.
	RuleVisibleTo PolicyRule = "visibleTo"
	// RuleApproveToolsFor: in team mode the calls of Principals need the
	// approvals Approval asks for too.
	RuleApproveToolsFor PolicyRule = "approveToolsFor"
)

// PolicyItem is one rule that applies to a server, as data: the status
// page and `mcpgw check` each word it their own way.
type PolicyItem struct {
	Rule PolicyRule
	// Approval is RuleApproveTools' value.
	Approval Approval
	// Tools are the globs or names of RuleAutoApprove, RuleIncludeTools,
	// RuleExcludeTools and RuleDirectTools.
	Tools []string
	// Narrowed marks an includeTools list a trusted project added.
	Narrowed bool
	// On is RuleInheritEnv's and RuleExposeResources' value.
	On bool
	// Note is RuleNote's text: `toolExposure "b": "hidden"`.
	Note string
	// Field is where the value was written when that is not the server's
	// own field named Rule: "settings.approveTools", or the server's
	// approveTools field as the config names it.
	Field string
	// Inherited marks what the server has from the settings or mcpgw's
	// defaults, not from its own definition (`check` states those once);
	// a rule the server sets itself replaces the settings' of that rule.
	Inherited bool
	// Principals are the users and groups ("user:NAME", "group:NAME") of
	// RuleVisibleTo and RuleApproveToolsFor (one each).
	Principals []string
	// Off marks a rule that has no effect: one naming users or groups
	// outside team mode (ErrTeamOff).
	Off bool
}

// DescribePolicy lists the rules that apply to srv under cfg's settings
// and team block, in a fixed order: who sees it (team mode), approvals,
// approvals by user and group (team mode), tools never asked about,
// inclusions, exclusions (its own, then the settings'), the environment
// of its process, direct tools, resources, and where restrictions written
// in another tool's terms came from. It is the one description the status
// page and `mcpgw check` render; a new rule is added here, beside the
// field that sets it and the gate that enforces it.
func DescribePolicy(srv *Server, cfg *Config) []PolicyItem {
	st, off := cfg.Settings, cfg.Team == nil
	var out []PolicyItem
	if len(srv.VisibleTo) > 0 {
		out = append(out, PolicyItem{Rule: RuleVisibleTo, Principals: srv.VisibleTo, Off: off})
	}
	switch {
	case srv.ApproveTools.Set:
		out = append(out, PolicyItem{Rule: RuleApproveTools, Approval: srv.ApproveTools, Field: srv.ApproveTools.Field})
	case st.ApproveTools.Set:
		out = append(out, PolicyItem{Rule: RuleApproveTools, Approval: st.ApproveTools, Field: "settings.approveTools", Inherited: true})
	}
	for _, pa := range srv.ApproveToolsFor {
		out = append(out, PolicyItem{Rule: RuleApproveToolsFor, Principals: []string{pa.Principal}, Approval: pa.Approval, Off: off})
	}
	for _, pa := range st.ApproveToolsFor {
		out = append(out, PolicyItem{Rule: RuleApproveToolsFor, Principals: []string{pa.Principal}, Approval: pa.Approval, Off: off,
			Field: "settings.approveToolsFor", Inherited: true})
	}
	if len(srv.AutoApprove) > 0 {
		out = append(out, PolicyItem{Rule: RuleAutoApprove, Tools: srv.AutoApprove})
	}
	if len(srv.IncludeTools) > 0 {
		out = append(out, PolicyItem{Rule: RuleIncludeTools, Tools: srv.IncludeTools})
	}
	for _, also := range srv.IncludeAlso {
		out = append(out, PolicyItem{Rule: RuleIncludeTools, Tools: also, Narrowed: true})
	}
	if len(srv.ExcludeTools) > 0 {
		out = append(out, PolicyItem{Rule: RuleExcludeTools, Tools: srv.ExcludeTools})
	}
	if len(st.ExcludeTools) > 0 {
		out = append(out, PolicyItem{Rule: RuleExcludeTools, Tools: st.ExcludeTools, Field: "settings.excludeTools", Inherited: true})
	}
	if srv.Command != "" {
		out = append(out, PolicyItem{Rule: RuleInheritEnv, On: srv.InheritsEnv(), Inherited: srv.InheritsEnv()})
	}
	switch {
	case srv.DirectTools != nil:
		out = append(out, PolicyItem{Rule: RuleDirectTools, Tools: srv.DirectTools})
	case len(st.DirectTools) > 0:
		out = append(out, PolicyItem{Rule: RuleDirectTools, Tools: st.DirectTools, Field: "settings.directTools", Inherited: true})
	}
	if srv.ExposeResources != nil {
		out = append(out, PolicyItem{Rule: RuleExposeResources, On: *srv.ExposeResources})
	}
	for _, n := range srv.PolicyNotes {
		out = append(out, PolicyItem{Rule: RuleNote, Note: n})
	}
	return out
}
