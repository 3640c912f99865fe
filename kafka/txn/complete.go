package txn

import "go.uber.org/zap"

// Answer once decided: EndTxn answers once the decision (PrepareCommit or
// PrepareAbort) is durable, as Apache Kafka's endTransaction answers
// once the Prepare state is in the transaction log and sends the markers
// after. The markers and then the Complete state, with the transaction's
// pending offsets moved (commit) or dropped (abort) in its batch (offsets
// O6), are written after the answer, by a goroutine that holds the
// transactional id's lock until they are durable (or failed). Every later
// request of the id, and every add of its next transaction
// (AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit v5+, a Produce
// v12+ implicit add, here or from another node's leader through the
// relay), takes that lock first: it waits, and then finds the transaction
// complete, or, if a marker or the Complete write failed, its Prepare
// state and answers CONCURRENT_TRANSACTIONS until the timeout loop or a
// restart finishes it. So no partition registers the id's next
// transaction before the previous transaction's marker is durable there:
// a marker never ends a batch of the next transaction. What the answer
// promises holds whatever happens after it: the decision is in the store,
// and a crash or a coordinator change completes it from there (completion
// at open), offsets included.
//
// A transaction's offsets are therefore still pending for a moment after
// a commit's answer, as Kafka's are until the marker on __consumer_offsets
// is written: an OffsetFetch with require_stable (the Java consumer
// always, franz-go with RequireStableFetchOffsets) answers
// UNSTABLE_OFFSET_COMMIT for them until they are committed, and the
// client retries; one without it reads the offset committed before
// (offsets O5, O7).

// endLocked completes t, in PrepareCommit or PrepareAbort, for EndTxn. It
// reports whether it handed t's lock to a background completion, which
// unlocks it; otherwise t is still locked by the caller and complete (or
// left in its Prepare state by a failure).
func (c *Coordinator) endLocked(t *txn) (handedOff bool) {
	if !c.background(func() { defer t.mu.Unlock(); c.endCompleteLocked(t) }) {
		c.endCompleteLocked(t)
		return false
	}
	return true
}

// endCompleteLocked writes the markers of t's decision and its Complete
// state with its offsets; a failure leaves the Prepare state (the offsets
// pending), finished by the timeout loop or at open.
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
