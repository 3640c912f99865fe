package resolver

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/kgateway/kgateway/recordbatch"
	"github.com/kgateway/kgateway/resolver/txnstate"
	"github.com/kgateway/kgateway/storage"
)

// Transactions, the partition side (doc.go "Transactions"; the partition's transaction rules are txnstate/doc.go's).

// ErrInvalidTxnState: a transactional batch for a partition that is not in
// its producer's ongoing transaction (KIP-890 part 1), mapped to
// INVALID_TXN_STATE in kafka/errors.go.
var ErrInvalidTxnState = txnstate.ErrInvalidTxnState

// ErrConcurrentTransactions: a transactional batch that would start its
// producer's transaction on the partition after the coordinator decided
// it (DecideTxnPartition), mapped to NOT_ENOUGH_REPLICAS in
// kafka/errors.go as Kafka's ReplicaManager maps its verification's
// CONCURRENT_TRANSACTIONS.
var ErrConcurrentTransactions = txnstate.ErrConcurrentTransactions

// AbortedTxn is one aborted transaction of a partition (Kafka's
// AbortedTransactions in a Fetch response).
type AbortedTxn = txnstate.AbortedTxn

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
	return r.pids.AllocateProducerID(ctx)
}

// AddTxnPartition lets producer (pid, epoch) write transactional batches to
// the partition until a marker for it is written. In memory only: after a
// restart the coordinator calls it again for every partition of every
// Ongoing transaction before it serves requests. A newer epoch fences older
// ones on the partition (their batches get ErrInvalidProducerEpoch); an
// epoch older than the partition's is ErrInvalidProducerEpoch itself (KIP-890 partition verification,
// epoch fencing).
func (r *Resolver) AddTxnPartition(topic string, partition int32, pid int64, epoch int16) error {
	if pid < 0 || epoch < 0 {
		return fmt.Errorf("%w: producer %d epoch %d", ErrInvalidTxnState, pid, epoch)
	}
	p, err := r.mu.partition(topic, partition)
	if err != nil {
		return err
	}
	if _, _, err := p.ledgerAndSettings(); err != nil {
		return err
	}
	p.app.Lock()
	defer p.app.Unlock()
	if p.app.failed != nil {
		return storageErr("partition failed earlier; reopen required", p.app.failed)
	}
	return p.app.txn.Register(pid, epoch, p.app.prod.epochOf)
}

// DecideTxnPartition tells the partition that producer (pid, epoch)'s
// transaction is decided (PrepareCommit or PrepareAbort): if the producer
// is registered at that epoch without a batch, a batch that would start
// its transaction is refused, ErrConcurrentTransactions, until the
// marker ends the registration (a decided registration takes no first
// batch). In memory only, as registrations are.
func (r *Resolver) DecideTxnPartition(topic string, partition int32, pid int64, epoch int16) error {
	p, err := r.mu.partition(topic, partition)
	if err != nil {
		return err
	}
	p.app.Lock()
	defer p.app.Unlock()
	p.app.txn.Decide(pid, epoch)
	return nil
}

// ErrCoordinatorFenced: a transaction marker from a coordinator epoch
// older than the one of the producer's last marker on the partition (a
// coordinator that has since moved on); kafka/errors.go maps it.
var ErrCoordinatorFenced = errors.New("resolver: transaction coordinator fenced")

// WriteTxnMarker appends a COMMIT (commit=true) or ABORT control batch for
// (pid, epoch) to the partition and returns once it is durable. It ends
// pid's transaction there: the LSO moves past it, and an abort is recorded
// in the partition's aborted-transaction index. Idempotent: when pid has no
// open transaction on the partition and no registration, nothing is
// written and nil is returned (recovery re-sends markers), once everything
// written before is durable. A marker's epoch may be newer than the
// producer's batches (an abort that fences): the partition's producer
// epoch becomes the marker's (the control batch format, epoch fencing). A
// marker from a coordinator epoch older than the producer's last marker's
// is ErrCoordinatorFenced, as in Kafka's ProducerStateManager. It checks
// the marker's epoch as at transaction version 0 (WriteTxnMarkerTV).
func (r *Resolver) WriteTxnMarker(topic string, partition int32, pid int64, epoch int16, commit bool, coordinatorEpoch int32) error {
	return r.WriteTxnMarkerTV(topic, partition, pid, epoch, commit, coordinatorEpoch, 0)
}

// WriteTxnMarkerTV is WriteTxnMarker at transaction version tv
// (WriteTxnMarkers v2, KIP-1228; txnstate.CheckMarker).
func (r *Resolver) WriteTxnMarkerTV(topic string, partition int32, pid int64, epoch int16, commit bool, coordinatorEpoch int32, tv int8) error {
	p, err := r.mu.partition(topic, partition)
	if err != nil {
		return err
	}
	ml, _, err := p.ledgerAndSettings()
	if err != nil {
		return err
	}
	p.app.Lock()
	if p.app.failed != nil {
		p.app.Unlock()
		return storageErr("partition failed earlier; reopen required", p.app.failed)
	}
	e, ps := p.app.txn.Open[pid], p.app.prod.m[pid]
	var pe *int16
	if ps != nil {
		pe = &ps.epoch
	}
	if err := txnstate.CheckMarker(pid, epoch, tv, e, pe); err != nil {
		p.app.Unlock()
		return err
	}
	if e == nil {
		// Nothing to end (a marker re-sent by recovery, the control batch format). An earlier
		// marker for pid may still be on its way to disk: wait for every
		// write so far, so that nil always means "ended, durably".
		last := p.app.last
		p.app.Unlock()
		if last != nil {
			if err := last.Wait(); err != nil {
				return storageErr("earlier append", err)
			}
		}
		return nil
	}
	if ps != nil && coordinatorEpoch < ps.coordEpoch {
		p.app.Unlock()
		return fmt.Errorf("%w: marker for producer %d from coordinator epoch %d, the partition has seen %d", ErrCoordinatorFenced, pid, coordinatorEpoch, ps.coordEpoch)
	}
	now := r.now().UnixMilli()
	b := recordbatch.EncodeMarker(pid, epoch, commit, coordinatorEpoch, now)
	pd, err := ml.Write(1, b, storage.AppendOptions{MaxTime: now, Stamp: stamp(now), Retain: true,
		SuffixFrom: attrsOff, SuffixCRC: binary.BigEndian.Uint32(b[crcOff:])})
	if err != nil {
		p.app.Unlock()
		return storageErr("write marker", err)
	}
	off := pd.Header().Offset
	ended, aborted := p.app.txn.End(pid, off, commit)
	p.app.prod.fence(pid, epoch, coordinatorEpoch, now, r.states.limits)
	p.app.maxTS.observe(now, off)
	p.app.next = pd.Header().End()
	p.app.last = pd
	p.app.unckpt++
	p.app.unckptBytes += int64(len(b))
	p.app.Unlock()

	if err := pd.Wait(); err != nil {
		p.app.Lock()
		if p.app.failed == nil {
			p.app.failed = err
		}
		p.app.Unlock()
		return storageErr("write marker", err)
	}
	p.markerDurable(ended, aborted, now, off)
	r.states.maybeCheckpoint(p)
	return nil
}

// markerDurable moves the read view past a durable marker (the LSO): the
// transaction is no longer open, an abort is in the index, and the
// partition's long polls wake.
func (p *partition) markerDurable(ended *txnstate.Entry, aborted *txnstate.Aborted, ts int64, off Offset) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ended.First >= 0 {
		p.mu.txn.RemoveOpen(ended.First)
	}
	if aborted != nil {
		p.mu.txn.AddAborted(*aborted)
	}
	p.changes.Add(1)
	p.mu.maxTS.observe(ts, off)
	if !p.mu.deleted {
		p.wakeWaitersLocked()
	}
}

// Producers lists the partition's producers (DescribeProducers): every
// producer whose state it keeps (producer expiry, the producer cap) and every one with an open
// transaction, by producer id.
func (r *Resolver) Producers(topic string, partition int32) ([]ProducerState, error) {
	p, err := r.mu.partition(topic, partition)
	if err != nil {
		return nil, err
	}
	if _, _, err := p.ledgerAndSettings(); err != nil {
		return nil, err
	}
	p.app.Lock()
	defer p.app.Unlock()
	out := make([]ProducerState, 0, len(p.app.prod.m)+len(p.app.txn.Open))
	for pid, ps := range p.app.prod.m {
		st := ProducerState{ProducerID: pid, Epoch: ps.epoch, LastSequence: -1, LastTimestamp: ps.lastTS,
			CoordinatorEpoch: ps.coordEpoch, TxnStartOffset: -1}
		if n := len(ps.batches); n > 0 {
			st.LastSequence = ps.batches[n-1].last
		}
		if e := p.app.txn.Open[pid]; e != nil && e.First >= 0 {
			st.TxnStartOffset = e.First
		}
		out = append(out, st)
	}
	for pid, e := range p.app.txn.Open {
		if _, known := p.app.prod.m[pid]; !known && e.First >= 0 {
			out = append(out, ProducerState{ProducerID: pid, Epoch: e.Epoch, LastSequence: -1, LastTimestamp: -1,
				CoordinatorEpoch: -1, TxnStartOffset: e.First})
		}
	}
	slices.SortFunc(out, func(a, b ProducerState) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out, nil
}

// TxnBatchProducer is the producer id and epoch of the record batch at
// the start of b when it is a transactional, non-control batch of magic 2;
// ok is false otherwise (or when b is too short to tell). The Kafka front
// end uses it to add the partition to the producer's transaction before
// the batch is appended (transaction version 2); the batch itself is
// validated by the append as any other.
func TxnBatchProducer(b []byte) (pid int64, epoch int16, ok bool) {
	if len(b) < batchHeaderLen || b[magicOff] != 2 {
		return -1, -1, false
	}
	h := decodeHeader(b)
	if !h.Transactional() || h.Control() || !h.Idempotent() {
		return -1, -1, false
	}
	return h.ProducerID, h.ProducerEpoch, true
}
