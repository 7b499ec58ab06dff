package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Policy by user and group, in team mode. Two server fields name
// the users and groups the team block's tokens carry:
//
//	"github": {
//	  "url": "https://github.internal/mcp",
//	  "visibleTo": ["group:eng", "user:carol"],
//	  "approveTools": "destructive",
//	  "approveToolsFor": {"group:contractors": true, "user:bob": ["delete_*"]},
//	}
//
// visibleTo: only the users and groups it names see the server; for anyone
// else it is hidden as excludeTools ["*"] hides a server (Settings.Hidden):
// gone from every list, search, call, prompt, resource, completion, script
// and page. approveToolsFor: each entry's approveTools value is added to
// the server's (or, when it has none, to settings.approveTools) for the
// users and groups it names; like a project's narrowing, it asks more of
// them and never lifts an approval the server asks for. The settings may
// hold an approveToolsFor too, added to every server's as if each wrote it
// (globs over the names mcpgw shows):
//
//	"settings": {"approveToolsFor": {"group:contractors": "destructive"}}
//
// Both apply only in team mode: without a team block no request names a
// user, so a server is visible to everyone and the entries ask nothing
// (a warning says so at load).

// Principal prefixes of visibleTo and approveToolsFor entries.
const (
	PrincipalUser  = "user:"
	PrincipalGroup = "group:"
)

// PrincipalApproval is one entry of approveToolsFor: the approveTools value
// asked of Principal's calls.
type PrincipalApproval struct {
	Principal string // "user:NAME" or "group:NAME"
	Approval  Approval
}

// principalMatches reports whether p names user or one of groups.
func principalMatches(p, user string, groups []string) bool {
	if name, ok := strings.CutPrefix(p, PrincipalUser); ok {
		return name == user
	}
	if name, ok := strings.CutPrefix(p, PrincipalGroup); ok {
		return slices.Contains(groups, name)
	}
	return false
}

// checkPrincipal returns why p is not a principal, or nil.
func checkPrincipal(p string) error {
	for _, prefix := range []string{PrincipalUser, PrincipalGroup} {
		if name, ok := strings.CutPrefix(p, prefix); ok {
			if name == "" {
				return fmt.Errorf("%q names no one", p)
			}
			return nil
		}
	}
	return fmt.Errorf("%q is neither user:NAME nor group:NAME", p)
}

// VisibleFor reports whether user, in groups, sees s in team mode: s has no
// visibleTo, or it names the user or one of the groups.
func (s *Server) VisibleFor(user string, groups []string) bool {
	if len(s.VisibleTo) == 0 {
		return true
	}
	for _, p := range s.VisibleTo {
		if principalMatches(p, user, groups) {
			return true
		}
	}
	return false
}

// ForUser returns the configuration as user, in groups, sees it in team
// mode: every server whose visibleTo leaves the user out hidden (its
// excludeTools gain "*", so that Settings.Hidden leaves it out of every
// View and the pool's reconcile never starts it for this configuration),
// and the approveToolsFor entries naming the user or a group added to the
// servers' approveTools. It returns c itself outside team mode, and when no
// rule concerns the user. Servers changed are copies; the copy's Hash says
// what changed, so that two users the rules treat alike share one View.
func (c *Config) ForUser(user string, groups []string) *Config {
	if c == nil || c.Team == nil {
		return c
	}
	var changed map[string]*Server
	var effect strings.Builder
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		srv := c.Servers[name]
		if !srv.VisibleFor(user, groups) {
			cp := *srv
			cp.ExcludeTools = append(slices.Clip(cp.ExcludeTools), "*")
			changed = setServer(changed, name, &cp)
			fmt.Fprintf(&effect, "%s hidden\n", name)
			continue
		}
		var add []PrincipalApproval
		for _, pa := range slices.Concat(srv.ApproveToolsFor, c.Settings.ApproveToolsFor) {
			if principalMatches(pa.Principal, user, groups) && asksForSome(pa.Approval) {
				add = append(add, pa)
			}
		}
		if len(add) == 0 {
			continue
		}
		cp := *srv
		base := cp.ApproveTools
		if !base.Set {
			base = c.Settings.ApproveTools
		}
		for _, pa := range add {
			base = unionApproval(base, pa.Approval)
			fmt.Fprintf(&effect, "%s asks %s\n", name, pa.Principal)
		}
		cp.ApproveTools = base
		changed = setServer(changed, name, &cp)
	}
	if changed == nil {
		return c
	}
	out := *c
	out.Servers = maps.Clone(c.Servers)
	maps.Copy(out.Servers, changed)
	sum := sha256.Sum256([]byte(effect.String()))
	out.Hash = c.Hash + "-user:" + hex.EncodeToString(sum[:8])
	return &out
}

func setServer(m map[string]*Server, name string, s *Server) map[string]*Server {
	if m == nil {
		m = map[string]*Server{}
	}
	m[name] = s
	return m
}

// teamRule is a visibleTo or approveToolsFor value read, kept until the
// whole file is read (the team block may come after mcpServers) to say
// whether it can take effect.
type teamRule struct {
	v      *hujson.Value
	field  string
	groups bool  // it names a group
	off    error // what it does without a team block; nil: ErrTeamOff
	// required makes off an error, not a warning: the server cannot
	// work outside team mode.
	required bool
}

// visibleTo reads a visibleTo list.
func (p *configParser) visibleTo(v *hujson.Value, field string) []string {
	list, ok := p.stringList(v, field)
	if !ok {
		return nil
	}
	out := list[:0:0]
	groups := false
	for i, s := range list {
		if err := checkPrincipal(s); err != nil {
			e := &v.Value.(*hujson.Array).Elements[i]
			p.fail(e, fmt.Sprintf("%s[%d]", field, i), s, err)
			continue
		}
		groups = groups || strings.HasPrefix(s, PrincipalGroup)
		out = append(out, s)
	}
	if len(list) == 0 {
		p.failf(v, field, "must name at least one user:NAME or group:NAME (an empty list would hide the server from everyone; use \"enabled\": false)")
		return nil
	}
	p.teamRules = append(p.teamRules, teamRule{v: v, field: field, groups: groups})
	return out
}

// approveToolsFor reads an approveToolsFor object: principal → approveTools
// value.
func (p *configParser) approveToolsFor(v *hujson.Value, field string) []PrincipalApproval {
	if jsonIsNull(v) {
		return nil
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		p.failf(v, field, "must be an object of user:NAME or group:NAME to an approveTools value, got %s", jsonKindName(v))
		return nil
	}
	var out []PrincipalApproval
	groups := false
	for _, m := range p.members(obj, field) {
		f := joinField(field, m.name)
		if err := checkPrincipal(m.name); err != nil {
			p.fail(m.key, f, m.name, err)
			continue
		}
		a := p.approval(m.value, f)
		if !a.Set {
			continue
		}
		if !asksForSome(a) {
			p.warnf(m.value, f, "false asks for nothing: approveToolsFor adds approvals to approveTools, never lifts them; ignored")
			continue
		}
		groups = groups || strings.HasPrefix(m.name, PrincipalGroup)
		out = append(out, PrincipalApproval{Principal: m.name, Approval: a})
	}
	if len(out) > 0 {
		p.teamRules = append(p.teamRules, teamRule{v: v, field: field, groups: groups})
	}
	return out
}

// checkTeamRules warns about the visibleTo and approveToolsFor values that
// cannot take effect: all of them without a team block, those naming
// groups when the team block names no groups claim.
func (p *configParser) checkTeamRules(cfg *Config) {
	for _, r := range p.teamRules {
		switch {
		case cfg.Team == nil && r.required:
			p.failf(r.v, r.field, "%v", r.off)
		case cfg.Team == nil && r.off != nil:
			p.warnf(r.v, r.field, "%v", r.off)
		case cfg.Team == nil:
			p.warnf(r.v, r.field, "%v", ErrTeamOff)
		case r.groups && cfg.Team.GroupsClaim == "":
			p.warnf(r.v, r.field, "no group matches: team.groupsClaim is not set, so tokens name no groups")
		}
	}
}

// errPerUserOff is what "isolation": "user" does without a team block.
var errPerUserOff = errors.New(`"user" has no effect outside team mode (no team block): with one user, the server is shared`)

// ErrTeamOff is why a rule naming users or groups has no effect: without a
// team block no request names a user.
var ErrTeamOff = errors.New("has no effect outside team mode (no team block): every user sees the server and is asked as approveTools says")
