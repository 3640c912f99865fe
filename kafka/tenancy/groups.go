// Package tenancy keeps the per-principal bounds the coordinators do not
// keep themselves (docs/DESIGN.md "Bounds").
package tenancy

import "sync"

// DefaultGroupsPerPrincipal is groups.max.per.principal.
const DefaultGroupsPerPrincipal = 1000

// Groups bounds the groups (classic, consumer and share) each principal
// creates. A group belongs to the principal whose request created it
// (its first JoinGroup, OffsetCommit or heartbeat); a principal may
// create at most max groups that still exist. Existence is the
// coordinators' (the exists function), asked of a principal's groups
// only when its count is at the bound: groups deleted or expired since
// are then forgotten. A check costs one lookup, or at the bound one per
// group the principal owns.
//
// Ownership is kept in memory: groups loaded after a restart have no
// owner. The principal "" (no authorizer, no tenants) has no bound.
// Safe for concurrent use.
type Groups struct {
	max int
	mu  sync.Mutex
	// owned is each principal's groups, created through Admit.
	owned map[string]map[string]struct{}
}

// NewGroups returns a bound of max groups per principal (0: the default).
func NewGroups(max int) *Groups {
	if max <= 0 {
		max = DefaultGroupsPerPrincipal
	}
	return &Groups{max: max, owned: map[string]map[string]struct{}{}}
}

// Admit reports whether principal may make a request naming group id: an
// existing group (exists(id)) always, a new one while principal owns
// fewer than max live groups, and then it becomes principal's. A request
// that is admitted and then fails leaves a claim that the next check at
// the bound drops, as the group does not exist.
func (g *Groups) Admit(principal, id string, exists func(string) bool) bool {
	if principal == "" || exists(id) {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	mine := g.owned[principal]
	if mine == nil {
		mine = map[string]struct{}{}
		g.owned[principal] = mine
	}
	if _, ok := mine[id]; ok {
		return true
	}
	if len(mine) >= g.max {
		for other := range mine {
			if !exists(other) {
				delete(mine, other)
			}
		}
		if len(mine) >= g.max {
			return false
		}
	}
	mine[id] = struct{}{}
	return true
}
