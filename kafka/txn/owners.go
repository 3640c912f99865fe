package txn

import (
	"sync/atomic"

	"github.com/kgateway/kgateway/offsets"
	"go.uber.org/zap"
)

// Per-principal bounds (the transaction bounds). A transactional id belongs to the principal
// whose InitProducerId created it, and counts against that principal's
// MaxTransactionalIDsPerPrincipal; its partitions and groups count
// against the principal's MaxHeldEntriesPerPrincipal. Both are below the
// global bounds, so one principal filling its own share leaves room for
// every other principal's producers. The principal "" (no authorizer:
// there are no tenants) has no bound of its own.
//
// Ownership is durable: the owner of an id is recorded in the offsets
// store (offsets.PutOwner, mirrored to etcd in a cluster) before the id's
// first state is, and loaded with the ids, so an id another principal
// initializes (it too may WRITE the id) stays its creator's across
// restarts and coordinator changes. Only an id without a record (its
// record's write failed, or it was created before owners were recorded)
// is adopted by the principal of its next InitProducerId, within that
// principal's bound, and the adoption is recorded. An owner record whose
// id is gone (expired, or its first InitProducerId failed) is dropped at
// load.

// usage is what one principal holds.
type usage struct {
	principal string
	ids       int          // transactional ids owned; guarded by Coordinator.mu
	held      atomic.Int64 // their partitions and groups
}

// ownerLocked returns principal's usage, nil for "". Needs c.mu.
func (c *Coordinator) ownerLocked(principal string) *usage {
	if principal == "" {
		return nil
	}
	u := c.mu.owners[principal]
	if u == nil {
		u = &usage{principal: principal}
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

// loadOwner makes t, just loaded, count against its recorded owner.
// Before the coordinator serves: no lock needed.
func (c *Coordinator) loadOwner(t *txn, owners map[string]string) {
	p, ok := owners[t.id]
	if !ok || p == "" {
		return
	}
	delete(owners, t.id)
	u := c.ownerLocked(p)
	u.ids++
	u.held.Add(entries(t.st))
	t.owner, t.ownerStored = u, true
}

// dropStaleOwners deletes the owner records of ids that were not loaded.
func (c *Coordinator) dropStaleOwners(owners map[string]string) {
	stale := make([]string, 0, len(owners))
	for id := range owners {
		stale = append(stale, id)
	}
	if err := c.store.DeleteOwners(offsets.OwnerTxn, stale...); err != nil {
		c.log.Warn("txn-stale-owners-not-dropped", zap.Int("ids", len(stale)), zap.Error(err))
	}
}

// storeOwner records t's owner, which the caller holds locked, if it has
// one not yet recorded: before t's first state is written, so that an id
// that exists has its owner's record (a failure leaves the id to be
// adopted after a restart, as before owners were recorded).
func (c *Coordinator) storeOwner(t *txn) {
	if t.owner == nil || t.ownerStored {
		return
	}
	if err := c.store.PutOwner(offsets.OwnerTxn, t.id, t.owner.principal); err != nil {
		c.log.Warn("txn-owner-not-stored", zap.String("transactional-id", t.id), zap.Error(err))
		return
	}
	t.ownerStored = true
}

// dropOwner deletes the owner record of t, which is being forgotten.
func (c *Coordinator) dropOwner(t *txn) {
	if !t.ownerStored {
		return
	}
	if err := c.store.DeleteOwners(offsets.OwnerTxn, t.id); err != nil {
		c.log.Warn("txn-owner-not-dropped", zap.String("transactional-id", t.id), zap.Error(err))
	}
}
