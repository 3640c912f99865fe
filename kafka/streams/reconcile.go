package streams

import (
	"maps"
	"slices"
	"time"
)

// delayed: the initial rebalance delay runs at now.
func (g *Group) delayed(now time.Time) bool {
	return g.DelayUntil > 0 && now.UnixMilli() < g.DelayUntil
}

// computeTarget recomputes every member's target assignment at the
// group epoch: empty while the topology is not ready or the initial
// rebalance delay runs.
func (g *Group) computeTarget(cfg Config, now time.Time) {
	g.AssignmentEpoch = g.Epoch
	g.Target = make(map[string]Tasks, len(g.Members))
	g.Delayed = g.delayed(now)
	if g.Delayed || !g.Ready || g.configured == nil || !g.configured.Ready() {
		for id := range g.Members {
			g.Target[id] = Tasks{}
		}
		return
	}
	spec := AssignSpec{
		Partitions: g.configured.Partitions, Stateful: map[string]bool{},
		NumStandby: cfg.NumStandby, MaxWarmup: cfg.MaxWarmup, AcceptableLag: cfg.AcceptableLag,
	}
	for _, s := range g.Topology.Subtopologies {
		spec.Stateful[s.ID] = s.stateful()
	}
	lags := map[string]map[Task]int64{}
	for _, id := range slices.Sorted(maps.Keys(g.Members)) {
		m := g.Members[id]
		if lags[m.ProcessID] == nil {
			lags[m.ProcessID] = g.lags(m.ProcessID)
		}
		prev := Tasks{
			Active:  union(m.Assigned.Active, m.Revoking.Active),
			Standby: union(m.Assigned.Standby, m.Revoking.Standby),
			Warmup:  union(m.Assigned.Warmup, m.Revoking.Warmup),
		}
		spec.Members = append(spec.Members, AssignMember{ID: id, Process: m.ProcessID, Prev: prev, Lags: lags[m.ProcessID], Warmups: m.Version >= 1})
	}
	for id, t := range Assign(spec) {
		g.Target[id] = t
	}
}

func union(a, b TaskSet) TaskSet { return setOf(append(a.list(), b.list()...)) }

// reconcile moves m toward its target (Kafka's CurrentAssignmentBuilder):
// tasks it must give up are revoked first, and m stays at its epoch
// until it reports (owned) that it no longer has them; then it moves to
// the target epoch with every target task no other member still holds.
// An active task goes to a member only when no other member owns it; a
// standby or warm-up only when no other member of the same process holds
// the task. Tasks held back are given on a later heartbeat.
func (g *Group) reconcile(m *Member, owned *Tasks) {
	target := g.Target[m.ID]
	switch m.State {
	case UnrevokedTasks:
		if owned == nil || !owned.intersect(m.Revoking).empty() {
			return
		}
	case Stable:
		if m.Epoch == g.AssignmentEpoch {
			return
		}
	}
	revoke := m.Assigned.minus(target)
	if !revoke.empty() {
		m.Assigned = m.Assigned.intersect(target)
		m.Revoking = revoke
		m.State = UnrevokedTasks
		return
	}
	next := Tasks{TaskSet{}, TaskSet{}, TaskSet{}}
	for _, t := range target.Active.list() {
		if m.Assigned.Active.has(t) || !g.heldActive(m, t) {
			next.Active = next.Active.add(t)
		}
	}
	for _, role := range []struct {
		from TaskSet
		to   *TaskSet
	}{{target.Standby, &next.Standby}, {target.Warmup, &next.Warmup}} {
		for _, t := range role.from.list() {
			if !g.heldInProcess(m, t) {
				*role.to = role.to.add(t)
			}
		}
	}
	if m.Epoch != g.AssignmentEpoch {
		m.PrevEpoch, m.Epoch = m.Epoch, g.AssignmentEpoch
	}
	m.Assigned, m.Revoking = next, Tasks{}
	m.State = Stable
	if !next.equal(target) {
		m.State = UnreleasedTasks
	}
}

func (g *Group) heldActive(self *Member, t Task) bool {
	for _, o := range g.Members {
		if o != self && (o.Assigned.Active.has(t) || o.Revoking.Active.has(t)) {
			return true
		}
	}
	return false
}

func (g *Group) heldInProcess(self *Member, t Task) bool {
	for _, o := range g.Members {
		if o == self || o.ProcessID != self.ProcessID {
			continue
		}
		for _, s := range []TaskSet{o.Assigned.Active, o.Assigned.Standby, o.Assigned.Warmup, o.Revoking.Active, o.Revoking.Standby, o.Revoking.Warmup} {
			if s.has(t) {
				return true
			}
		}
	}
	return false
}

// Converge lets members held back by tasks another member just released
// take them: the coordinator calls it for every member after a removal
// or revocation, as their next heartbeat would.
func (g *Group) Converge() {
	for _, id := range slices.Sorted(maps.Keys(g.Members)) {
		m := g.Members[id]
		if m.State == UnreleasedTasks && m.Epoch != EpochStaticLeave {
			g.reconcile(m, nil)
		}
	}
}
