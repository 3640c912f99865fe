package txn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// EndTxn handles EndTxn v0–5. Kafka's endTransaction checks (Kafka's
// transaction errors), then the decision is written durably
// (PrepareCommit or PrepareAbort) and answered at once (answer once
// decided): the markers on every partition and then the Complete state,
// with the transaction's pending offsets moved or dropped in its batch,
// follow under the transactional id's lock, so the id's next request
// waits for them. If a marker cannot be written the
// client is answered all the same (the decision is durable, as Kafka
// answers after PrepareCommit) and the background loop finishes the
// transaction; until then requests for it get CONCURRENT_TRANSACTIONS. At
// v5+ the epoch is bumped and returned (the epoch bump at EndTxn),
// whatever way the transaction was started (a transaction's version).
func (c *Coordinator) EndTxn(req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	pid, epoch, code := c.endTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit, req.Version >= 5)
	resp.ErrorCode = fencedFor(code, req.Version, 2)
	resp.ProducerID, resp.ProducerEpoch = noPID, noEpoch
	if code == errNone && req.Version >= 5 {
		resp.ProducerID, resp.ProducerEpoch = pid, epoch
	}
	return resp
}

// endTxn ends id's transaction; v5 is an EndTxn of version 5 or later
// (the client runs transaction version 2). The request's version, not the
// transaction's, picks the rules, as Kafka's endTransaction does: at v5 the
// epoch is bumped even if the transaction was started the version-1 way
// (AddPartitionsToTxn v3). It returns the producer id and epoch the client
// continues with.
func (c *Coordinator) endTxn(id string, pid int64, epoch int16, commit, v5 bool) (int64, int16, int16) {
	if id == "" {
		return noPID, noEpoch, errInvalidRequest
	}
	t := c.lookup(id)
	if t == nil {
		return noPID, noEpoch, errInvalidMapping
	}
	handedOff := false // the lock went to the completion (answer once decided)
	defer func() {
		if !handedOff {
			t.mu.Unlock()
		}
	}()
	st := t.st
	if v5 && isBumpRetry(st, pid, epoch) {
		// EndTxn retries across the bump: a retry whose answer was lost, with the epoch before
		// this transaction's bump: the same answer again.
		np, ne := clientProducer(st)
		return np, ne, decidedAnswer(st.State, commit, true)
	}
	switch {
	case st.ProducerID != pid:
		return noPID, noEpoch, errInvalidMapping
	case st.Epoch != epoch:
		return noPID, noEpoch, errFenced
	}
	bump := false
	switch st.State {
	case offsets.TxnOngoing:
		if version(st) == tv2 && !v5 {
			return noPID, noEpoch, errInvalidTxnState // A transaction's version: a version-2 transaction ends by v5+
		}
		bump = v5
	case offsets.TxnEmpty, offsets.TxnCompleteCommit, offsets.TxnCompleteAbort:
		if v5 && commit {
			// Not a retry (that names the epoch before the bump): a
			// commit with nothing running (EndTxn retries across the bump).
			return noPID, noEpoch, errInvalidTxnState
		}
		if !v5 || commit {
			return st.ProducerID, st.Epoch, decidedAnswer(st.State, commit, false)
		}
		bump = true // The epoch bump at EndTxn: a version-2 abort with nothing running bumps the epoch
	default: // PrepareCommit, PrepareAbort
		if v5 {
			return noPID, noEpoch, errConcurrent
		}
		return noPID, noEpoch, decidedAnswer(st.State, commit, false)
	}
	next, code := c.decide(st, commit, bump)
	if code != errNone {
		return noPID, noEpoch, code
	}
	if err := c.persist(t, next); err != nil {
		return noPID, noEpoch, errCoordinatorNA
	}
	c.decidePartitions(st)
	handedOff = c.endLocked(t)
	np, ne := clientProducer(next)
	return np, ne, errNone
}

// decidePartitions tells every partition of st, an Ongoing transaction
// just decided, of the decision before EndTxn answers (Decider), so no
// batch sent after the answer starts the transaction on a partition where
// it has none yet. A partition that fails keeps taking first batches
// until its marker, as before; the marker ends them with the transaction.
func (c *Coordinator) decidePartitions(st offsets.Txn) {
	d, ok := c.parts.(Decider)
	if !ok || st.State != offsets.TxnOngoing {
		return
	}
	for _, tp := range st.Partitions {
		if err := d.DecideTxnPartition(tp.Topic, tp.Partition, st.ProducerID, st.Epoch); err != nil {
			c.log.Debug("txn-decide-partition-failed", zap.String("transactional-id", st.ID),
				zap.Stringer("partition", tp), zap.Error(err))
		}
	}
}

// decide is st in PrepareCommit or PrepareAbort. With bump (transaction
// version 2, the epoch bump at EndTxn) the epoch is bumped, so the markers are written with an
// epoch newer than the transaction's batches and fence them; when the
// bumped epoch is exhausted a fresh producer id is allocated now and kept
// in the Prepare state, for the client to continue with.
func (c *Coordinator) decide(st offsets.Txn, commit, bump bool) (offsets.Txn, int16) {
	next := st
	next.State, next.UpdateTime = offsets.TxnPrepareAbort, c.clock.Now()
	if commit {
		next.State = offsets.TxnPrepareCommit
	}
	next.NextProducerID = noPID
	if !bump {
		return next, errNone
	}
	if st.Epoch >= math.MaxInt16 {
		return st, errInvalidTxnState // never handed out: InitProducerId rotates first
	}
	next.Version, next.Epoch, next.LastEpoch = tv2, st.Epoch+1, st.Epoch
	if st.State != offsets.TxnOngoing {
		next.Partitions, next.Groups = nil, nil
	}
	if epochExhausted(next.Epoch) {
		npid, err := c.parts.AllocateProducerID(context.Background())
		if err != nil {
			c.log.Warn("txn-allocate-producer-id-failed", zap.String("transactional-id", st.ID), zap.Error(err))
			return st, errCoordinatorNA
		}
		next.NextProducerID = npid
	}
	return next, errNone
}

// isBumpRetry tells whether (pid, epoch) is the producer a version-2
// EndTxn bumped from: the same producer id one epoch back, or, after a
// rotation, the previous producer id at its last epoch.
func isBumpRetry(st offsets.Txn, pid int64, epoch int16) bool {
	if st.LastEpoch == noEpoch || epoch != st.LastEpoch {
		return false
	}
	switch st.State {
	case offsets.TxnPrepareCommit, offsets.TxnPrepareAbort:
		return pid == st.ProducerID && st.Epoch == epoch+1
	case offsets.TxnCompleteCommit, offsets.TxnCompleteAbort:
		return pid == st.ProducerID && st.Epoch == epoch+1 ||
			pid == st.LastProducerID && pid != st.ProducerID && st.Epoch == 0
	}
	return false
}

// clientProducer is the producer id and epoch the client continues with
// after st: the pending rotation's fresh id at epoch 0, or st's own.
func clientProducer(st offsets.Txn) (int64, int16) {
	if st.NextProducerID >= 0 && (st.State == offsets.TxnPrepareCommit || st.State == offsets.TxnPrepareAbort) {
		return st.NextProducerID, 0
	}
	return st.ProducerID, st.Epoch
}

// decidedAnswer is Kafka's answer to an EndTxn for a transaction already
// decided (or never started, Empty): the same decision is a retry,
// answered NONE when complete and CONCURRENT_TRANSACTIONS while being
// completed; the other decision, or nothing to end, is INVALID_TXN_STATE.
// retrying says the request is a version-2 retry (EndTxn retries across the bump).
func decidedAnswer(state offsets.TxnState, commit, retrying bool) int16 {
	switch state {
	case offsets.TxnCompleteCommit:
		return retryAnswer(commit, true, errNone)
	case offsets.TxnCompleteAbort:
		return retryAnswer(commit, false, errNone)
	case offsets.TxnPrepareCommit:
		return retryAnswer(commit, true, errConcurrent)
	case offsets.TxnPrepareAbort:
		return retryAnswer(commit, false, errConcurrent)
	}
	if retrying {
		return errFenced
	}
	return errInvalidTxnState
}

// retryAnswer is Kafka's answer to an EndTxn for a transaction already
// decided: the same decision is a retry (answer), the other one is
// INVALID_TXN_STATE.
func retryAnswer(commit, decidedCommit bool, answer int16) int16 {
	if commit != decidedCommit {
		return errInvalidTxnState
	}
	return answer
}

// completeLocked finishes a transaction in PrepareCommit or PrepareAbort
// (durable partition adds, completion at open): a marker on every partition, then, in one synced batch, the
// pending offsets of its groups moved (commit) or dropped (abort) with the
// Complete state. Markers are idempotent, so running it again after a
// crash or a failure is safe. On error t stays in its Prepare state.
func (c *Coordinator) completeLocked(t *txn) error {
	t.adds.setCompleting(true) // waiting for a completion: the id's adds are told
	defer t.adds.setCompleting(false)
	if err := c.markLocked(t); err != nil {
		return err
	}
	return c.finishLocked(t)
}

// markLocked writes the marker of a transaction in PrepareCommit or
// PrepareAbort on every partition; nil once every one is durable.
func (c *Coordinator) markLocked(t *txn) error {
	st := t.st
	commit := st.State == offsets.TxnPrepareCommit
	if !commit && st.State != offsets.TxnPrepareAbort {
		return fmt.Errorf("txn: complete %q in state %v", st.ID, st.State)
	}
	if pending, err := c.writeMarkers(st, commit); err != nil {
		// As Kafka removes a partition from the transaction once its
		// marker is written, DescribeTransactions of the Prepare state
		// lists only the partitions still waiting for theirs. In memory
		// only: the record keeps all, and markers are idempotent.
		t.st.Partitions = pending
		return err
	}
	// None waits any more: the transaction gives its partitions' share of
	// the transaction bounds back now, before its Complete state is
	// written.
	marked := t.st
	marked.Partitions = nil
	c.setState(t, marked)
	return nil
}

// finishLocked writes the Complete state of a transaction whose markers
// are all durable, in one synced batch with its pending offsets moved
// (commit) or dropped (abort). On error t stays in its Prepare state.
func (c *Coordinator) finishLocked(t *txn) error {
	st := t.st
	commit := st.State == offsets.TxnPrepareCommit
	done := st
	done.State, done.UpdateTime = offsets.TxnCompleteAbort, c.clock.Now()
	if commit {
		done.State = offsets.TxnCompleteCommit
	}
	done.Partitions, done.Groups = nil, nil
	if st.NextProducerID >= 0 {
		// The epoch bump at EndTxn: the bumped epoch is exhausted; the client continues
		// with the producer id allocated at the decision.
		done.LastProducerID, done.ProducerID, done.Epoch = st.ProducerID, st.NextProducerID, 0
	}
	done.NextProducerID = noPID
	if err := c.store.EndTxn(st.Groups, done, commit); err != nil {
		return err
	}
	c.setState(t, done)
	return nil
}

// maxMarkerWriters bounds the markers one transaction writes at once.
const maxMarkerWriters = 64

// errClosing: the coordinator closed while markers were being written.
var errClosing = errors.New("txn: coordinator closing")

// writeMarkers is writeMarkersNow, given up when the coordinator closes
// (a prompt Close): every partition is then pending, and the markers
// still being written finish on their own; whatever they leave unwritten
// is written again at the next open (completion at open), markers being
// idempotent.
func (c *Coordinator) writeMarkers(st offsets.Txn, commit bool) (pending []offsets.TopicPartition, err error) {
	type result struct {
		pending []offsets.TopicPartition
		err     error
	}
	done := make(chan result, 1)
	go func() {
		p, err := c.writeMarkersNow(st, commit)
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		return r.pending, r.err
	case <-c.stop:
		return st.Partitions, errClosing
	}
}

// writeMarkersNow writes the transaction's marker on every partition at once
// (their syncs share group commits; a MarkerBatcher gets them in one
// call). A partition that no longer exists needs none. pending lists the
// partitions whose marker failed.
func (c *Coordinator) writeMarkersNow(st offsets.Txn, commit bool) (pending []offsets.TopicPartition, err error) {
	if b, ok := c.parts.(MarkerBatcher); ok {
		var errs []error
		for i, err := range b.WriteTxnMarkers(st.ProducerID, st.Epoch, commit, coordinatorEpoch, st.Partitions) {
			if tp := st.Partitions[i]; err != nil && c.cfg.Topics.PartitionExists(tp.Topic, tp.Partition) {
				errs = append(errs, fmt.Errorf("marker on %s: %w", tp, err))
				pending = append(pending, tp)
			}
		}
		return pending, errors.Join(errs...)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, maxMarkerWriters)
	)
	for _, tp := range st.Partitions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			err := c.parts.WriteTxnMarker(tp.Topic, tp.Partition, st.ProducerID, st.Epoch, commit, coordinatorEpoch)
			if err != nil && c.cfg.Topics.PartitionExists(tp.Topic, tp.Partition) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("marker on %s: %w", tp, err))
				pending = append(pending, tp)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return pending, errors.Join(errs...)
}
