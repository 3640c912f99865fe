package txn

import (
	"github.com/kgateway/kgateway/offsets"
	"go.uber.org/zap"
)

// AbortTimedOut runs one pass of the timeout loop (the transaction timeout): every Ongoing
// transaction older than its transaction.timeout.ms is aborted with a
// bumped epoch, which fences its producer (its next request gets
// PRODUCER_FENCED, its batches INVALID_PRODUCER_EPOCH); and every
// transaction left in a Prepare state by a failed marker is completed
// again. It runs every
// transaction.abort.timed.out.transaction.cleanup.interval.ms; tests call
// it directly.
func (c *Coordinator) AbortTimedOut() {
	for _, t := range c.snapshot() {
		t.mu.Lock()
		if !t.dead {
			c.abortIfTimedOutLocked(t)
		}
		t.mu.Unlock()
	}
}

func (c *Coordinator) abortIfTimedOutLocked(t *txn) {
	st := t.st
	switch st.State {
	case offsets.TxnOngoing:
		now := c.clock.Now()
		if now.Sub(st.StartTime) < st.Timeout {
			return
		}
		c.log.Info("txn-timed-out", zap.String("transactional-id", st.ID), zap.Int64("producer-id", st.ProducerID),
			zap.Duration("timeout", st.Timeout))
		if err := c.persist(t, c.fenceTransition(st, now)); err != nil {
			return
		}
	case offsets.TxnPrepareCommit, offsets.TxnPrepareAbort:
	default:
		return
	}
	if err := c.completeLocked(t); err != nil {
		c.log.Warn("txn-complete-retry-failed", zap.String("transactional-id", st.ID), zap.Error(err))
	}
}

// RemoveExpired runs one pass of transactional.id.expiration.ms (the transaction timeout): a
// transactional id whose transaction is not running (Empty, CompleteCommit,
// CompleteAbort) and that has not changed for that long is removed. It
// runs every transaction.remove.expired.transaction.cleanup.interval.ms;
// tests call it directly.
func (c *Coordinator) RemoveExpired() {
	now := c.clock.Now()
	for _, t := range c.snapshot() {
		t.mu.Lock()
		st := t.st
		idle := st.State == offsets.TxnEmpty || st.State == offsets.TxnCompleteCommit || st.State == offsets.TxnCompleteAbort
		if !t.dead && idle && now.Sub(st.UpdateTime) >= c.cfg.IDExpiration {
			if err := c.store.DeleteTxn(st); err != nil {
				c.log.Warn("txn-expire-failed", zap.String("transactional-id", st.ID), zap.Error(err))
			} else {
				c.log.Info("txn-id-expired", zap.String("transactional-id", st.ID))
				c.dropOwner(t)
				c.forget(t)
			}
		}
		t.mu.Unlock()
	}
}
