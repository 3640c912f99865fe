package resolver

// The partition side of its transaction state: the state itself, its
// checks and its durable encoding are package txnstate's.

// openTxn adds an open transaction starting at first to the read view
// (the LSO). Needs app.
func (p *partition) openTxn(first Offset, pid int64) {
	p.mu.Lock()
	p.mu.txn.AddOpen(first, pid)
	p.changes.Add(1)
	p.mu.Unlock()
}

// closeTxn removes the open transaction starting at first from the read
// view. Needs app.
func (p *partition) closeTxn(first Offset) {
	p.mu.Lock()
	p.mu.txn.RemoveOpen(first)
	p.changes.Add(1)
	p.mu.Unlock()
}

// pruneAborted drops the aborted-index entries whose marker is below the
// log start (the aborted-transaction index): the read view at once, their keys at the next
// checkpoint, which it makes due.
func (st *stateStore) pruneAborted(p *partition, start Offset) {
	p.app.Lock()
	if p.app.txn == nil {
		p.app.Unlock()
		return
	}
	p.mu.Lock()
	gone := p.mu.txn.PruneBelow(start)
	p.changes.Add(1)
	p.mu.Unlock()
	for _, a := range gone {
		p.app.txn.ForgetAborted(a.Last)
	}
	if len(gone) > 0 {
		p.app.unckpt = max(p.app.unckpt, checkpointEvery)
	}
	p.app.Unlock()
	if len(gone) > 0 {
		st.maybeCheckpoint(p)
	}
}
