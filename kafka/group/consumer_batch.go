package group

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConsumerGroupHeartbeats of one group are applied in batches with one
// write each, the way a group commit works: while one heartbeat holds
// the group's lock through its synced write, the heartbeats that arrive
// queue up (beatQueue); the next one to run takes the whole queue,
// applies each heartbeat in arrival order under the lock, writes the
// group once, and only then are all of them answered. 100 members
// joining at once were 100 synced writes in a row; they are now a few.
//
// Durability is as before (durable consumer group state): the lock is
// held from the first change of a batch to the end of its write, so no
// request outside the batch sees a change before it is durable, and no
// answer of the batch is sent before the write. If the write fails the
// group goes back to its last durable state (rollbackConsumerLocked), as
// a lone failed write does, and every heartbeat of the batch whose
// answer would have rested on it is answered with the write's error.
//
// Heartbeats that can change the group's type or write something other
// than the consumer group's record (a leave that downgrades the group to
// classic; a join that upgrades a classic group; anything while an
// upgrade is not yet durable) are applied on their own: the batch before
// them is written first. Other leaves share the batch's write, so 100
// members closing at once are a few writes, not 100. Whether a leave
// downgrades is decided when the batch applies it, under the lock, by
// the condition the leave itself uses (downgradeDueLocked): the leaves
// before it in the batch count, so of many consumer-protocol members
// leaving a group of classic ones, the last is applied on its own.

// beatQueue is a group's queue of heartbeats waiting for a batch.
type beatQueue struct {
	mu      sync.Mutex
	waiting []*beat
	running bool // a heartbeat is applying a batch, or about to
}

// beat is one queued heartbeat; done is closed when it is answered, or
// when it is to apply the next batch (lead).
type beat struct {
	cl   Client
	req  *kmsg.ConsumerGroupHeartbeatRequest
	resp *kmsg.ConsumerGroupHeartbeatResponse
	done chan struct{}
	lead bool
	wait releaseWait // releases soon to come (consumer_await.go)
}

// batchHeartbeat queues a heartbeat and returns its answer once the batch
// holding it is durable; the first heartbeat to find no batch running
// applies the queue. A heartbeat a batch parked (releases soon to come)
// waits for the next batch, or the end of its wait, and is queued again.
func (g *group) batchHeartbeat(cl Client, req *kmsg.ConsumerGroupHeartbeatRequest, resp *kmsg.ConsumerGroupHeartbeatResponse) *kmsg.ConsumerGroupHeartbeatResponse {
	b := &beat{cl: cl, req: req, resp: resp}
	for g.runBeat(b) {
		b.wait.await()
	}
	b.wait.stop()
	return b.resp
}

// runBeat queues b and returns when it is answered (false) or parked (true).
func (g *group) runBeat(b *beat) bool {
	b.done, b.lead, b.wait.parked = make(chan struct{}), false, false
	q := &g.beats
	q.mu.Lock()
	q.waiting = append(q.waiting, b)
	lead := !q.running
	q.running = true
	q.mu.Unlock()
	if !lead {
		<-b.done
		if !b.lead {
			return b.wait.parked
		}
	}
	g.applyBeats(b)
	return b.wait.parked
}

// applyBeats applies every queued heartbeat as one batch, answers them,
// and hands the next batch to the first heartbeat queued meanwhile.
func (g *group) applyBeats(self *beat) {
	q := &g.beats
	q.mu.Lock()
	batch := q.waiting
	q.waiting = nil
	q.mu.Unlock()

	g.mu.Lock()
	g.applyBeatsLocked(batch)
	g.mu.Unlock()

	q.mu.Lock()
	var next *beat
	if len(q.waiting) > 0 {
		next = q.waiting[0]
		next.lead = true
	} else {
		q.running = false
	}
	q.mu.Unlock()
	for _, b := range batch {
		if b != self {
			close(b.done)
		}
	}
	if next != nil {
		close(next.done)
	}
}

// applyBeatsLocked applies batch in order, writing once for every run of
// heartbeats that only change the consumer group's record. Needs mu.
func (g *group) applyBeatsLocked(batch []*beat) {
	var deferred []*beat
	changed := false // the batch changed the group: parked heartbeats look again
	flush := func() {
		g.mu.deferWrite = false
		if g.mu.dirty {
			changed = true
			if code := g.persistConsumerLocked(); code != errNone {
				for _, b := range deferred {
					if b.resp.ErrorCode == errNone {
						r := b.req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
						r.ErrorCode = code
						b.resp = r
					}
				}
			}
		}
		deferred = deferred[:0]
	}
	var parked, held []*beat
	var joins newJoins
	apply := func(b *beat) {
		g.mu.deferWrite = true
		if joins.take(g, b) {
			deferred = append(deferred, b)
			return
		}
		joins.settleLocked(g)
		if b.wait.applied {
			g.reconcileAgainLocked(b)
		} else {
			b.wait.told = g.assignedLocked(b.req.MemberID)
			b.resp = g.heartbeatLocked(b.cl, b.req, b.resp)
		}
		deferred = append(deferred, b)
		if b.resp.ErrorCode == errNone && g.releasesDueLocked(b) {
			b.wait.applied = true // its answer waits for the releases
			held = append(held, b)
		}
	}
	for _, b := range batch {
		if !joins.fresh(g, b) {
			joins.settleLocked(g) // what follows sees the target at the group epoch
		}
		if !g.batchableLocked(b.req) {
			flush()
			if !b.wait.applied { // else the group changed type: its first answer stands
				b.resp = g.heartbeatLocked(b.cl, b.req, b.resp)
			}
			changed = true
			continue
		}
		if g.releasesDueLocked(b) {
			parked = append(parked, b)
			continue
		}
		apply(b)
	}
	joins.settleLocked(g)
	// A parked heartbeat whose releases came in this batch goes in it.
	kept := parked[:0]
	for _, b := range parked {
		if !g.batchableLocked(b.req) {
			b.wait.final = true // the group changed type: applied on its own next
		}
		if b.wait.final || g.releasesDueLocked(b) {
			kept = append(kept, b)
			continue
		}
		apply(b)
	}
	flush()
	for _, b := range held {
		if b.resp.ErrorCode == errNone { // else the write failed: answered with its error
			kept = append(kept, b)
		}
	}
	g.parkLocked(kept, changed)
}

// assignedLocked is the partitions of member id, nil if unknown (the
// assignments are replaced, never changed in place). Needs mu.
func (g *group) assignedLocked(id string) assignment {
	if g.mu.typ != typeConsumer {
		return nil
	}
	if m := g.mu.cons.members[id]; m != nil {
		return m.assigned
	}
	return nil
}

// batchableLocked reports whether req may share the batch's write: a
// join, heartbeat or leave of a consumer group that is durable as one,
// unless the leave downgrades it. Needs mu.
func (g *group) batchableLocked(req *kmsg.ConsumerGroupHeartbeatRequest) bool {
	return g.mu.typ == typeConsumer && g.mu.classicBefore == nil && !g.leaveDowngradesLocked(req)
}

// leaveDowngradesLocked reports whether req is a leave that may turn the
// group classic: its member is known and downgradeDueLocked holds. A
// static member stepping away, or a fenced leave, that meets it does not
// convert but is applied on its own too, which costs only a write. Needs mu.
func (g *group) leaveDowngradesLocked(req *kmsg.ConsumerGroupHeartbeatRequest) bool {
	if req.MemberEpoch != epochLeave && req.MemberEpoch != epochStaticLeave {
		return false
	}
	m := g.mu.cons.members[req.MemberID]
	return m != nil && g.downgradeDueLocked(m)
}
