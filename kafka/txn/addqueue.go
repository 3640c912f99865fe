package txn

import (
	"slices"
	"sync"

	"github.com/kgateway/kgateway/offsets"
)

// addQueue writes together the partition adds of one transactional id
// that queue while a write of that id is in flight (durable partition
// adds, grouped): the implicit adds of transaction version 2 (one per
// partition a producer writes to) and AddPartitionsToTxn. Without it each
// add holds the id's lock across its own synced store write, so a
// transaction's adds run one store write after the other.
//
// Mechanism: an add joins waiting; if no add of the id is leading, it
// leads. The leader takes the id's lock (txn.mu) and only then takes
// every waiting add, so the adds that queued behind any holder of the
// lock (another add's write, EndTxn, the timeout loop) are in the batch.
// It checks each add in arrival order against the state the add would
// apply to (the durable state plus the earlier adds of the batch):
// the producer (Kafka's transaction errors) and the transaction bounds,
// so a fenced or refused add gets its own error and nothing of it is
// written. The accepted adds' partitions are written in one PutTxn;
// then each accepted add registers its partitions and is answered.
// When the batch is done the leader releases the lock and hands the
// lead to the first add that queued meanwhile.
//
// Invariants:
//   - An add is answered only after the write holding its partitions
//     returned (durable partition adds): never before, and never by a
//     write that does not hold them.
//   - A failed write fails every add in it (COORDINATOR_NOT_AVAILABLE,
//     retriable) and changes nothing: the state stays the last durable.
//   - Every check is per add, against the state the add would apply to;
//     an add that fails a check is not written.
//   - Lock order: addQueue.mu is a leaf, never held while waiting for
//     txn.mu (only the waiting callbacks below run under it, and they do
//     not block); the leader holds txn.mu across the write, as every
//     other transition of the id does.
//
// Waiting for a completion: while the id's previous transaction is
// being completed (its markers and Complete state written under txn.mu,
// completeLocked), an add queues for as long as that takes, up to the
// marker timeout. An add whose caller must not wait that long holding a
// bounded resource (the cluster relay's answer slots) carries a waiting
// callback: it is called once, when the add arrives during a completion
// or when a completion starts while the add is queued, and lets the
// caller give the resource up for the wait. An add that arrives during a
// completion and whose callback answers false is not queued: it gets
// CONCURRENT_TRANSACTIONS, Kafka's answer to an add while its
// transaction is completing, which clients retry. The callback runs
// under addQueue.mu and must not block.
type addQueue struct {
	mu         sync.Mutex
	waiting    []*addReq
	leading    bool // an add is writing a batch, or about to
	completing bool // a completion of the id holds txn.mu (completeLocked)
}

// addReq is one add: its request and its answer. done gets true once
// code is its answer, false when it is to lead the next batch.
type addReq struct {
	pid   int64
	epoch int16
	tps   []offsets.TopicPartition
	tv    int8
	code  int16
	done  chan bool
	// waiting, if set, is told that the add waits for a completion
	// (waiting for a completion); notified: it was.
	waiting  func() bool
	notified bool
}

// queueAdd adds r's partitions to the transaction of id through q and
// returns r's answer.
func (c *Coordinator) queueAdd(q *addQueue, id string, r *addReq) int16 {
	r.done = make(chan bool, 1)
	q.mu.Lock()
	if q.completing && r.waiting != nil {
		if !r.waiting() {
			q.mu.Unlock()
			return errConcurrent // waiting for a completion: no room to wait
		}
		r.notified = true
	}
	q.waiting = append(q.waiting, r)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	if !lead && <-r.done {
		return r.code
	}
	c.writeAdds(q, id)
	q.mu.Lock()
	if len(q.waiting) == 0 {
		q.leading = false
		q.mu.Unlock()
	} else {
		next := q.waiting[0]
		q.mu.Unlock()
		next.done <- false
	}
	<-r.done // r was in the batch: answered
	return r.code
}

// setCompleting records whether a completion of the id holds its lock;
// when one starts, every queued add not told yet is told it waits
// (waiting for a completion). Queued already, it waits whatever its
// callback answers: its leader may be blocked on txn.mu.
func (q *addQueue) setCompleting(on bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.completing = on
	if !on {
		return
	}
	for _, r := range q.waiting {
		if r.waiting != nil && !r.notified {
			r.notified = true
			r.waiting()
		}
	}
}

// take returns and removes every waiting add.
func (q *addQueue) take() []*addReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	batch := q.waiting
	q.waiting = nil
	return batch
}

// writeAdds writes one batch of q's adds (addQueue) and answers each.
func (c *Coordinator) writeAdds(q *addQueue, id string) {
	t := c.lookup(id)
	batch := q.take()
	defer func() {
		for _, r := range batch {
			r.done <- true
		}
	}()
	if t == nil {
		for _, r := range batch {
			r.code = errInvalidMapping
		}
		return
	}
	defer t.mu.Unlock()
	var durable []offsets.TopicPartition
	if t.st.State == offsets.TxnOngoing {
		durable = t.st.Partitions
	}
	next, accepted := c.acceptAdds(t, durable, batch)
	if len(accepted) == 0 {
		return
	}
	if err := c.persist(t, next); err != nil {
		for _, r := range accepted {
			r.code = errCoordinatorNA
		}
		return
	}
	for _, r := range accepted {
		r.code = c.register(id, t, newPartitions(durable, r.tps))
	}
}

// acceptAdds checks batch's adds in order, each against the state it
// would apply to, answers those that fail a check or need no write (all
// their partitions durably in the transaction already: registered again,
// as the request may be the retry of one whose registration failed), and
// returns the state holding the others' partitions and those others.
func (c *Coordinator) acceptAdds(t *txn, durable []offsets.TopicPartition, batch []*addReq) (offsets.Txn, []*addReq) {
	next := t.st
	var accepted []*addReq
	for _, r := range batch {
		if r.code = checkProducer(t.st, r.pid, r.epoch); r.code != errNone {
			continue
		}
		if t.st.State == offsets.TxnOngoing && len(newPartitions(durable, r.tps)) == 0 {
			r.code = c.register(t.id, t, r.tps)
			continue
		}
		cand := c.begin(next, r.tv)
		cand.Partitions = append(slices.Clone(cand.Partitions), newPartitions(cand.Partitions, r.tps)...)
		if len(cand.Partitions) > c.cfg.MaxPartitionsPerTxn || c.overHeld(t, cand) {
			r.code = errPolicy // The transaction bounds
			continue
		}
		next = cand
		accepted = append(accepted, r)
	}
	return next, accepted
}
