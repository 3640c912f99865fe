// Package tenancy keeps the per-principal bounds the coordinators do not
// keep themselves (docs/DESIGN.md "Bounds").
package tenancy

import (
	"sync"

	"github.com/kgateway/kgateway/offsets"
)

// DefaultGroupsPerPrincipal is groups.max.per.principal.
const DefaultGroupsPerPrincipal = 1000

// OwnerStore keeps owner records durably (the offsets store: in a
// cluster, the coordinator's, mirrored to etcd).
type OwnerStore interface {
	PutOwner(kind byte, id, principal string) error
	DeleteOwners(kind byte, ids ...string) error
	Owners(kind byte) (map[string]string, error)
}

// Groups bounds the groups (classic, consumer and share) each principal
// creates. A group belongs to the principal whose request created it
// (its first JoinGroup, OffsetCommit or heartbeat); a principal may
// create at most max groups that still exist. Existence is the
// coordinators' (the exists function), asked of a principal's groups
// only when its count is at the bound: groups deleted or expired since
// are then forgotten. A check costs one lookup, or at the bound one per
// group the principal owns.
//
// Ownership is durable once a store is attached (Load): a claim is
// recorded (offsets.OwnerGroup) before the request that makes the group
// runs, and forgetting a claim deletes its record, so a restart, or a
// new coordinator in a cluster, knows every principal's groups. A claim
// whose record could not be written is kept in memory only. The
// principal "" (no authorizer, no tenants) has no bound. Safe for
// concurrent use.
type Groups struct {
	max int
	mu  sync.Mutex
	// owned is each principal's groups, created through Admit.
	owned map[string]map[string]struct{}
	store OwnerStore // nil: in memory only
}

// NewGroups returns a bound of max groups per principal (0: the default),
// in memory until Load attaches a store.
func NewGroups(max int) *Groups {
	if max <= 0 {
		max = DefaultGroupsPerPrincipal
	}
	return &Groups{max: max, owned: map[string]map[string]struct{}{}}
}

// Load replaces the claims with the ones recorded in store, which from
// now on records every change (nil: none, claims are dropped). Called
// when the offsets store is opened or swapped.
func (g *Groups) Load(store OwnerStore) error {
	owned := map[string]map[string]struct{}{}
	if store != nil {
		owners, err := store.Owners(offsets.OwnerGroup)
		if err != nil {
			return err
		}
		for id, p := range owners {
			if owned[p] == nil {
				owned[p] = map[string]struct{}{}
			}
			owned[p][id] = struct{}{}
		}
	}
	g.mu.Lock()
	g.owned, g.store = owned, store
	g.mu.Unlock()
	return nil
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
		var gone []string
		for other := range mine {
			if !exists(other) {
				delete(mine, other)
				gone = append(gone, other)
			}
		}
		if g.store != nil && len(gone) > 0 {
			_ = g.store.DeleteOwners(offsets.OwnerGroup, gone...) // a record left is dropped at the next check
		}
		if len(mine) >= g.max {
			return false
		}
	}
	mine[id] = struct{}{}
	if g.store != nil {
		_ = g.store.PutOwner(offsets.OwnerGroup, id, principal) // failed: the claim is in memory only
	}
	return true
}
