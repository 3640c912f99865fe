package group

import "time"

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
// end of the same batch if the batch released them, else it waits for the
// next batch that changed the group and is queued again, until the
// partitions are released or its wait (awaitBound) is over; then it is
// applied as any heartbeat. A heartbeat that is applied and leaves its
// member in that state (a release by a member whose target also holds
// partitions another member is releasing) has its answer held the same
// way: its changes are written with its batch, and at its next turn its
// member is reconciled again (reconcileAgainLocked) and the answer
// refilled. Parking comes before a heartbeat touches the group, a held
// answer is sent after the write of the batch of its last turn, so the
// durable consumer group state is as before. Joins and leaves never wait,
// nor a member with partitions of its own to revoke.

// awaitMax caps the wait: with 5 s heartbeats a fifth of the interval
// would hold a heartbeat (and the requests behind it on its connection)
// a second.
const awaitMax = 100 * time.Millisecond

// releaseWait is a heartbeat's wait for releases soon to come.
type releaseWait struct {
	parked  bool          // the last batch parked the heartbeat
	applied bool          // it was applied; its answer is held (reconcileAgainLocked)
	told    assignment    // the member's partitions before it was applied: its last answer's
	final   bool          // the wait is over: the next batch applies it
	woken   chan struct{} // closed once the next batch is applied and written
	bound   time.Duration
	until   *time.Timer // the wait's end, from its first park
}

// await waits for the batch after the one that parked the heartbeat, or
// the end of the wait.
func (w *releaseWait) await() {
	if w.final {
		return
	}
	if w.until == nil {
		w.until = time.NewTimer(w.bound)
	}
	select {
	case <-w.woken:
	case <-w.until.C:
		w.final = true
	}
}

func (w *releaseWait) stop() {
	if w.until != nil {
		w.until.Stop()
	}
}

// reconcileAgainLocked is a held heartbeat's next turn: it was applied
// (its release, say, is written) and left its member lacking partitions
// about to be released; now its member is reconciled again, with what was
// released meanwhile, and the answer refilled with the member as it is,
// its whole assignment. A member gone meanwhile keeps the first answer,
// which was durable when made. Needs mu, in a batch.
//
// The held answer was never sent: partitions its first turn gave the
// member are partitions the member has not been told of. If the target
// moved meanwhile and the member is now to revoke only such partitions,
// it holds none of them, and no heartbeat of its will ever report them
// gone: the refilled answer shows it what it already has, so a client
// that reports its partitions only when they change (franz-go, while it
// owns some) goes on with heartbeats that report nothing, and the
// partitions stay its until the rebalance timeout removes it (one that
// owns none reports that at every heartbeat: the partitions wait a
// heartbeat interval). So they are released here, at once (revocation of
// told partitions only).
func (g *group) reconcileAgainLocked(b *beat) {
	cs := g.mu.cons
	m := cs.members[b.req.MemberID]
	if m == nil || m.epoch < 0 {
		return
	}
	changed := cs.reconcile(m, nil)
	if told := b.wait.told; m.state == memberUnrevoked && !ownsAny(told, m.revoking) {
		if told == nil {
			told = assignment{} // an owned list, empty: it holds none of them
		}
		cs.reconcile(m, told) // it holds at most what it was told
		changed = true
	}
	if changed {
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
	}
}
