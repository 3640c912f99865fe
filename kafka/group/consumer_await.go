package group

import (
	"slices"
	"time"
)

// Releases soon to come. A member waiting for partitions (its target
// holds partitions other members still own) learns of them only at a
// heartbeat: KIP-848 has no push. When its heartbeat arrives in the same
// moment as the heartbeats in which their owners are told to revoke them
// (a joining member's next heartbeat and the old members' land together,
// one interval after the join), it was applied before their releases,
// which come a synced write and a client round trip later, and got
// nothing: the member waited a whole heartbeat interval more for
// partitions freed a few milliseconds after it asked ("+1 to N" in two
// intervals instead of one).
//
// So a batch of heartbeats (consumer_batch.go) parks, instead of
// applying, the heartbeat of a member lacking partitions of its target
// that are held by a member told to revoke them (unrevoked, the partition
// in its revoking set), by one whose own heartbeat, at which it would be
// told, is due within the wait, or by one just sent a changed assignment
// it has not acknowledged yet: clients acknowledge one with a heartbeat
// at once, and are told of a revocation then (members that join a few
// milliseconds apart: the first is sent every partition, the later ones'
// first heartbeats came before its acknowledgment and got nothing, an
// interval before they asked again). A parked heartbeat is applied at the
// end of the batch that releases them, the one that parked it or a later
// one (takeParkedLocked): the release and the partitions given share that
// batch's one synced write, as a group commit, where the woken heartbeat
// used to be queued again and written on its own after it. Woken by a
// batch that changed the group without taking it, or at the end of its
// wait (awaitBound), it is queued again and applied as any heartbeat. A heartbeat that is applied and leaves its
// member in that state (a release by a member whose target also holds
// partitions another member is releasing) has its answer held the same
// way: its changes are written with its batch, and at its next turn (the
// batch of the release it waits for, if that comes first) its member is
// reconciled again (reconcileAgainLocked) and the answer refilled. Parking comes before a heartbeat touches the group, a held
// answer is sent after the write of the batch of its last turn, so the
// durable consumer group state is as before. Joins and leaves never wait,
// nor a member with partitions of its own to revoke.

// awaitMax caps the wait: with 5 s heartbeats a fifth of the interval
// would hold a heartbeat (and the requests behind it on its connection)
// a second.
const awaitMax = 100 * time.Millisecond

// releaseWait is a heartbeat's wait for releases soon to come. Its
// fields but until are read and written under the group's lock (or
// before the heartbeat is queued): a batch may apply a parked heartbeat
// while its handler waits.
type releaseWait struct {
	parked  bool          // parked, in the group's parked list, not answered
	applied bool          // it was applied; its answer is held (reconcileAgainLocked)
	final   bool          // the wait is over: the next batch applies it
	woken   chan struct{} // closed once the next batch is applied and written
	bound   time.Duration
	until   *time.Timer // the wait's end, from its first park; the handler's own
}

// awaitRelease follows a turn of b in a batch: false if b is answered;
// else b is parked, and once the next batch that changed the group is
// written, or the wait is over, either that batch applied and answered
// it (false) or b is taken out of the parked list to be queued again
// (true).
func (g *group) awaitRelease(b *beat) bool {
	g.mu.Lock()
	parked, woken, bound := b.wait.parked, b.wait.woken, b.wait.bound
	g.mu.Unlock()
	if !parked {
		return false
	}
	if b.wait.until == nil {
		b.wait.until = time.NewTimer(bound)
	}
	over := false
	select {
	case <-woken:
	case <-b.wait.until.C:
		over = true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !b.wait.parked {
		return false // a batch applied it and its answer is written
	}
	g.unparkLocked(b)
	b.wait.final = b.wait.final || over
	return true
}

func (w *releaseWait) stop() {
	if w.until != nil {
		w.until.Stop()
	}
}

// takeParkedLocked applies, in the batch being applied, the heartbeats
// parked by earlier batches whose partitions are no longer about to be
// released (this batch released them, or their owners went quiet): they
// share the batch's write with the releases, instead of waking to be
// applied in a write of their own after it. It returns them; each is
// answered with the batch unless its answer is held again. Needs mu, in
// a batch.
func (g *group) takeParkedLocked(apply func(*beat)) []*beat {
	var taken []*beat
	kept := g.mu.parked[:0]
	for _, b := range g.mu.parked {
		if !g.batchableLocked(b.req) || g.releasesDueLocked(b) {
			kept = append(kept, b)
			continue
		}
		taken = append(taken, b)
	}
	clear(g.mu.parked[len(kept):])
	g.mu.parked = kept
	for _, b := range taken {
		apply(b)
	}
	return taken
}

// unparkLocked takes b out of the parked list. Needs mu.
func (g *group) unparkLocked(b *beat) {
	b.wait.parked = false
	if i := slices.Index(g.mu.parked, b); i >= 0 {
		g.mu.parked = slices.Delete(g.mu.parked, i, i+1)
	}
}

// reconcileAgainLocked is a held heartbeat's next turn: it was applied
// (its release, say, is written) and left its member lacking partitions
// about to be released; now its member is reconciled again, with what was
// released meanwhile, and the answer refilled with the member as it is,
// its whole assignment. A member gone meanwhile keeps the first answer,
// which was durable when made. Needs mu, in a batch.
func (g *group) reconcileAgainLocked(b *beat) {
	cs := g.mu.cons
	m := cs.members[b.req.MemberID]
	if m == nil || m.epoch < 0 {
		return
	}
	if cs.reconcile(m, nil) {
		if code := g.persistConsumerLocked(); code != errNone {
			b.resp.ErrorCode = code
			return
		}
	}
	g.answerBeatLocked(m, consumerSnapshot{}, b.resp, true)
}

// awaitBound is how long a heartbeat may wait for releases: a fifth of
// the group's heartbeat interval, at most awaitMax;
// Config.ConsumerReleaseWait replaces it (negative: never wait).
func (g *group) awaitBound() time.Duration {
	if w := g.c.cfg.ConsumerReleaseWait; w != 0 {
		return w
	}
	return min(g.c.heartbeatInterval(g.id)/5, awaitMax)
}

// releasesDueLocked reports whether b, a heartbeat of a member, is to
// park: its member lacks partitions of its target that their owners are
// about to release. Needs mu.
func (g *group) releasesDueLocked(b *beat) bool {
	if b.wait.final || b.req.MemberEpoch <= 0 || g.mu.typ != typeConsumer {
		return false
	}
	cs := g.mu.cons
	m := cs.members[b.req.MemberID]
	if m == nil || m.epoch < 0 || m.state == memberUnrevoked ||
		m.state == memberStable && m.epoch == cs.assignmentEpoch {
		return false // unknown, away, revoking, or holding its whole target
	}
	target := cs.target[m.id]
	if !subsetOf(m.assigned, target) {
		return false // it has partitions of its own to revoke first
	}
	var now time.Time
	var due, late time.Duration // an owner answered between due and late ago heartbeats within the wait
	for _, x := range target.tps() {
		o := cs.members[cs.owners[x]]
		if o == nil || o == m {
			continue
		}
		if o.revoking.has(x) {
			return g.setBoundLocked(b)
		}
		if o.answered.IsZero() || o.epoch < 0 {
			continue // not heard from since a restart, or a static member away
		}
		if now.IsZero() {
			if !g.setBoundLocked(b) {
				return false
			}
			interval := g.c.heartbeatInterval(g.id)
			now, due, late = g.c.clock.Now(), interval-b.wait.bound, interval+b.wait.bound
		}
		since := now.Sub(o.answered)
		// An owner just sent partitions acknowledges them at once, and
		// is told of the revocation then.
		if o.ackDue && since < b.wait.bound {
			return true
		}
		// An owner overdue by more than the wait has gone quiet (its
		// session will tell): waiting for it would only delay.
		if since >= due && since < late {
			return true
		}
	}
	return false
}

// setBoundLocked sets b's wait bound; false if heartbeats do not wait.
func (g *group) setBoundLocked(b *beat) bool {
	if b.wait.bound == 0 {
		b.wait.bound = g.awaitBound()
	}
	return b.wait.bound > 0
}

// parkLocked wakes the heartbeats parked by earlier batches if this one
// changed the group (a batch that changed nothing released nothing, and
// waking on it would have parked heartbeats wake each other in turn), and
// parks kept until the next batch that does. Needs mu.
func (g *group) parkLocked(kept []*beat, changed bool) {
	if changed && g.mu.applied != nil {
		close(g.mu.applied)
		g.mu.applied = nil
	}
	if len(kept) == 0 {
		return
	}
	if g.mu.applied == nil {
		g.mu.applied = make(chan struct{})
	}
	for _, b := range kept {
		b.wait.parked, b.wait.woken = true, g.mu.applied
		g.mu.parked = append(g.mu.parked, b)
	}
}
