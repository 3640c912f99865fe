package resolver

import (
	"context"
	"errors"
)

// Transactions, the partition side (doc.go "Transactions", X1–X9).

// ErrInvalidTxnState: a transactional batch for a partition that is not in
// its producer's ongoing transaction (KIP-890 part 1), mapped to
// INVALID_TXN_STATE in kafka/errors.go.
var ErrInvalidTxnState = errors.New("resolver: invalid transaction state")

// AbortedTxn is one aborted transaction of a partition (Kafka's
// AbortedTransactions in a Fetch response).
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset Offset
}

// ProducerState is one producer of a partition (DescribeProducers).
type ProducerState struct {
	ProducerID       int64
	Epoch            int16
	LastSequence     int32
	LastTimestamp    int64
	CoordinatorEpoch int32
	TxnStartOffset   Offset // -1 without an open transaction
}

// AllocateProducerID hands out a fresh producer id (epoch 0), durably
// (the counter behind InitProducerID(ctx, -1, -1)).
func (r *Resolver) AllocateProducerID(ctx context.Context) (int64, error) {
	id, _, err := r.InitProducerID(ctx, -1, -1)
	return id, err
}

// errTxnPending marks the contract entry points whose behaviour is not
// built yet.
var errTxnPending = errors.New("resolver: transactions are not built yet")

// AddTxnPartition lets producer (pid, epoch) write transactional batches to
// the partition until a marker for it is written. In memory only: after a
// restart the coordinator calls it again for every partition of every
// Ongoing transaction before it serves requests. A newer epoch fences older
// ones on the partition (their batches get ErrInvalidProducerEpoch).
func (r *Resolver) AddTxnPartition(topic string, partition int32, pid int64, epoch int16) error {
	return errTxnPending
}

// WriteTxnMarker appends a COMMIT (commit=true) or ABORT control batch for
// (pid, epoch) to the partition and returns once it is durable. It ends
// pid's transaction there: the LSO moves past it, and an abort is recorded
// in the partition's aborted-transaction index. Idempotent: when pid has no
// open transaction on the partition and no registration, nothing is
// written and nil is returned (recovery re-sends markers). A marker's
// epoch may be newer than the producer's batches (an abort that fences):
// the partition's producer epoch becomes the marker's.
func (r *Resolver) WriteTxnMarker(topic string, partition int32, pid int64, epoch int16, commit bool, coordinatorEpoch int32) error {
	return errTxnPending
}

// Producers lists the partition's producers (DescribeProducers).
func (r *Resolver) Producers(topic string, partition int32) ([]ProducerState, error) {
	return nil, errTxnPending
}
