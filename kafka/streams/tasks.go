package streams

import (
	"maps"
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TaskSet is a set of tasks: subtopology id -> sorted partitions.
type TaskSet map[string][]int32

// Task is one task: a partition of a subtopology.
type Task struct {
	Subtopology string
	Partition   int32
}

// Tasks are the tasks of one member by role.
type Tasks struct {
	Active  TaskSet `json:"active,omitempty"`
	Standby TaskSet `json:"standby,omitempty"`
	Warmup  TaskSet `json:"warmup,omitempty"`
}

func (s TaskSet) has(t Task) bool {
	_, ok := slices.BinarySearch(s[t.Subtopology], t.Partition)
	return ok
}

func (s TaskSet) list() []Task {
	var out []Task
	for _, id := range slices.Sorted(maps.Keys(s)) {
		for _, p := range s[id] {
			out = append(out, Task{id, p})
		}
	}
	return out
}

func (s TaskSet) size() int {
	n := 0
	for _, ps := range s {
		n += len(ps)
	}
	return n
}

func setOf(tasks []Task) TaskSet {
	out := TaskSet{}
	for _, t := range tasks {
		out[t.Subtopology] = append(out[t.Subtopology], t.Partition)
	}
	for id := range out {
		slices.Sort(out[id])
		out[id] = slices.Compact(out[id])
	}
	return out
}

func (s TaskSet) add(t Task) TaskSet {
	if s == nil {
		s = TaskSet{}
	}
	ps := s[t.Subtopology]
	i, ok := slices.BinarySearch(ps, t.Partition)
	if !ok {
		s[t.Subtopology] = slices.Insert(ps, i, t.Partition)
	}
	return s
}

// minus is s without the tasks of o (a new set).
func (s TaskSet) minus(o TaskSet) TaskSet {
	var out []Task
	for _, t := range s.list() {
		if !o.has(t) {
			out = append(out, t)
		}
	}
	return setOf(out)
}

// intersect is s ∩ o (a new set).
func (s TaskSet) intersect(o TaskSet) TaskSet {
	var out []Task
	for _, t := range s.list() {
		if o.has(t) {
			out = append(out, t)
		}
	}
	return setOf(out)
}

func (s TaskSet) equal(o TaskSet) bool { return s.size() == o.size() && s.minus(o).size() == 0 }

func (t Tasks) empty() bool { return t.Active.size()+t.Standby.size()+t.Warmup.size() == 0 }

func (t Tasks) equal(o Tasks) bool {
	return t.Active.equal(o.Active) && t.Standby.equal(o.Standby) && t.Warmup.equal(o.Warmup)
}

func (t Tasks) minus(o Tasks) Tasks {
	return Tasks{t.Active.minus(o.Active), t.Standby.minus(o.Standby), t.Warmup.minus(o.Warmup)}
}

func (t Tasks) intersect(o Tasks) Tasks {
	return Tasks{t.Active.intersect(o.Active), t.Standby.intersect(o.Standby), t.Warmup.intersect(o.Warmup)}
}

func fromWire(ids []kmsg.TaskIDs) TaskSet {
	var out []Task
	for _, x := range ids {
		for _, p := range x.Partitions {
			out = append(out, Task{x.SubtopologyID, p})
		}
	}
	return setOf(out)
}

func toWire(s TaskSet) []kmsg.TaskIDs {
	out := []kmsg.TaskIDs{}
	ids := slices.Collect(maps.Keys(s))
	sort.Strings(ids)
	for _, id := range ids {
		if len(s[id]) == 0 {
			continue
		}
		x := kmsg.NewTaskIDs()
		x.SubtopologyID, x.Partitions = id, slices.Clone(s[id])
		out = append(out, x)
	}
	return out
}
