package group

import (
	"bytes"
	"container/heap"
	"slices"
)

// Server-side assignors of the consumer protocol (KIP-848), named as in
// Kafka: "uniform" (the default) and "range".
const (
	assignorUniform = "uniform"
	assignorRange   = "range"
)

// DefaultConsumerAssignors is group.consumer.assignors: the first is the
// default when no member names one.
var DefaultConsumerAssignors = []string{assignorUniform, assignorRange}

func knownAssignor(name string) bool { return name == assignorUniform || name == assignorRange }

// topicID is a topic's 16-byte id, the key of every consumer-protocol
// assignment.
type topicID = [16]byte

// tp is one partition of a topic, by id.
type tp struct {
	topic topicID
	part  int32
}

func compareTP(a, b tp) int {
	if c := bytes.Compare(a.topic[:], b.topic[:]); c != 0 {
		return c
	}
	return int(a.part) - int(b.part)
}

// assignment is a member's partitions: topic id -> sorted partitions.
type assignment map[topicID][]int32

func (a assignment) tps() []tp {
	if len(a) == 0 {
		return nil
	}
	out := make([]tp, 0, a.count())
	for t, ps := range a {
		for _, p := range ps {
			out = append(out, tp{t, p})
		}
	}
	if !slices.IsSortedFunc(out, compareTP) { // one topic's partitions are kept sorted
		slices.SortFunc(out, compareTP)
	}
	return out
}

func (a assignment) count() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

func (a assignment) has(t tp) bool {
	_, ok := slices.BinarySearch(a[t.topic], t.part)
	return ok
}

func (a assignment) clone() assignment {
	out := make(assignment, len(a))
	for t, ps := range a {
		out[t] = slices.Clone(ps)
	}
	return out
}

func (a assignment) equal(b assignment) bool {
	if a.count() != b.count() {
		return false
	}
	for t, ps := range a {
		if !slices.Equal(ps, b[t]) {
			return false
		}
	}
	return true
}

func assignmentOf(tps []tp) assignment {
	a := make(assignment, 1)
	for _, x := range tps {
		ps, ok := a[x.topic]
		if !ok && len(a) == 0 {
			ps = make([]int32, 0, len(tps)) // most assignments are of one topic
		}
		a[x.topic] = append(ps, x.part)
	}
	for t, ps := range a {
		if !increasing(ps) { // given in order (the assignors), nothing to do
			slices.Sort(ps)
			a[t] = slices.Compact(ps)
		}
	}
	return a
}

// increasing reports whether ps is sorted without repeats.
func increasing(ps []int32) bool {
	for i := 1; i < len(ps); i++ {
		if ps[i] <= ps[i-1] {
			return false
		}
	}
	return true
}

// assignSpec is an assignor's input: each member's subscribed topic ids
// (resolved from names and regexes), the partition counts of those topics
// and the previous target assignment, which both assignors keep where
// they can (stickiness spares revocations).
type assignSpec struct {
	members    []string // sorted member ids
	subscribed map[string]map[topicID]bool
	partitions map[topicID]int32
	previous   map[string]assignment
}

// assign runs the named assignor; the result has an entry (possibly
// empty) for every member and gives each subscribed partition to exactly
// one member subscribed to its topic (the group epoch and target assignment).
func assign(name string, s assignSpec) map[string]assignment {
	if name == assignorRange {
		return assignRange(s)
	}
	return assignUniform(s)
}

// assignRange is Kafka's range assignor: per topic, its subscribers in
// member order each get a contiguous range; the first partitions%members
// subscribers get one more.
func assignRange(s assignSpec) map[string]assignment {
	out := make(map[string]assignment, len(s.members))
	for _, m := range s.members {
		out[m] = make(assignment)
	}
	for _, t := range sortedTopics(s.partitions) {
		var subs []string
		for _, m := range s.members {
			if s.subscribed[m][t] {
				subs = append(subs, m)
			}
		}
		if len(subs) == 0 {
			continue
		}
		n := int(s.partitions[t])
		per, extra := n/len(subs), n%len(subs)
		next := 0
		for i, m := range subs {
			k := per
			if i < extra {
				k++
			}
			for p := next; p < next+k; p++ {
				out[m][t] = append(out[m][t], int32(p))
			}
			next += k
		}
	}
	return out
}

// assignUniform spreads every subscribed partition so that members'
// counts differ by at most one wherever subscriptions allow, keeping each
// member's previous partitions up to its quota (sticky): as Kafka's
// uniform assignor, with T partitions over N members every member may
// keep ⌊T/N⌋ and only the T mod N members that held the most may keep
// one more, so a change moves only what it must. When a member joins,
// the others give up only their excess and only the new member gains;
// a cap of ⌈T/N⌉ for everyone would keep too much, and the balancing
// would then move partitions between old members too, each move a
// revocation one member must finish before another may take it.
func assignUniform(s assignSpec) map[string]assignment {
	if len(s.members) == 0 {
		return map[string]assignment{}
	}
	owner := make(map[tp]string)
	counts := make(map[string]int, len(s.members))
	var all []tp
	for _, t := range sortedTopics(s.partitions) {
		for p := int32(0); p < s.partitions[t]; p++ {
			all = append(all, tp{t, p})
		}
	}
	eligible := func(m string, x tp) bool { return s.subscribed[m][x.topic] }
	same := sameSubscriptions(s)
	total := len(all)
	if !same {
		total = 0
		for _, x := range all {
			for _, m := range s.members {
				if eligible(m, x) {
					total++
					break
				}
			}
		}
	}
	// 1. Keep previous partitions, up to each member's quota.
	prev := make(map[string][]tp, len(s.members))
	for _, m := range s.members {
		prev[m] = s.previous[m].tps()
	}
	quota := uniformQuotas(s, prev, total, eligible)
	for _, m := range s.members {
		for _, x := range prev[m] {
			if counts[m] >= quota[m] || !eligible(m, x) || x.part >= s.partitions[x.topic] {
				continue
			}
			if _, taken := owner[x]; taken {
				continue
			}
			owner[x] = m
			counts[m]++
		}
	}
	// 2. Give the rest, each to the eligible member with the fewest (the
	// first in member order among equals).
	if same {
		fillFewest(all, owner, counts, s.members)
	} else {
		for _, x := range all {
			if _, ok := owner[x]; ok {
				continue
			}
			best := ""
			for _, m := range s.members {
				if eligible(m, x) && (best == "" || counts[m] < counts[best]) {
					best = m
				}
			}
			if best != "" {
				owner[x] = best
				counts[best]++
			}
		}
	}
	// 3. With differing subscriptions step 2 may leave a member two or
	// more above one that could take a partition: each pass moves such
	// partitions to the least loaded eligible member. Every move lowers
	// the sum of squared counts; the pass bound keeps the work at
	// O(passes × partitions × members) whatever the subscriptions. With
	// the same subscriptions everywhere steps 1 and 2 already leave
	// counts within one, and the passes would only cost that work on
	// every join of a large group.
	for pass := 0; !same && pass < maxBalancePasses; pass++ {
		if !balancePass(all, owner, counts, s.members, eligible) {
			break
		}
	}
	out := make(map[string][]tp, len(s.members))
	for _, x := range all {
		if m, ok := owner[x]; ok {
			out[m] = append(out[m], x)
		}
	}
	res := make(map[string]assignment, len(s.members))
	for _, m := range s.members {
		res[m] = assignmentOf(out[m])
	}
	return res
}

// sameSubscriptions reports whether every member subscribes to every
// topic of the assignment (the common case, and Kafka's homogeneous one).
func sameSubscriptions(s assignSpec) bool {
	for _, m := range s.members {
		for t := range s.partitions {
			if !s.subscribed[m][t] {
				return false
			}
		}
	}
	return true
}

// fillFewest gives each partition without an owner to the member with the
// fewest, the first in member order among equals, every member being
// eligible: a heap makes it O(partitions × log members).
func fillFewest(all []tp, owner map[tp]string, counts map[string]int, members []string) {
	h := make(loadHeap, len(members))
	for i, m := range members {
		h[i] = memberLoad{id: m, order: i, count: counts[m]}
	}
	heap.Init(&h)
	for _, x := range all {
		if _, ok := owner[x]; ok {
			continue
		}
		owner[x] = h[0].id
		h[0].count++
		counts[h[0].id]++
		heap.Fix(&h, 0)
	}
}

// loadHeap orders members by count, then by their order in the spec.
type memberLoad struct {
	id           string
	order, count int
}

type loadHeap []memberLoad

func (h loadHeap) Len() int { return len(h) }
func (h loadHeap) Less(i, j int) bool {
	if h[i].count != h[j].count {
		return h[i].count < h[j].count
	}
	return h[i].order < h[j].order
}
func (h loadHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *loadHeap) Push(x any)   { *h = append(*h, x.(memberLoad)) }
func (h *loadHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// uniformQuotas is how many of its previous partitions each member may
// keep: ⌊total/N⌋, and one more for the total mod N members that still
// hold the most of theirs (ties in member order), as Kafka's
// UniformHomogeneousAssignmentBuilder gives the extra partitions to
// members that already have them.
func uniformQuotas(s assignSpec, prev map[string][]tp, total int, eligible func(string, tp) bool) map[string]int {
	n := len(s.members)
	lo, extra := total/n, total%n
	held := make(map[string]int, n)
	for _, m := range s.members {
		for _, x := range prev[m] {
			if eligible(m, x) && x.part < s.partitions[x.topic] {
				held[m]++
			}
		}
	}
	byHeld := slices.Clone(s.members)
	slices.SortStableFunc(byHeld, func(a, b string) int { return held[b] - held[a] })
	quota := make(map[string]int, n)
	for i, m := range byHeld {
		quota[m] = lo
		if i < extra {
			quota[m]++
		}
	}
	return quota
}

// maxBalancePasses bounds the uniform assignor's balancing (step 3).
const maxBalancePasses = 8

// balancePass moves each partition whose owner holds two or more than the
// least loaded member eligible for it to that member; it reports a move.
func balancePass(all []tp, owner map[tp]string, counts map[string]int, members []string, eligible func(string, tp) bool) bool {
	moved := false
	for _, x := range all {
		from, ok := owner[x]
		if !ok {
			continue
		}
		to := ""
		for _, m := range members {
			if m != from && eligible(m, x) && (to == "" || counts[m] < counts[to]) {
				to = m
			}
		}
		if to != "" && counts[to] < counts[from]-1 {
			owner[x] = to
			counts[from]--
			counts[to]++
			moved = true
		}
	}
	return moved
}

func sortedTopics(parts map[topicID]int32) []topicID {
	out := make([]topicID, 0, len(parts))
	for t := range parts {
		out = append(out, t)
	}
	sortTopicIDs(out)
	return out
}

// sortTopicIDs sorts ids; most groups subscribe to one topic, which needs
// nothing.
func sortTopicIDs(ids []topicID) {
	if len(ids) > 1 {
		slices.SortFunc(ids, func(a, b topicID) int { return bytes.Compare(a[:], b[:]) })
	}
}
