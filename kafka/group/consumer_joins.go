package group

// New members joining in one batch of heartbeats (consumer_batch.go)
// share one computation of the target assignment. Each join advances the
// group epoch (the group epoch and target assignment) as before, but the
// target is computed once, at the epoch of the batch's last join of the
// run, and every one of those members is then reconciled against it and
// answered. 100 members joining at once were 100 computations of the
// target under the group's lock, each over all the members and
// partitions, one after the other before the batch's write; and each
// member joining first took partitions of the target of its moment that
// the joins after it in the same batch moved elsewhere, which its owner
// then had to revoke a heartbeat later.
//
// Nothing outside the batch can tell: the lock is held from the first
// join to the batch's write, and every answer is sent after that write
// (durable consumer group state); the intermediate targets were never
// written nor shown. Only joins of members the group does not know are
// taken this way (a rejoin or a static member's return is applied as
// before); any other heartbeat of the batch first settles the joins
// taken so far, so it sees the target at the group epoch.

// newJoins is a batch's joins whose target is still to be computed.
type newJoins struct{ waiting []*beat }

// fresh reports whether b is the join of a member the group does not
// know, which take may defer. Needs mu.
func (j *newJoins) fresh(g *group, b *beat) bool {
	r := b.req
	if r.MemberEpoch != epochJoin || r.InstanceID != nil || r.MemberID == "" || b.wait.applied {
		return false
	}
	if g.mu.typ != typeConsumer || g.mu.cons == nil || g.mu.classicBefore != nil {
		return false
	}
	return g.mu.cons.members[r.MemberID] == nil
}

// take applies b if it is a fresh join, leaving its target, its
// reconciliation and its answer to settleLocked; it reports whether b
// was taken. Needs mu, in a batch.
func (j *newJoins) take(g *group, b *beat) bool {
	if !j.fresh(g, b) {
		return false
	}
	g.mu.deferTarget = true
	b.resp = g.heartbeatLocked(b.cl, b.req, b.resp)
	g.mu.deferTarget = false
	if !g.mu.targetDue || b.resp.ErrorCode != errNone || b.resp.MemberID != nil {
		// Refused (group full, a bad regex, ...) or answered whole: as
		// any heartbeat. A refused join changed nothing.
		return true
	}
	j.waiting = append(j.waiting, b)
	return true
}

// settleLocked computes the target once for the joins taken, then
// reconciles and answers each of them, as consumerJoinLocked would have.
// Needs mu, in a batch.
func (j *newJoins) settleLocked(g *group) {
	if !g.mu.targetDue {
		return
	}
	g.mu.targetDue = false
	g.computeTargetLocked()
	cs := g.mu.cons
	for _, b := range j.waiting {
		m := cs.members[b.req.MemberID]
		cs.reconcile(m, assignment{})
		b.resp = g.finishBeatLocked(m, consumerSnapshot{}, b.resp, true)
	}
	j.waiting = j.waiting[:0]
}
