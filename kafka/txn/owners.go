package txn

import "sync/atomic"

// Per-principal bounds (the transaction bounds). A transactional id belongs to the principal
// whose InitProducerId created it, and counts against that principal's
// MaxTransactionalIDsPerPrincipal; its partitions and groups count
// against the principal's MaxHeldEntriesPerPrincipal. Both are below the
// global bounds, so one principal filling its own share leaves room for
// every other principal's producers. The principal "" (no authorizer:
// there are no tenants) has no bound of its own.
//
// Ownership is kept in memory: ids recovered after a restart have no
// owner until their next InitProducerId, whose principal adopts them
// within its bound. An id another principal initializes (it too may
// WRITE the id) stays its creator's.

// usage is what one principal holds.
type usage struct {
	ids  int          // transactional ids owned; guarded by Coordinator.mu
	held atomic.Int64 // their partitions and groups
}

// ownerLocked returns principal's usage, nil for "". Needs c.mu.
func (c *Coordinator) ownerLocked(principal string) *usage {
	if principal == "" {
		return nil
	}
	u := c.mu.owners[principal]
	if u == nil {
		u = &usage{}
		c.mu.owners[principal] = u
	}
	return u
}

// adopt makes principal the owner of t, which has none (recovered after
// a restart) and which the caller holds locked; false when principal
// holds its MaxTransactionalIDsPerPrincipal already.
func (c *Coordinator) adopt(t *txn, principal string) bool {
	if t.owner != nil || principal == "" {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.ownerLocked(principal)
	if u.ids >= c.cfg.MaxTransactionalIDsPerPrincipal {
		return false
	}
	u.ids++
	u.held.Add(entries(t.st))
	t.owner = u
	return true
}

// disown takes t from its owner's count (t is being forgotten). Needs
// c.mu.
func (c *Coordinator) disownLocked(t *txn) {
	if u := t.owner; u != nil {
		u.ids--
		u.held.Add(-entries(t.st))
	}
}

// overOwnerHeld reports whether moving t to next would hold more than its
// owner's MaxHeldEntriesPerPrincipal (with the same slack as overHeld).
func (c *Coordinator) overOwnerHeld(t *txn, delta int64) bool {
	return t.owner != nil && t.owner.held.Load()+delta > int64(c.cfg.MaxHeldEntriesPerPrincipal)
}
