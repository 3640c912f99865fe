package streams

import (
	"maps"
	"slices"
	"sort"
)

// AssignMember is a member as the assignor sees it.
type AssignMember struct {
	ID      string
	Process string
	// Prev are the tasks the member holds or was last given: what
	// stickiness keeps.
	Prev Tasks
	// Lags are the changelog lags the member's process reported, per
	// task (warm-ups); a task missing is not restored there.
	Lags map[Task]int64
	// Warmups: the member reports its restore progress (heartbeat v1+),
	// so a warm-up task given to it can be promoted.
	Warmups bool
}

// AssignSpec is the input of Assign.
type AssignSpec struct {
	Partitions    map[string]int32 // subtopology -> tasks
	Stateful      map[string]bool  // subtopologies with state stores
	Members       []AssignMember
	NumStandby    int   // standby replicas of every stateful task
	MaxWarmup     int   // warm-up tasks in the whole group at once
	AcceptableLag int64 // a process within this lag of a task is caught up
}

// Assign is the sticky task assignor. Its invariants:
//
//   - Every task is active on exactly one member; active tasks are
//     balanced across members (no member has two more than another), so
//     across processes in proportion to their members.
//   - Sticky: a task stays with the member that had it while that keeps
//     the balance (stateful tasks first, so that stateless ones move), else goes to another member of the process that had
//     it, else (stateful) to a member whose process has it as standby or
//     warm-up, else to the least loaded member.
//   - Warm-ups: a stateful task the balance moves to a process that has
//     not restored it within AcceptableLag stays active where it was
//     while that process still has a member, and the new member gets it
//     as a warm-up (at most MaxWarmup in the group); once caught up
//     (its lag reported), the next assignment moves it.
//   - Standbys: each stateful task gets up to NumStandby standby
//     replicas, each on a process that holds no other copy of it,
//     sticky first, else the least loaded member.
func Assign(spec AssignSpec) map[string]Tasks {
	members := slices.Clone(spec.Members)
	sort.Slice(members, func(i, j int) bool { return members[i].ID < members[j].ID })
	out := make(map[string]Tasks, len(members))
	if len(members) == 0 {
		return out
	}
	var tasks []Task
	for _, id := range slices.Sorted(maps.Keys(spec.Partitions)) {
		for p := int32(0); p < spec.Partitions[id]; p++ {
			tasks = append(tasks, Task{id, p})
		}
	}
	a := &assigner{spec: spec, members: members, active: make(map[Task]int), load: make([]int, len(members))}
	a.floor, a.extra = len(tasks)/len(members), len(tasks)%len(members)
	a.assignActive(tasks)
	warm := a.warmups(tasks)
	stand := a.standbys(tasks, warm)
	for i, m := range members {
		out[m.ID] = Tasks{Active: TaskSet{}, Standby: TaskSet{}, Warmup: TaskSet{}}
		_ = i
	}
	for t, i := range a.active {
		x := out[members[i].ID]
		x.Active = x.Active.add(t)
		out[members[i].ID] = x
	}
	for t, is := range stand {
		for _, i := range is {
			x := out[members[i].ID]
			x.Standby = x.Standby.add(t)
			out[members[i].ID] = x
		}
	}
	for t, i := range warm {
		x := out[members[i].ID]
		x.Warmup = x.Warmup.add(t)
		out[members[i].ID] = x
	}
	return out
}

type assigner struct {
	spec         AssignSpec
	members      []AssignMember
	active       map[Task]int // task -> member index
	load         []int        // active tasks per member
	floor, extra int
}

// canTake: the member is below its quota; floor+1 only while some of
// the len(tasks)%len(members) extra places are left.
func (a *assigner) canTake(i int) bool {
	return a.load[i] < a.floor || (a.load[i] == a.floor && a.extra > 0)
}

func (a *assigner) give(t Task, i int) {
	if a.load[i] == a.floor {
		a.extra--
	}
	a.load[i]++
	a.active[t] = i
}

// processLoad is a process's active tasks per member.
func (a *assigner) processLoad(proc string) float64 {
	n, l := 0, 0
	for i, m := range a.members {
		if m.Process == proc {
			n++
			l += a.load[i]
		}
	}
	return float64(l) / float64(n)
}

// leastLoaded is the member among ok that can take one more, least
// loaded first, then on the least loaded process, then by id.
func (a *assigner) leastLoaded(ok func(i int) bool) int {
	best := -1
	for i, m := range a.members {
		if !ok(i) || !a.canTake(i) {
			continue
		}
		if best < 0 || a.load[i] < a.load[best] ||
			(a.load[i] == a.load[best] && a.processLoad(m.Process) < a.processLoad(a.members[best].Process)) {
			best = i
		}
	}
	return best
}

func (a *assigner) assignActive(tasks []Task) {
	// Stateful tasks keep their place first: moving one costs a restore
	// (or a warm-up), moving a stateless one nothing.
	tasks = slices.Clone(tasks)
	slices.SortStableFunc(tasks, func(x, y Task) int {
		sx, sy := a.spec.Stateful[x.Subtopology], a.spec.Stateful[y.Subtopology]
		switch {
		case sx && !sy:
			return -1
		case !sx && sy:
			return 1
		}
		return 0
	})
	var rest []Task
	for _, t := range tasks { // the member that had it
		i := slices.IndexFunc(a.members, func(m AssignMember) bool { return m.Prev.Active.has(t) })
		if i >= 0 && a.canTake(i) {
			a.give(t, i)
			continue
		}
		rest = append(rest, t)
	}
	steps := []func(t Task) func(i int) bool{
		func(t Task) func(i int) bool { // another member of a process that had it
			procs := a.prevProcesses(t, func(p Tasks) TaskSet { return p.Active })
			return func(i int) bool { return procs[a.members[i].Process] }
		},
		func(t Task) func(i int) bool { // a process with its state: standby or warm-up
			if !a.spec.Stateful[t.Subtopology] {
				return func(int) bool { return false }
			}
			procs := a.prevProcesses(t, func(p Tasks) TaskSet { return p.Standby })
			for p := range a.prevProcesses(t, func(p Tasks) TaskSet { return p.Warmup }) {
				procs[p] = true
			}
			return func(i int) bool { return procs[a.members[i].Process] }
		},
		func(Task) func(i int) bool { return func(int) bool { return true } },
	}
	for _, step := range steps {
		var left []Task
		for _, t := range rest {
			if i := a.leastLoaded(step(t)); i >= 0 {
				a.give(t, i)
			} else {
				left = append(left, t)
			}
		}
		rest = left
	}
}

func (a *assigner) prevProcesses(t Task, role func(Tasks) TaskSet) map[string]bool {
	out := make(map[string]bool)
	for _, m := range a.members {
		if role(m.Prev).has(t) {
			out[m.Process] = true
		}
	}
	return out
}

// caughtUp: the member's process restored t within the acceptable lag,
// or already held it active (its state is local).
func (a *assigner) caughtUp(i int, t Task) bool {
	m := a.members[i]
	if a.prevProcesses(t, func(p Tasks) TaskSet { return p.Active })[m.Process] {
		return true
	}
	lag, ok := m.Lags[t]
	return ok && lag <= a.spec.AcceptableLag
}

// warmups keeps a stateful task active on its previous process while
// the member the balance chose restores it (see Assign); returns the
// warm-up tasks by member index.
func (a *assigner) warmups(tasks []Task) map[Task]int {
	out := make(map[Task]int)
	if a.spec.MaxWarmup <= 0 {
		return out
	}
	for _, t := range tasks {
		if len(out) >= a.spec.MaxWarmup {
			break
		}
		i := a.active[t]
		if !a.spec.Stateful[t.Subtopology] || !a.members[i].Warmups || a.caughtUp(i, t) {
			continue
		}
		procs := a.prevProcesses(t, func(p Tasks) TaskSet { return p.Active })
		if len(procs) == 0 {
			continue // nobody has its state: nothing to wait for
		}
		prev := -1
		for j, m := range a.members {
			if procs[m.Process] && (prev < 0 || a.members[j].Prev.Active.has(t) || a.load[j] < a.load[prev]) {
				prev = j
				if m.Prev.Active.has(t) {
					break
				}
			}
		}
		a.load[i]--
		a.load[prev]++
		a.active[t] = prev
		out[t] = i
	}
	return out
}

// standbys places each stateful task's standby replicas (see Assign).
func (a *assigner) standbys(tasks []Task, warm map[Task]int) map[Task][]int {
	out := make(map[Task][]int)
	if a.spec.NumStandby <= 0 {
		return out
	}
	sload := make([]int, len(a.members))
	for _, t := range tasks {
		if !a.spec.Stateful[t.Subtopology] {
			continue
		}
		used := map[string]bool{a.members[a.active[t]].Process: true}
		if w, ok := warm[t]; ok {
			used[a.members[w].Process] = true
		}
		for r := 0; r < a.spec.NumStandby; r++ {
			best := -1
			score := func(i int) int { // lower is better: sticky first
				m := a.members[i]
				switch {
				case m.Prev.Standby.has(t):
					return 0
				case m.Prev.Active.has(t) || m.Prev.Warmup.has(t):
					return 1
				}
				return 2
			}
			for i, m := range a.members {
				if used[m.Process] {
					continue
				}
				if best < 0 || score(i) < score(best) ||
					(score(i) == score(best) && a.load[i]+sload[i] < a.load[best]+sload[best]) {
					best = i
				}
			}
			if best < 0 {
				break // fewer processes than replicas: Kafka leaves them out too
			}
			used[a.members[best].Process] = true
			sload[best]++
			out[t] = append(out[t], best)
		}
	}
	return out
}
