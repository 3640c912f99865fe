package group

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

func tid(name string) topicID {
	var id topicID
	copy(id[:], name)
	return id
}

func specOf(members []string, subs map[string][]string, parts map[string]int32) assignSpec {
	s := assignSpec{members: members, subscribed: map[string]map[topicID]bool{}, partitions: map[topicID]int32{}, previous: map[string]assignment{}}
	for name, n := range parts {
		s.partitions[tid(name)] = n
	}
	for m, ts := range subs {
		s.subscribed[m] = map[topicID]bool{}
		for _, t := range ts {
			s.subscribed[m][tid(t)] = true
		}
	}
	return s
}

// checkExact: every subscribed partition goes to exactly one member that
// subscribes to its topic (the group epoch and target assignment).
func checkExact(t *testing.T, s assignSpec, out map[string]assignment) {
	t.Helper()
	owner := map[tp]string{}
	for m, a := range out {
		for _, x := range a.tps() {
			if o, ok := owner[x]; ok {
				t.Fatalf("%v given to %s and %s", x, o, m)
			}
			if !s.subscribed[m][x.topic] {
				t.Fatalf("%v given to %s, not subscribed", x, m)
			}
			owner[x] = m
		}
	}
	for id, n := range s.partitions {
		sub := false
		for _, m := range s.members {
			sub = sub || s.subscribed[m][id]
		}
		for p := int32(0); p < n && sub; p++ {
			if _, ok := owner[tp{id, p}]; !ok {
				t.Fatalf("partition %v unassigned", tp{id, p})
			}
		}
	}
}

// Range: per topic, contiguous ranges in member order, the first members
// one more.
func TestAssignRange(t *testing.T) {
	s := specOf([]string{"a", "b", "c"}, map[string][]string{"a": {"x", "y"}, "b": {"x", "y"}, "c": {"x"}},
		map[string]int32{"x": 7, "y": 3})
	out := assign(assignorRange, s)
	checkExact(t, s, out)
	want := map[string]string{
		"a": "x[0 1 2] y[0 1]", "b": "x[3 4] y[2]", "c": "x[5 6] y[]",
	}
	for m, w := range want {
		if got := fmt.Sprintf("x%v y%v", out[m][tid("x")], fmt.Sprint(nilEmpty(out[m][tid("y")]))); got != w {
			t.Fatalf("%s: %s, want %s", m, got, w)
		}
	}
}

func nilEmpty(p []int32) []int32 {
	if p == nil {
		return []int32{}
	}
	return p
}

// Uniform: counts differ by at most one for equal subscriptions, a member
// joining takes only what it needs (the others keep the rest), and with
// random differing subscriptions every partition still goes exactly once.
func TestAssignUniform(t *testing.T) {
	subs := map[string][]string{"a": {"x", "y"}, "b": {"x", "y"}}
	s := specOf([]string{"a", "b"}, subs, map[string]int32{"x": 5, "y": 4})
	first := assign(assignorUniform, s)
	checkExact(t, s, first)
	if a, b := first["a"].count(), first["b"].count(); a+b != 9 || a-b > 1 || b-a > 1 {
		t.Fatalf("uneven: %d and %d", a, b)
	}
	subs["c"] = []string{"x", "y"}
	s2 := specOf([]string{"a", "b", "c"}, subs, map[string]int32{"x": 5, "y": 4})
	s2.previous = first
	second := assign(assignorUniform, s2)
	checkExact(t, s2, second)
	for _, m := range []string{"a", "b"} {
		if c := second[m].count(); c != 3 || !subsetOf(second[m], first[m]) {
			t.Fatalf("%s: %v, had %v: not sticky", m, second[m], first[m])
		}
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		topics := []string{"t0", "t1", "t2", "t3"}
		parts := map[string]int32{}
		for _, tn := range topics {
			parts[tn] = int32(rng.Intn(6))
		}
		var members []string
		subs := map[string][]string{}
		for m := 0; m < 1+rng.Intn(5); m++ {
			id := fmt.Sprintf("m%d", m)
			members = append(members, id)
			for _, tn := range topics {
				if rng.Intn(2) == 0 {
					subs[id] = append(subs[id], tn)
				}
			}
		}
		s := specOf(members, subs, parts)
		checkExact(t, s, assign(assignorUniform, s))
		checkExact(t, s, assign(assignorRange, s))
	}
}

// Uniform, sticky: as members join one at a time, the old members only
// give partitions up and only the new member gains (no partition moves
// between old members, each such move a revocation the receiver waits
// for); as members leave, the others only gain. Counts stay within one.
func TestAssignUniformMovesOnlyWhatItMust(t *testing.T) {
	parts := map[string]int32{"x": 100, "y": 7}
	subs := map[string][]string{}
	var members []string
	prev := map[string]assignment{}
	step := func(what string, check func(m string, before, after assignment)) {
		t.Helper()
		s := specOf(members, subs, parts)
		s.previous = prev
		out := assign(assignorUniform, s)
		checkExact(t, s, out)
		lo, hi := 1<<30, 0
		for _, m := range members {
			lo, hi = min(lo, out[m].count()), max(hi, out[m].count())
			check(m, prev[m], out[m])
		}
		if hi-lo > 1 {
			t.Fatalf("%s: counts from %d to %d", what, lo, hi)
		}
		prev = out
	}
	for i := range 30 {
		id := fmt.Sprintf("m%02d", (i*7)%30) // joins out of id order
		members = append(members, id)
		slices.Sort(members)
		subs[id] = []string{"x", "y"}
		step("join of "+id, func(m string, before, after assignment) {
			if m != id && !subsetOf(after, before) {
				t.Fatalf("join of %s: old member %s gained: had %v, now %v", id, m, before, after)
			}
		})
	}
	for len(members) > 1 {
		gone := members[len(members)/2]
		members = slices.DeleteFunc(members, func(m string) bool { return m == gone })
		delete(subs, gone)
		step("leave of "+gone, func(m string, before, after assignment) {
			if !subsetOf(before, after) {
				t.Fatalf("leave of %s: %s lost partitions: had %v, now %v", gone, m, before, after)
			}
		})
	}
}
