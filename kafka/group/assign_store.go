package group

import (
	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The leader's assignment is stored the way Kafka's coordinator stores it
// (its SyncGroup handler appends the group's record and completes the
// syncs in the append's callback): the group stays CompletingRebalance
// while the synced write of the generation with its assignment runs, and
// the group's lock is not held through that write. Only when the write is
// durable, and nothing overtook the generation meanwhile, does the group
// become Stable with the assignment and the waiting syncs get it.
//
// What that changes is what a member sees when it joins during the write:
// the group is CompletingRebalance, so its join starts the next rebalance
// at once and every waiting sync is answered REBALANCE_IN_PROGRESS (the
// members rejoin right away), as on Kafka. With the lock held through the
// write the join waited for it, found the group Stable, and the other
// members only learned of the rebalance at their next heartbeat.
//
// Durability is unchanged (durable classic membership): no sync is
// answered with an assignment before the record holding it is durable,
// and the in-memory group shows the assignment only after that. A write
// overtaken by a rebalance leaves the record of a generation no member
// was told about, as Kafka's log keeps it; the next generation's record
// replaces it. Writes of one group's record stay in order: every writer
// holds the group's writes mutex through its store call, and this one
// takes it before it lets go of the group's lock.

// assignWrite is a leader's assignment being made durable.
type assignWrite struct {
	seq  uint64            // the group's assigning while this write is current
	byID map[string][]byte // member id → assignment (members left out: empty)
	rec  offsets.ClassicGroup
}

// startAssignLocked begins storing the leader's assignment: the write runs
// on its own goroutine, without the group's lock, and the group stays
// CompletingRebalance until it is durable (finishAssignLocked). A leader's
// sync repeated while a write runs just waits for it. Needs mu.
func (g *group) startAssignLocked(assignments []kmsg.SyncGroupRequestGroupAssignment) {
	if g.mu.assigning != 0 || g.c.closing.Load() {
		return // a closing coordinator answers the syncs itself (ErrClosed)
	}
	w := &assignWrite{seq: g.nextSeqLocked(), byID: make(map[string][]byte, len(assignments))}
	for _, a := range assignments {
		w.byID[a.MemberID] = a.MemberAssignment
	}
	for id := range g.mu.members {
		if w.byID[id] == nil {
			w.byID[id] = []byte{}
		}
	}
	w.rec = g.stateLocked()
	w.rec.StateTime = g.c.clock.Now()
	for i := range w.rec.Members {
		w.rec.Members[i].Assignment = w.byID[w.rec.Members[i].ID]
	}
	g.mu.assigning = w.seq
	g.writes.Lock() // before mu is let go: this write is ordered before any later one
	g.assigns.Add(1)
	go g.storeAssign(w)
}

// storeAssign writes w synced, then finishes the assignment under the
// group's lock. It holds the writes mutex (taken by startAssignLocked).
func (g *group) storeAssign(w *assignWrite) {
	defer g.assigns.Done()
	err := g.c.store.PutClassicGroup(w.rec, g.c.cfg.MaxGroupStateBytes)
	g.writes.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.finishAssignLocked(w, err)
}

// finishAssignLocked ends w's write. If a rebalance overtook the
// generation meanwhile (the syncs then were answered REBALANCE_IN_PROGRESS
// already) nothing happens. Otherwise the group becomes Stable and every
// waiting sync gets its assignment; or, if the write failed, they get the
// error and the group rebalances, as in Kafka. Needs mu.
func (g *group) finishAssignLocked(w *assignWrite, err error) {
	if g.c.closing.Load() || g.mu.assigning != w.seq || g.mu.state != stateCompletingRebalance {
		return
	}
	g.mu.assigning = 0
	if code := g.persistCode(err); code != errNone {
		for _, m := range g.mu.members {
			m.assignment = nil
			m.answerSyncLocked(syncResult{code: code})
		}
		g.prepareRebalanceLocked()
		return
	}
	g.transitionLocked(stateStable)
	g.mu.stateTime = w.rec.StateTime
	for _, m := range g.mu.members {
		m.assignment = w.byID[m.id]
		if m.awaitingSync() {
			m.answerSyncLocked(g.syncAnswerLocked(m))
			g.scheduleSessionLocked(m)
		}
	}
}
