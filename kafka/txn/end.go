package txn

import (
	"errors"
	"fmt"
	"sync"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// EndTxn handles EndTxn v0–4 (v5+, transaction version 2, is not served).
// Kafka's endTransaction checks (X11), then the decision is written
// durably (PrepareCommit or PrepareAbort) and the transaction is completed
// before the answer (X13): markers on every partition, pending offsets
// moved or dropped with the Complete state in one batch. If a marker
// cannot be written the client is still answered (the decision is
// durable, as Kafka answers after PrepareCommit) and the background loop
// finishes the transaction; until then requests for it get
// CONCURRENT_TRANSACTIONS.
func (c *Coordinator) EndTxn(req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	resp := req.ResponseKind().(*kmsg.EndTxnResponse)
	resp.ErrorCode = fencedFor(c.endTxn(req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit), req.Version, 2)
	return resp
}

func (c *Coordinator) endTxn(id string, pid int64, epoch int16, commit bool) int16 {
	if id == "" {
		return errInvalidRequest
	}
	t := c.lookup(id)
	if t == nil {
		return errInvalidMapping
	}
	defer t.mu.Unlock()
	st := t.st
	switch {
	case st.ProducerID != pid:
		return errInvalidMapping
	case st.Epoch != epoch:
		return errFenced
	}
	switch st.State {
	case offsets.TxnOngoing:
	case offsets.TxnCompleteCommit:
		return retryAnswer(commit, true, errNone)
	case offsets.TxnCompleteAbort:
		return retryAnswer(commit, false, errNone)
	case offsets.TxnPrepareCommit:
		return retryAnswer(commit, true, errConcurrent)
	case offsets.TxnPrepareAbort:
		return retryAnswer(commit, false, errConcurrent)
	default: // Empty: nothing to end
		return errInvalidTxnState
	}
	next := st
	next.State, next.UpdateTime = offsets.TxnPrepareAbort, c.clock.Now()
	if commit {
		next.State = offsets.TxnPrepareCommit
	}
	if err := c.persist(t, next); err != nil {
		return errCoordinatorNA
	}
	if err := c.completeLocked(t); err != nil {
		c.log.Warn("txn-end-incomplete", zap.String("transactional-id", id), zap.Error(err))
	}
	return errNone
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
// (X13, X14): a marker on every partition, then, in one synced batch, the
// pending offsets of its groups moved (commit) or dropped (abort) with the
// Complete state. Markers are idempotent, so running it again after a
// crash or a failure is safe. On error t stays in its Prepare state.
func (c *Coordinator) completeLocked(t *txn) error {
	st := t.st
	commit := st.State == offsets.TxnPrepareCommit
	if !commit && st.State != offsets.TxnPrepareAbort {
		return fmt.Errorf("txn: complete %q in state %v", st.ID, st.State)
	}
	if err := c.writeMarkers(st, commit); err != nil {
		return err
	}
	done := st
	done.State, done.UpdateTime = offsets.TxnCompleteAbort, c.clock.Now()
	if commit {
		done.State = offsets.TxnCompleteCommit
	}
	done.Partitions, done.Groups = nil, nil
	if err := c.store.EndTxn(st.Groups, done, commit); err != nil {
		return err
	}
	c.setState(t, done)
	return nil
}

// maxMarkerWriters bounds the markers one transaction writes at once.
const maxMarkerWriters = 64

// writeMarkers writes the transaction's marker on every partition at once
// (their syncs share group commits). A partition that no longer exists
// needs none.
func (c *Coordinator) writeMarkers(st offsets.Txn, commit bool) error {
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
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
