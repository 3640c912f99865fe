package resolver

import (
	"container/list"
	"context"
	"fmt"
	"maps"
)

// Idempotent producers (D4). Per (producer id, partition) the resolver
// keeps the producer's epoch and the sequences and offsets of its last
// maxTrackedBatches batches:
//   - a batch equal to one of them (epoch, first and last sequence) is a
//     retry: its original offset is returned and nothing is written;
//   - an older epoch is fenced (ErrInvalidProducerEpoch);
//   - a newer epoch must start at sequence 0;
//   - within an epoch the first sequence must follow the last one
//     (ErrOutOfOrderSequence otherwise);
//   - an unknown producer may start at any sequence, as in Kafka, since its
//     state may have expired.

// maxTrackedBatches is Kafka's window of remembered batches per producer.
// How many producers a partition remembers, and for how long, is
// producer_set.go's (producer expiry, the producer cap).
const maxTrackedBatches = 5

// producer is one producer's state on one partition.
type producer struct {
	epoch    int16
	lastSeen int64      // unix ms of its last append (for expiry)
	batches  []seqBatch // oldest first, at most maxTrackedBatches
	// lastTS is the max timestamp of its last batch, coordEpoch the
	// coordinator epoch of its last marker (-1: none); DescribeProducers.
	lastTS     int64
	coordEpoch int32
	// elem is the producer's place in its producerSet's recency list;
	// nil outside a set.
	elem *list.Element
}

// seqBatch is one remembered batch.
type seqBatch struct {
	first, last int32
	offset      Offset
	// w is the produce that wrote the batch while it is not yet known to
	// be durable; a retry waits on it before answering (D1). nil for
	// batches known durable (recovered from the log).
	w *inflight
}

// inflight is one Produce call's durability outcome.
type inflight struct {
	done chan struct{}
	err  error // set before done is closed
	// ckptDue: the partition's checkpoint was due once the call's
	// batches were written (appendLocked); read by the call alone.
	ckptDue bool
}

func newInflight() *inflight { return &inflight{done: make(chan struct{})} }

func (f *inflight) finish(err error) {
	f.err = err
	close(f.done)
}

// checkSequence classifies batch h against the producer's state ps (nil
// when unknown): a duplicate of a remembered batch, an error, or new.
func checkSequence(ps *producer, h batchHeader) (*seqBatch, error) {
	if ps == nil {
		return nil, nil
	}
	switch {
	case h.ProducerEpoch < ps.epoch:
		return nil, fmt.Errorf("%w: producer %d epoch %d is older than %d", ErrInvalidProducerEpoch, h.ProducerID, h.ProducerEpoch, ps.epoch)
	case h.ProducerEpoch > ps.epoch:
		if h.BaseSequence != 0 {
			return nil, fmt.Errorf("%w: producer %d new epoch %d starts at sequence %d, not 0", ErrOutOfOrderSequence, h.ProducerID, h.ProducerEpoch, h.BaseSequence)
		}
		return nil, nil
	}
	last := h.LastSequence()
	for i := range ps.batches {
		if b := &ps.batches[i]; b.first == h.BaseSequence && b.last == last {
			return b, nil
		}
	}
	if n := len(ps.batches); n > 0 {
		if want := seqAdd(ps.batches[n-1].last, 1); h.BaseSequence != want {
			return nil, fmt.Errorf("%w: producer %d expected sequence %d, got %d", ErrOutOfOrderSequence, h.ProducerID, want, h.BaseSequence)
		}
	}
	return nil, nil
}

// recordBatch records batch h written at off in producers, copying the
// producer's state first (callers may hold a tentative copy of the map).
func recordBatch(producers map[int64]*producer, h batchHeader, off Offset, now int64) map[int64]*producer {
	if producers == nil {
		producers = make(map[int64]*producer)
	}
	producers[h.ProducerID] = nextState(producers[h.ProducerID], h, off, now, nil)
	return producers
}

// nextState is a new state for the producer whose state was old (nil:
// none) after batch h written at off: old is left as it is.
func nextState(old *producer, h batchHeader, off Offset, now int64, w *inflight) *producer {
	ps := &producer{epoch: h.ProducerEpoch, lastSeen: now, lastTS: h.MaxTimestamp, coordEpoch: -1}
	if old != nil {
		ps.coordEpoch = old.coordEpoch
	}
	ps.batches = make([]seqBatch, 0, maxTrackedBatches)
	if old != nil && old.epoch == h.ProducerEpoch {
		ps.batches = append(ps.batches, old.batches...)
	}
	ps.remember(seqBatch{first: h.BaseSequence, last: h.LastSequence(), offset: off, w: w})
	return ps
}

// remember appends b to the producer's remembered batches, in place,
// dropping the oldest beyond maxTrackedBatches. The caller owns ps.
func (ps *producer) remember(b seqBatch) {
	if n := len(ps.batches); n >= maxTrackedBatches {
		k := copy(ps.batches, ps.batches[n-maxTrackedBatches+1:])
		ps.batches = append(ps.batches[:k], b)
		return
	}
	ps.batches = append(ps.batches, b)
}

// planIdempotent checks every idempotent batch of one produce call against
// the partition's producer state, in order, as if the earlier ones were
// written. It returns the duplicate that short-circuits the whole call
// (as Kafka does), or an error rejecting all of them.
func planIdempotent(producers map[int64]*producer, hdrs []batchHeader) (*seqBatch, error) {
	var tentative map[int64]*producer
	for i, h := range hdrs {
		if !h.Idempotent() {
			continue
		}
		state := producers
		if tentative != nil {
			state = tentative
		}
		dup, err := checkSequence(state[h.ProducerID], h)
		if err != nil || dup != nil {
			return dup, err
		}
		if i < len(hdrs)-1 { // later batches see this one
			if tentative == nil {
				tentative = maps.Clone(producers)
			}
			tentative = recordBatch(tentative, h, 0, 0)
		}
	}
	return nil, nil
}

// InitProducerID allocates a new producer id (epoch 0), or bumps the epoch
// of an existing one when producerID >= 0 (KIP-360); with
// Config.ProducerIDs, always a fresh id from it (shared producer ids).
// The counter and the bumped epochs are package producerid's.
func (r *Resolver) InitProducerID(ctx context.Context, producerID int64, epoch int16) (int64, int16, error) {
	return r.pids.InitProducerID(ctx, producerID, epoch)
}
