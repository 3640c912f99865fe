package group

import "github.com/twmb/franz-go/pkg/kmsg"

// reconcile moves m toward its target assignment, as Kafka's
// CurrentAssignmentBuilder (revocation before reassignment). owned is what the member reported in
// its heartbeat, nil when it did not report. It reports whether m's
// epoch, state or partitions changed.
//
//   - A member holding partitions its target no longer has keeps its
//     epoch and is told to revoke them (unrevoked): they stay its until a
//     heartbeat reports it no longer owns any of them.
//   - A member with nothing to revoke moves to the target epoch and gets
//     the target partitions no other member holds; those still held
//     elsewhere come once released (unreleased).
//
// So a partition has at most one owner at any time.
func (cs *consumerState) reconcile(m *cmember, owned assignment) bool {
	before := struct {
		epoch    int32
		state    memberState
		assigned assignment
		revoking assignment
	}{m.epoch, m.state, m.assigned, m.revoking}
	changed := func() bool {
		return before.epoch != m.epoch || before.state != m.state ||
			!before.assigned.equal(m.assigned) || !before.revoking.equal(m.revoking)
	}
	if m.state == memberUnrevoked {
		if owned == nil || ownsAny(owned, m.revoking) {
			return false
		}
		for _, x := range m.revoking.tps() {
			if cs.owners[x] == m.id {
				delete(cs.owners, x)
			}
		}
		m.revoking = assignment{}
		m.state = memberStable
	}
	if m.epoch == cs.assignmentEpoch && m.state == memberStable {
		return changed()
	}
	target := cs.target[m.id]
	var keep, revoke, add []tp
	for _, x := range m.assigned.tps() {
		if target.has(x) {
			keep = append(keep, x)
		} else {
			revoke = append(revoke, x)
		}
	}
	if len(revoke) > 0 {
		m.assigned, m.revoking = assignmentOf(keep), assignmentOf(revoke)
		m.state = memberUnrevoked
		return changed()
	}
	unreleased := false
	for _, x := range target.tps() {
		if m.assigned.has(x) {
			continue
		}
		if o, held := cs.owners[x]; held && o != m.id {
			unreleased = true
			continue
		}
		add = append(add, x)
	}
	for _, x := range add {
		cs.owners[x] = m.id
	}
	m.assigned = assignmentOf(append(keep, add...))
	if m.epoch != cs.assignmentEpoch {
		m.prevEpoch, m.epoch = m.epoch, cs.assignmentEpoch
	}
	m.state = memberStable
	if unreleased {
		m.state = memberUnreleased
	}
	return changed()
}

func ownsAny(owned, a assignment) bool {
	for _, x := range a.tps() {
		if owned.has(x) {
			return true
		}
	}
	return false
}

// ownedOf is the owned partitions of a heartbeat, nil when not sent.
func ownedOf(topics []kmsg.ConsumerGroupHeartbeatRequestTopic) assignment {
	if topics == nil {
		return nil
	}
	var tps []tp
	for _, t := range topics {
		for _, p := range t.Partitions {
			tps = append(tps, tp{t.TopicID, p})
		}
	}
	return assignmentOf(tps)
}

// subsetOf reports whether every partition of a is in b.
func subsetOf(a, b assignment) bool {
	for _, x := range a.tps() {
		if !b.has(x) {
			return false
		}
	}
	return true
}
