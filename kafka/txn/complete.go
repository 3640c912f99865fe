package txn

import "go.uber.org/zap"

// Answer once decided: EndTxn answers once the decision (PrepareCommit or
// PrepareAbort) is durable, as Apache Kafka's endTransaction answers
// once the Prepare state is in the transaction log and sends the markers
// after. The markers and then the Complete state of a transaction that
// carries no offsets are written after the answer, by a goroutine that
// holds the transactional id's lock until both are durable (or failed).
// Every later request of the id, and every add of its next transaction
// (AddPartitionsToTxn, AddOffsetsToTxn, a Produce v12+ implicit add, here
// or from another node's leader through the relay), takes that lock
// first: it waits, and then finds the transaction complete, or, if a
// marker or the Complete write failed, its Prepare state and answers
// CONCURRENT_TRANSACTIONS until the timeout loop or a restart finishes
// it. So no partition registers the id's next transaction before the
// previous transaction's marker is durable there: a marker never ends a
// batch of the next transaction. What the answer promises holds whatever
// happens after it: the decision is in the store, and a crash or a
// coordinator change completes it from there (completion at open).
//
// A transaction with offsets (AddOffsetsToTxn) is completed before the
// answer, so that its offsets are committed (offsets O6) by the time the
// client hears it, for an OffsetFetch that does not ask for stable
// offsets as for one that does.

// endLocked completes t, in PrepareCommit or PrepareAbort, for EndTxn. It
// reports whether it handed t's lock to a background completion, which
// unlocks it; otherwise t is still locked by the caller and complete (or
// left in its Prepare state by a failure).
func (c *Coordinator) endLocked(t *txn) (handedOff bool) {
	if len(t.st.Groups) > 0 || !c.background(func() { defer t.mu.Unlock(); c.endCompleteLocked(t) }) {
		c.endCompleteLocked(t)
		return false
	}
	return true
}

// endCompleteLocked writes the markers of t's decision and its Complete
// state; a failure leaves the Prepare state, finished by the timeout loop
// or at open.
func (c *Coordinator) endCompleteLocked(t *txn) {
	if err := c.completeLocked(t); err != nil {
		c.log.Warn("txn-end-incomplete", zap.String("transactional-id", t.id), zap.Error(err))
	}
}

// background runs f on a goroutine that Close waits for; false (f not
// run) once the coordinator is closing.
func (c *Coordinator) background(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return false
	}
	c.mu.backgroundWG.Add(1)
	go func() {
		defer c.mu.backgroundWG.Done()
		f()
	}()
	return true
}
