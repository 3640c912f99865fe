package resolver

import (
	"container/list"
	"slices"
	"time"
)

// Bounded idempotent-producer state (producer expiry, the producer cap and incremental producer checkpoints in doc.go).
//
// A partition keeps the state of at most maxProducers producers. Each
// append moves its producer to the back of a recency list, so that the
// least recently appended producer is at the front: it is the one evicted
// when the set is full (the producer cap), and expiry (producer expiry) only looks at the front.
// Every change marks the producer dirty; a checkpoint persists exactly the
// dirty producers, one metadata key each (incremental producer checkpoints), so its cost is that of what
// changed since the last one, not of the whole set.

const (
	// defaultProducerIDExpiration is Kafka's producer.id.expiration.ms
	// default.
	defaultProducerIDExpiration = 24 * time.Hour
	// defaultMaxProducers is the per-partition cap (the producer cap). Kafka has none;
	// a producer evicted by it loses only its duplicate detection (an
	// unknown producer may start at any sequence, as after expiry).
	defaultMaxProducers = 1000
)

// producerLimits are the producer expiry (ms) and the producer cap.
type producerLimits struct {
	expiryMs int64
	max      int
}

// producerSet is one partition's producer state. Not safe for concurrent
// use: it lives under the partition's append lock.
//
// The set owns the producers in m: each is m's only reference (the
// recency list's element names it by id), so record updates the state of
// a producer appending in its epoch in place, with one map lookup and no
// allocation, where copy-on-write states (recordBatch) cost two
// allocations per batch. A producer's elem is its place in order.
type producerSet struct {
	m     map[int64]*producer
	order list.List          // producer ids, least recently appended first
	dirty map[int64]struct{} // changed or removed since the last checkpoint
}

func newProducerSet() *producerSet {
	return &producerSet{m: map[int64]*producer{}, dirty: map[int64]struct{}{}}
}

// load installs producers (a checkpoint's), in lastSeen order, applying
// the limits; markDirty makes the next checkpoint persist all of them.
func (s *producerSet) load(producers map[int64]*producer, markDirty bool, lim producerLimits, now int64) {
	ids := make([]int64, 0, len(producers))
	for id := range producers {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int64) int {
		if d := producers[a].lastSeen - producers[b].lastSeen; d != 0 {
			return int(min(max(d, -1), 1))
		}
		return int(min(max(a-b, -1), 1))
	})
	for _, id := range ids {
		s.put(id, producers[id])
		if markDirty {
			s.dirty[id] = struct{}{}
		}
	}
	s.bound(lim, now)
}

// put sets id's state, taking over the place of the state it replaces
// in the recency list, and makes it the most recent.
func (s *producerSet) put(id int64, ps *producer) {
	if old := s.m[id]; old != nil && old != ps {
		ps.elem, old.elem = old.elem, nil
	}
	s.m[id] = ps
	if ps.elem != nil {
		s.order.MoveToBack(ps.elem)
	} else {
		ps.elem = s.order.PushBack(id)
	}
}

// remove drops id (a later checkpoint deletes its key).
func (s *producerSet) remove(id int64) {
	if ps := s.m[id]; ps != nil {
		if ps.elem != nil {
			s.order.Remove(ps.elem)
			ps.elem = nil
		}
		delete(s.m, id)
	}
	s.dirty[id] = struct{}{}
}

// record notes batch h written at off (D4), then applies the limits. A
// producer appending in the epoch it has is updated in place (the set
// owns it); a new one, or a new epoch, gets a new state.
func (s *producerSet) record(h batchHeader, off Offset, now int64, w *inflight, lim producerLimits) {
	id := h.ProducerID
	if ps := s.m[id]; ps != nil && ps.epoch == h.ProducerEpoch {
		ps.lastSeen, ps.lastTS = now, h.MaxTimestamp
		ps.remember(seqBatch{first: h.BaseSequence, last: h.LastSequence(), offset: off, w: w})
		s.order.MoveToBack(ps.elem)
	} else {
		s.put(id, nextState(ps, h, off, now, w))
	}
	s.dirty[id] = struct{}{}
	s.bound(lim, now)
}

// fence notes a transaction marker of pid at epoch (epoch fencing): the producer's
// epoch becomes the marker's, which fences its older epochs; its remembered
// batches go when the epoch changes, as in Kafka.
func (s *producerSet) fence(pid int64, epoch int16, coordEpoch int32, now int64, lim producerLimits) {
	ps := &producer{epoch: epoch, lastSeen: now, lastTS: -1, coordEpoch: coordEpoch}
	if old := s.m[pid]; old != nil {
		ps.lastTS = old.lastTS
		if old.epoch == epoch {
			ps.batches = old.batches
		}
	}
	s.put(pid, ps)
	s.dirty[pid] = struct{}{}
	s.bound(lim, now)
}

// bound expires producers silent for longer than the expiry (producer expiry) and
// evicts the least recently appended ones beyond the cap (the producer cap). It looks
// only at the front of the recency list: O(1) per producer removed.
func (s *producerSet) bound(lim producerLimits, now int64) {
	for e := s.order.Front(); e != nil; e = s.order.Front() {
		id := e.Value.(int64)
		if s.order.Len() <= lim.max && now-s.m[id].lastSeen <= lim.expiryMs {
			return
		}
		s.remove(id)
	}
}

// takeDirty returns the dirty ids and starts a new set; a checkpoint that
// fails gives them back with keepDirty.
func (s *producerSet) takeDirty() map[int64]struct{} {
	d := s.dirty
	s.dirty = make(map[int64]struct{})
	return d
}

func (s *producerSet) keepDirty(d map[int64]struct{}) {
	for id := range d {
		s.dirty[id] = struct{}{}
	}
}

// epochOf is the epoch of producer id's state on the partition, if it has
// any (package txnstate's fencing of transactional batches, epoch fencing).
func (s *producerSet) epochOf(id int64) (int16, bool) {
	if ps := s.m[id]; ps != nil {
		return ps.epoch, true
	}
	return 0, false
}
