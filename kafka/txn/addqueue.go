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
//     txn.mu; the leader holds txn.mu across the write, as every other
//     transition of the id does.
type addQueue struct {
	mu      sync.Mutex
	waiting []*addReq
	leading bool // an add is writing a batch, or about to
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
}

// queueAdd adds r's partitions to the transaction of id through q and
// returns r's answer.
func (c *Coordinator) queueAdd(q *addQueue, id string, r *addReq) int16 {
	r.done = make(chan bool, 1)
	q.mu.Lock()
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
