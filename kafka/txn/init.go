package txn

import (
	"context"
	"math"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// noEpoch is RecordBatch.NO_PRODUCER_EPOCH; noPID NO_PRODUCER_ID.
const (
	noEpoch int16 = -1
	noPID   int64 = -1
)

// epochExhausted is Kafka's TransactionMetadata.isEpochExhausted: the
// last epoch is kept for the fencing bump, so the id rotates one early.
func epochExhausted(e int16) bool { return e >= math.MaxInt16-1 }

// InitProducerID handles InitProducerId v0–4 with a transactional id (the
// idempotent-only form is the resolver's). Kafka's TransactionCoordinator
// handleInitProducerId (Kafka's transaction errors, the InitProducerId bump):
//   - a new id gets a fresh producer id at epoch 0;
//   - otherwise the epoch is bumped, fencing the previous incarnation; an
//     exhausted epoch rotates to a fresh producer id;
//   - an Ongoing transaction is aborted first, with a bumped epoch that is
//     never returned, and the client is told CONCURRENT_TRANSACTIONS so it
//     retries and gets a second bump;
//   - v3+ (KIP-360) a client passing its current id and epoch gets the
//     bump only if they are still current (or its retry of the last bump);
//     anything else is PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before v4).
//
// principal is the caller's, which a new id counts against (owners.go; ""
// for none).
func (c *Coordinator) InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest, principal string) *kmsg.InitProducerIDResponse {
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID, resp.ProducerEpoch = noPID, noEpoch
	code := c.initProducerID(ctx, req, principal, resp)
	resp.ErrorCode = fencedFor(code, req.Version, 4)
	if code != errNone {
		resp.ProducerID, resp.ProducerEpoch = noPID, noEpoch
	}
	return resp
}

func (c *Coordinator) initProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest, principal string, resp *kmsg.InitProducerIDResponse) int16 {
	id := *req.TransactionalID
	if id == "" || len(id) > maxIDLen {
		return errInvalidRequest
	}
	timeout := time.Duration(req.TransactionTimeoutMillis) * time.Millisecond
	if req.TransactionTimeoutMillis <= 0 || timeout > c.cfg.MaxTimeout {
		return errInvalidTimeout
	}
	expect, code := expectedProducer(req)
	if code != errNone {
		return code
	}
	if c.closing.Load() {
		return errCoordinatorNA
	}
	t := c.lookup(id)
	if t == nil {
		if t = c.create(id, principal); t == nil {
			return errPolicy // The transaction bounds: MaxTransactionalIDs kept, overall or by principal
		}
	}
	defer t.mu.Unlock()
	if !c.adopt(t, principal) {
		return errPolicy // The transaction bounds: a recovered id beyond principal's bound
	}
	c.storeOwner(t)
	if t.st.ProducerID == noPID {
		pid, err := c.parts.AllocateProducerID(ctx)
		if err != nil {
			c.log.Warn("txn-allocate-producer-id-failed", zap.String("transactional-id", id), zap.Error(err))
			c.forget(t)
			return errCoordinatorNA
		}
		t.st.ProducerID = pid // not durable yet: the transition below writes it
	}
	next, code := c.initTransition(ctx, t, expect, timeout)
	if code != errNone {
		c.dropIfNew(t)
		return code
	}
	if err := c.persist(t, next); err != nil {
		c.dropIfNew(t)
		return errCoordinatorNA
	}
	if next.State == offsets.TxnPrepareAbort {
		// The fencing abort of an Ongoing transaction (the InitProducerId bump).
		if err := c.completeLocked(t); err != nil {
			c.log.Warn("txn-fence-abort-incomplete", zap.String("transactional-id", id), zap.Error(err))
		}
		return errConcurrent
	}
	resp.ProducerID, resp.ProducerEpoch = next.ProducerID, next.Epoch
	return errNone
}

// dropIfNew forgets a transactional id whose first InitProducerId failed:
// nothing of it was written.
func (c *Coordinator) dropIfNew(t *txn) {
	if t.st.Epoch == noEpoch && t.st.State == offsets.TxnEmpty {
		c.forget(t)
	}
}

// producerRef is a producer id and epoch a client names (KIP-360).
type producerRef struct {
	pid   int64
	epoch int16
}

// expectedProducer is KafkaApis' reading of the v3+ fields: both -1 is
// none, one of them -1 is INVALID_REQUEST.
func expectedProducer(req *kmsg.InitProducerIDRequest) (*producerRef, int16) {
	if req.Version < 3 || req.ProducerID == noPID && req.ProducerEpoch == noEpoch {
		return nil, errNone
	}
	if req.ProducerID == noPID || req.ProducerEpoch == noEpoch {
		return nil, errInvalidRequest
	}
	return &producerRef{req.ProducerID, req.ProducerEpoch}, errNone
}

// initTransition is Kafka's prepareInitProducerIdTransit: the state t moves
// to, or the error.
func (c *Coordinator) initTransition(ctx context.Context, t *txn, expect *producerRef, timeout time.Duration) (offsets.Txn, int16) {
	st := t.st
	if expect != nil && !(st.Epoch == noEpoch || expect.pid == st.ProducerID ||
		expect.pid == st.LastProducerID && epochExhausted(expect.epoch)) {
		return st, errFenced
	}
	now := c.clock.Now()
	switch st.State {
	case offsets.TxnPrepareCommit, offsets.TxnPrepareAbort:
		return st, errConcurrent // markers still being written; retry
	case offsets.TxnOngoing:
		return selfFence(st, c.fenceTransition(st, now), expect), errNone
	case offsets.TxnEmpty, offsets.TxnCompleteCommit, offsets.TxnCompleteAbort:
	default:
		return st, errUnknownServer
	}
	if epochExhausted(st.Epoch) && (expect == nil || expect.epoch == st.Epoch) {
		pid, err := c.parts.AllocateProducerID(ctx)
		if err != nil {
			return st, errCoordinatorNA
		}
		next := st
		next.LastProducerID, next.ProducerID, next.Epoch, next.LastEpoch = st.ProducerID, pid, 0, noEpoch
		if expect != nil {
			next.LastEpoch = st.Epoch
		}
		return emptied(next, timeout, now), errNone
	}
	next := st
	switch {
	case expect == nil:
		next.Epoch, next.LastEpoch = st.Epoch+1, noEpoch
	case st.Epoch == noEpoch || expect.epoch == st.Epoch:
		next.Epoch, next.LastEpoch = st.Epoch+1, st.Epoch
	case expect.epoch == st.LastEpoch:
		// A retry of the last bump whose answer was lost: same answer.
	default:
		return st, errFenced
	}
	return emptied(next, timeout, now), errNone
}

// fenceTransition aborts an Ongoing transaction with a bumped epoch, so
// its producer is fenced on every partition by the abort markers
// (Kafka's prepareFenceProducerEpoch followed by the abort).
func (c *Coordinator) fenceTransition(st offsets.Txn, now time.Time) offsets.Txn {
	next := st
	if st.Epoch < math.MaxInt16 {
		next.Epoch = st.Epoch + 1
	}
	next.LastEpoch, next.NextProducerID = noEpoch, noPID
	next.State, next.UpdateTime = offsets.TxnPrepareAbort, now
	return next
}

// selfFence marks a fencing abort (next, from st) that the transaction's
// own producer asked for: a KIP-360 InitProducerId naming the current
// producer id and epoch while its transaction is Ongoing, as a client
// sends to recover when it does not know how its transaction ended (a
// request lost while the coordinator moved, the InitProducerId bump). Its retry still names
// the epoch it had; without a trace of whom the bump was for it would be
// PRODUCER_FENCED, which no client retries past. The epoch fenced from is
// kept as LastEpoch, so the retry is the "retry of the last bump"
// initTransition answers with the bumped epoch, and the producer
// continues there, after the abort markers carrying that epoch (as a
// version-2 abort leaves it). Apache Kafka 4.4 answers the same:
// CONCURRENT_TRANSACTIONS while the abort completes, then NONE with the
// epoch one up, as often as it is asked. Anyone else (no id and epoch, a
// stale epoch, the timeout loop) fences as before.
func selfFence(st, next offsets.Txn, expect *producerRef) offsets.Txn {
	if expect != nil && expect.pid == st.ProducerID && expect.epoch == st.Epoch && next.Epoch != st.Epoch {
		next.LastEpoch = st.Epoch
	}
	return next
}

// emptied is st as a fresh Empty transaction with the given timeout.
func emptied(st offsets.Txn, timeout time.Duration, now time.Time) offsets.Txn {
	st.State, st.Timeout = offsets.TxnEmpty, timeout
	st.Partitions, st.Groups = nil, nil
	st.StartTime, st.UpdateTime = time.Time{}, now
	return st
}
