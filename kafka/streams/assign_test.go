package streams

import (
	"fmt"
	"testing"
)

func members(n int, procs int) []AssignMember {
	var out []AssignMember
	for i := 0; i < n; i++ {
		out = append(out, AssignMember{ID: fmt.Sprintf("m%02d", i), Process: fmt.Sprintf("p%d", i%procs)})
	}
	return out
}

func activeCount(a map[string]Tasks) (min, max, total int) {
	min = 1 << 30
	for _, t := range a {
		n := t.Active.size()
		total += n
		if n < min {
			min = n
		}
		if n > max {
			max = n
		}
	}
	return
}

// checkActiveOnce: every task is active on exactly one member.
func checkActiveOnce(t *testing.T, parts map[string]int32, a map[string]Tasks) {
	t.Helper()
	seen := map[Task]string{}
	for id, x := range a {
		for _, task := range x.Active.list() {
			if other, dup := seen[task]; dup {
				t.Fatalf("task %v active on %s and %s", task, other, id)
			}
			seen[task] = id
		}
	}
	want := 0
	for _, n := range parts {
		want += int(n)
	}
	if len(seen) != want {
		t.Fatalf("%d tasks active, want %d", len(seen), want)
	}
}

// Active tasks are balanced across members (at most one apart) for any
// number of tasks and members, so across processes by their members.
func TestAssignBalanced(t *testing.T) {
	for _, c := range []struct{ tasks, members, procs int }{{8, 3, 3}, {8, 3, 2}, {1, 4, 2}, {7, 7, 1}, {100, 9, 4}} {
		parts := map[string]int32{"0": int32(c.tasks)}
		a := Assign(AssignSpec{Partitions: parts, Members: members(c.members, c.procs)})
		checkActiveOnce(t, parts, a)
		if lo, hi, _ := activeCount(a); hi-lo > 1 {
			t.Fatalf("%+v: loads from %d to %d", c, lo, hi)
		}
		// Stickiness does not beat balance: one member had every task.
		ms := members(c.members, c.procs)
		ms[0].Prev = Tasks{Active: setOf(a[ms[0].ID].Active.list())}
		for _, x := range a {
			ms[0].Prev.Active = union(ms[0].Prev.Active, x.Active)
		}
		a = Assign(AssignSpec{Partitions: parts, Members: ms})
		checkActiveOnce(t, parts, a)
		if lo, hi, _ := activeCount(a); hi-lo > 1 {
			t.Fatalf("%+v, one member having had all: loads from %d to %d", c, lo, hi)
		}
	}
}

// Sticky: a member that joins takes only its share; the others keep
// what they had.
func TestAssignSticky(t *testing.T) {
	parts := map[string]int32{"0": 6, "1": 6}
	ms := members(2, 2)
	first := Assign(AssignSpec{Partitions: parts, Members: ms})
	for i := range ms {
		ms[i].Prev = first[ms[i].ID]
	}
	ms = append(ms, AssignMember{ID: "m99", Process: "p9"})
	second := Assign(AssignSpec{Partitions: parts, Members: ms})
	checkActiveOnce(t, parts, second)
	moved := 0
	for _, m := range ms[:2] {
		moved += first[m.ID].Active.minus(second[m.ID].Active).size()
	}
	if moved != second["m99"].Active.size() || moved != 4 {
		t.Fatalf("%d tasks moved, the new member has %d; want 4 and 4", moved, second["m99"].Active.size())
	}
	// A member of the same process replacing one that went keeps its tasks
	// in the process.
	ms2 := []AssignMember{ms[0], {ID: "m50", Process: ms[1].Process}, ms[2]}
	ms2[0].Prev, ms2[2].Prev = second[ms[0].ID], second["m99"]
	prevOfGone := second[ms[1].ID]
	ms2[1].Prev = Tasks{}
	third := Assign(AssignSpec{Partitions: parts, Members: ms2})
	if !third["m50"].Active.equal(prevOfGone.Active) {
		t.Fatalf("same-process replacement got %v, its process had %v", third["m50"].Active, prevOfGone.Active)
	}
}

// Standbys: each stateful task gets NumStandby replicas on processes
// that hold no other copy; stateless tasks none; fewer processes than
// replicas leave the rest out.
func TestAssignStandbys(t *testing.T) {
	parts := map[string]int32{"stateless": 4, "stateful": 4}
	spec := AssignSpec{Partitions: parts, Stateful: map[string]bool{"stateful": true}, NumStandby: 2, Members: members(4, 2)}
	a := Assign(spec)
	checkActiveOnce(t, parts, a)
	proc := map[string]string{}
	for _, m := range spec.Members {
		proc[m.ID] = m.Process
	}
	for p := int32(0); p < 4; p++ {
		task := Task{"stateful", p}
		procs := map[string]int{}
		for id, x := range a {
			if x.Active.has(task) || x.Standby.has(task) {
				procs[proc[id]]++
			}
		}
		if len(procs) != 2 {
			t.Fatalf("task %v on processes %v: want its active and one standby on the two processes", task, procs)
		}
		for pr, n := range procs {
			if n != 1 {
				t.Fatalf("task %v: %d copies on process %s", task, n, pr)
			}
		}
	}
	for id, x := range a {
		if x.Standby["stateless"] != nil {
			t.Fatalf("%s has standbys of a stateless subtopology: %v", id, x.Standby)
		}
	}
}

// Warm-ups: a stateful task the balance moves to a process that has not
// restored it stays active where it was, the new member warms it up (at
// most MaxWarmup); reported caught up, it moves.
func TestAssignWarmups(t *testing.T) {
	parts := map[string]int32{"s": 4}
	old := AssignMember{ID: "a", Process: "p1", Prev: Tasks{Active: setOf([]Task{{"s", 0}, {"s", 1}, {"s", 2}, {"s", 3}})}, Warmups: true}
	fresh := AssignMember{ID: "b", Process: "p2", Warmups: true}
	spec := AssignSpec{Partitions: parts, Stateful: map[string]bool{"s": true}, MaxWarmup: 1, AcceptableLag: 10,
		Members: []AssignMember{old, fresh}}
	a := Assign(spec)
	checkActiveOnce(t, parts, a)
	if a["a"].Active.size() != 3 || a["b"].Active.size() != 1 || a["b"].Warmup.size() != 1 {
		t.Fatalf("a %v, b %v warm-up %v: want 3 active on a, 1 active and 1 warm-up on b", a["a"].Active, a["b"].Active, a["b"].Warmup)
	}
	w := a["b"].Warmup.list()[0]
	spec.Members[0].Prev, spec.Members[1].Prev = a["a"], a["b"]
	spec.Members[1].Lags = map[Task]int64{w: 5}
	b := Assign(spec)
	if !b["b"].Active.has(w) || b["b"].Active.size() != 2 {
		t.Fatalf("caught-up warm-up %v not promoted: b %v", w, b["b"])
	}
	// Without warm-up support the task just moves.
	spec.MaxWarmup = 0
	spec.Members[1].Prev, spec.Members[1].Lags = Tasks{}, nil
	spec.Members[0].Prev = old.Prev
	c := Assign(spec)
	if c["b"].Active.size() != 2 || c["b"].Warmup.size() != 0 {
		t.Fatalf("without warm-ups: b %v", c["b"])
	}
}
