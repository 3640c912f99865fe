package txn

import "go.uber.org/zap"

// Completion after the markers: EndTxn answers once the decision and
// every marker are durable; the Complete state of a transaction that
// carries no offsets is written after the answer, by a goroutine that
// holds the transactional id's lock until it is durable, so every later
// request of the id still finds the transaction complete (or its
// Prepare state, if the write failed: the timeout loop finishes it then,
// as after a failed marker). What the answer promises holds either way:
// the decision is in the store, and every partition's marker is durable
// and readable. A transaction with offsets (AddOffsetsToTxn) is
// completed before the answer, so that its offsets are committed
// (offsets O6) by the time the client hears it, for an OffsetFetch that
// does not ask for stable offsets as for one that does.

// endLocked completes t, in PrepareCommit or PrepareAbort, for EndTxn. It
// reports whether it handed t's lock to a background completion, which
// unlocks it; otherwise t is still locked by the caller.
func (c *Coordinator) endLocked(t *txn) (handedOff bool) {
	if err := c.markLocked(t); err != nil {
		c.log.Warn("txn-end-incomplete", zap.String("transactional-id", t.id), zap.Error(err))
		return false
	}
	finish := func() {
		if err := c.finishLocked(t); err != nil {
			c.log.Warn("txn-end-incomplete", zap.String("transactional-id", t.id), zap.Error(err))
		}
	}
	if len(t.st.Groups) > 0 || !c.background(func() { defer t.mu.Unlock(); finish() }) {
		finish()
		return false
	}
	return true
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
