package group

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// awaitHarness is a consumer group of a (owning all four partitions of
// t) and b (joined, its target two partitions a still owns), with
// heartbeats waiting at most wait for releases.
func awaitHarness(t *testing.T, wait time.Duration) (*harness, *cm, *cm) {
	t.Helper()
	topics := &staticTopics{}
	topics.add("t", 4)
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics, ConsumerReleaseWait: wait}}
	h.open()
	a, b := &cm{id: "a", topics: []string{"t"}}, &cm{id: "b", topics: []string{"t"}}
	code(t, "a joins", h.beat("g", a, true).ErrorCode, nil)
	code(t, "b joins", h.beat("g", b, true).ErrorCode, nil)
	if a.owned.count() != 4 || b.owned.count() != 0 {
		t.Fatalf("after the joins a owns %v, b %v", a.owned, b.owned)
	}
	return h, a, b
}

// beatAsync sends m's heartbeat on a goroutine of its own.
func (h *harness) beatAsync(m *cm) <-chan *kmsg.ConsumerGroupHeartbeatResponse {
	out := make(chan *kmsg.ConsumerGroupHeartbeatResponse, 1)
	go func() { out <- h.beat("g", m, false) }()
	return out
}

// waitAwaiting waits until a heartbeat of group g waits for releases.
func (h *harness) waitAwaiting(what string) {
	h.t.Helper()
	g := h.c.lookup("g")
	for deadline := time.Now().Add(waitFor); ; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		waiting := g.mu.applied != nil
		g.mu.Unlock()
		if waiting {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s never waited for the releases", what)
		}
	}
}

func (h *harness) answer(ch <-chan *kmsg.ConsumerGroupHeartbeatResponse, what string) *kmsg.ConsumerGroupHeartbeatResponse {
	h.t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitFor):
		h.t.Fatalf("%s never answered", what)
		return nil
	}
}

// Releases soon to come: b's heartbeat, arriving after a was told to
// revoke b's partitions and before a's release, waits for the release
// and is answered with the partitions in that same heartbeat (it used to
// get nothing and wait a heartbeat interval more).
func TestConsumerBeatWaitsForToldRelease(t *testing.T) {
	h, a, b := awaitHarness(t, time.Minute) // woken by the release, not the bound
	code(t, "a told to revoke", h.beat("g", a, false).ErrorCode, nil)
	if a.owned.count() != 2 {
		t.Fatalf("a owns %v after being told to revoke", a.owned)
	}
	got := h.beatAsync(b)
	h.waitAwaiting("b's heartbeat")
	code(t, "a releases", h.beat("g", a, false).ErrorCode, nil)
	code(t, "b", h.answer(got, "b's heartbeat").ErrorCode, nil)
	if b.owned.count() != 2 {
		t.Fatalf("b's heartbeat after a's release: b owns %v, want the 2 a released", b.owned)
	}
	noDoubleOwnership(t, []*cm{a, b})
}

// Releases soon to come, bounded: if the owner told to revoke does not
// release, the waiting heartbeat is answered once the wait is over, with
// nothing it was waiting for.
func TestConsumerBeatWaitForReleaseBounded(t *testing.T) {
	h, a, b := awaitHarness(t, 20*time.Millisecond)
	code(t, "a told to revoke", h.beat("g", a, false).ErrorCode, nil)
	resp := h.answer(h.beatAsync(b), "b's heartbeat, a not releasing")
	code(t, "b", resp.ErrorCode, nil)
	if b.owned.count() != 0 {
		t.Fatalf("b owns %v while a still owns them", b.owned)
	}
}

// Releases soon to come, an owner's heartbeat due: b's heartbeat waits
// when a's next heartbeat (at which a is told to revoke) is due within
// the wait, not when it is a heartbeat interval away.
func TestConsumerBeatWaitsForDueOwner(t *testing.T) {
	h, a, b := awaitHarness(t, 2*time.Second)
	code(t, "a", h.beat("g", a, false).ErrorCode, nil) // a's last answer: now
	if a.owned.count() != 2 {
		t.Fatalf("a owns %v", a.owned)
	}
	code(t, "a releases", h.beat("g", a, false).ErrorCode, nil)
	code(t, "b takes a's release", h.beat("g", b, false).ErrorCode, nil)
	code(t, "b acknowledges", h.beat("g", b, false).ErrorCode, nil) // as clients do at once
	// The group is now balanced; c joins and its target takes from both.
	c := &cm{id: "c", topics: []string{"t"}}
	code(t, "c joins", h.beat("g", c, true).ErrorCode, nil)
	if c.owned.count() != 0 {
		t.Fatalf("c got %v at its join", c.owned)
	}
	g := h.c.lookup("g")
	g.mu.Lock()
	due := g.releasesDueLocked(&beat{req: &kmsg.ConsumerGroupHeartbeatRequest{MemberID: "c", MemberEpoch: c.epoch}})
	g.mu.Unlock()
	if due {
		t.Fatal("c would wait for owners whose heartbeats are a whole interval away")
	}
	h.clock.Advance(DefaultConsumerHeartbeatInterval - time.Second) // due within the 2 s wait
	got := h.beatAsync(c)
	h.waitAwaiting("c's heartbeat, its owners' heartbeats due")
	for _, m := range []*cm{a, b, a, b} { // told to revoke, then release
		code(t, m.id, h.beat("g", m, false).ErrorCode, nil)
	}
	code(t, "c", h.answer(got, "c's heartbeat").ErrorCode, nil)
	if c.owned.count() == 0 {
		t.Fatalf("c's heartbeat after its owners' releases got nothing (a %v, b %v)", a.owned, b.owned)
	}
	noDoubleOwnership(t, []*cm{a, b, c})
}

// Releases soon to come, after a release: c's heartbeat releases what
// c was told to revoke and leaves c lacking a partition of its target
// that another member was told to revoke. Its answer is held (its own
// release is written meanwhile) and, once that member releases, c is
// reconciled again and answered with its whole target in the same
// heartbeat, after the write of that second turn (durable consumer group
// state).
func TestConsumerReleaseAnswerWaitsForOthersRelease(t *testing.T) {
	topics := &staticTopics{}
	topics.add("t", 6)
	gate := &writeGate{entered: make(chan struct{}, 1)}
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics}, writeHook: gate.write}
	h.open()
	g := h.c.lookup // after the first join
	ms := map[string]*cm{}
	for _, id := range []string{"a", "b", "c", "d"} {
		ms[id] = &cm{id: id, topics: []string{"t"}}
	}
	// A sequence found by search, each heartbeat alone: every member's
	// answer is then not held (no other heartbeat can release meanwhile,
	// and none of these finds a release due but this last one of c).
	h.c.cfg.ConsumerReleaseWait = -1
	for _, step := range []string{"+a", "+b", "a", "a", "a", "+c", "a", "+d", "c", "b"} {
		m := ms[step[len(step)-1:]]
		code(t, step, h.beat("g", m, step[0] == '+').ErrorCode, nil)
	}
	h.c.cfg.ConsumerReleaseWait = time.Minute // woken by the release, not the bound
	gr := g("g")
	gr.mu.Lock()
	cs := gr.mu.cons
	c := cs.members["c"]
	var owner *cmember
	for _, x := range cs.target["c"].tps() {
		if o := cs.members[cs.owners[x]]; o != nil && o != c && o.revoking.has(x) {
			owner = o
		}
	}
	want := cs.target["c"].count()
	unrevoked := c.state == memberUnrevoked
	gr.mu.Unlock()
	if !unrevoked || owner == nil {
		t.Fatalf("the sequence no longer leads there: c unrevoked %v, an owner told to revoke c's partitions %v", unrevoked, owner != nil)
	}
	got := h.beatAsync(ms["c"]) // c's release
	h.waitAwaiting("c's release, another's release due")
	// The owner's release is written, then c's heartbeat's second turn:
	// c is not answered before that second write returned.
	hold1, hold2 := make(chan struct{}), make(chan struct{})
	gate.set(hold1, nil)
	released := make(chan *kmsg.ConsumerGroupHeartbeatResponse, 1)
	go func() { released <- h.beat("g", ms[owner.id], false) }()
	<-gate.entered
	gate.set(hold2, nil)
	close(hold1)
	code(t, owner.id+" releases", h.answer(released, owner.id+"'s release").ErrorCode, nil)
	select {
	case <-gate.entered:
	case <-time.After(waitFor):
		t.Fatal("c's second turn was never written")
	}
	select {
	case r := <-got:
		t.Fatalf("c answered (%d) while the write of its second turn is held", r.ErrorCode)
	default:
	}
	gate.set(nil, nil)
	close(hold2)
	code(t, "c", h.answer(got, "c's heartbeat").ErrorCode, nil)
	if n := ms["c"].owned.count(); n != want {
		t.Fatalf("c's release answered with %d partitions (%v), want its whole target of %d", n, ms["c"].owned, want)
	}
	noDoubleOwnership(t, []*cm{ms["a"], ms["b"], ms["c"], ms["d"]})
}

// Releases soon to come: an owner whose heartbeat is overdue by more than
// the wait has gone quiet; a heartbeat does not wait for it.
func TestConsumerBeatNoWaitForQuietOwner(t *testing.T) {
	h, _, b := awaitHarness(t, time.Second)
	h.clock.Advance(2 * DefaultConsumerHeartbeatInterval) // a's heartbeat is 5 s overdue
	g := h.c.lookup("g")
	g.mu.Lock()
	due := g.releasesDueLocked(&beat{req: &kmsg.ConsumerGroupHeartbeatRequest{MemberID: "b", MemberEpoch: b.epoch}})
	g.mu.Unlock()
	if due {
		t.Fatal("b would wait for a, silent for two heartbeat intervals")
	}
}

// Releases soon to come, an owner's acknowledgment due: a was just sent
// all four partitions and b joined after it. b's heartbeat, arriving
// before a acknowledges its assignment (clients do at once; a is told to
// revoke then), waits for a's release and gets the two partitions in
// that heartbeat, where it used to get nothing and wait an interval.
func TestConsumerBeatWaitsForOwnersAck(t *testing.T) {
	topics := &staticTopics{}
	topics.add("t", 4)
	// a's next heartbeat is not due within the 30 s wait (40 s interval):
	// only its acknowledgment is.
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics,
		ConsumerReleaseWait: 30 * time.Second, ConsumerHeartbeatInterval: 40 * time.Second, ConsumerMaxHeartbeatInterval: 40 * time.Second}}
	h.open()
	a, b := &cm{id: "a", topics: []string{"t"}}, &cm{id: "b", topics: []string{"t"}}
	code(t, "a joins", h.beat("g", a, true).ErrorCode, nil)
	code(t, "b joins", h.beat("g", b, true).ErrorCode, nil)
	got := h.beatAsync(b)
	h.waitAwaiting("b's heartbeat, a's acknowledgment due")
	code(t, "a acknowledges, told to revoke", h.beat("g", a, false).ErrorCode, nil)
	code(t, "a releases", h.beat("g", a, false).ErrorCode, nil)
	code(t, "b", h.answer(got, "b's heartbeat").ErrorCode, nil)
	if b.owned.count() != 2 {
		t.Fatalf("b's heartbeat after a's release: b owns %v, want the 2 a released", b.owned)
	}
	noDoubleOwnership(t, []*cm{a, b})
}

// Releases soon to come, an acknowledgment overdue: an owner that has
// not acknowledged its assignment within the wait is not waited for.
func TestConsumerBeatNoWaitForOverdueAck(t *testing.T) {
	h, _, b := awaitHarness(t, 20*time.Millisecond)
	h.clock.Advance(time.Second) // a's acknowledgment is overdue; its heartbeat is not due
	g := h.c.lookup("g")
	g.mu.Lock()
	due := g.releasesDueLocked(&beat{req: &kmsg.ConsumerGroupHeartbeatRequest{MemberID: "b", MemberEpoch: b.epoch}})
	g.mu.Unlock()
	if due {
		t.Fatal("b would wait for an owner whose acknowledgment is overdue")
	}
}

// keepalive sends m's heartbeat as clients do when their partitions did
// not change since their last full heartbeat (franz-go): no owned
// partitions, no subscription, rebalance timeout -1.
func (h *harness) keepalive(m *cm) *kmsg.ConsumerGroupHeartbeatResponse {
	h.t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch = "g", m.id, m.epoch
	req.RebalanceTimeoutMillis = -1
	resp := h.c.ConsumerGroupHeartbeat(Client{ID: "c", Host: "/127.0.0.1"}, req)
	m.took(resp)
	return resp
}

// Revocation of told partitions only: a's release is applied and held
// (a gets partition 3 again, lacks 8, which c is revoking); before its
// answer is sent, d joins and the target moves 3 to d. a was never told
// it had 3 back: its refilled answer is the [0 1 2] it already has, so
// its client goes on with heartbeats that report nothing. a used to be
// left revoking 3, waiting for a heartbeat that would never say it gave
// 3 up, and d waited for 3 until a's rebalance timeout (a 60 s stall of
// 100 members joining in kgbench's workload 10); 3 is now released at
// once, and d gets its whole target from heartbeats alone.
func TestConsumerHeldAnswerRevokesOnlyToldPartitions(t *testing.T) {
	topics := &staticTopics{}
	topics.add("t", 9)
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics, ConsumerReleaseWait: -1}}
	h.open()
	ms := map[string]*cm{}
	for _, id := range []string{"a", "b", "c", "d"} {
		ms[id] = &cm{id: id, topics: []string{"t"}}
	}
	// Each heartbeat alone (no waits): a owns [0..4], then c [5..8]; b
	// joins (a to revoke [3 4], c [8]) and leaves before it got anything,
	// so a's target is [0 1 2 3 8], c's [4 5 6 7].
	for _, step := range []string{"+a", "a", "+c", "a", "a", "c", "c", "+b", "a", "c", "-b"} {
		m := ms[step[len(step)-1:]]
		if step[0] == '-' {
			m.epoch = epochLeave
		}
		code(t, step, h.beat("g", m, step[0] == '+').ErrorCode, nil)
	}
	a, c, d := ms["a"], ms["c"], ms["d"]
	if got := partitionsOf(a.owned); !slices.Equal(got, []int32{0, 1, 2}) {
		t.Fatalf("the sequence no longer leads there: a owns %v, want [0 1 2]", got)
	}
	h.c.cfg.ConsumerReleaseWait = time.Minute // woken by a batch, not the bound
	held := h.beatAsync(a)                    // a releases [3 4], gets 3, lacks 8
	h.waitAwaiting("a's release, c's release of 8 due")
	code(t, "+d", h.beat("g", d, true).ErrorCode, nil) // d's target takes 3 (and 7, 8)
	code(t, "a", h.answer(held, "a's held release").ErrorCode, nil)
	if got := partitionsOf(a.owned); !slices.Equal(got, []int32{0, 1, 2}) {
		t.Fatalf("a's answer %v, want the [0 1 2] its target keeps", got)
	}
	// From here on a's client has nothing new to report; heartbeats alone
	// again, as the members' own would come.
	h.c.cfg.ConsumerReleaseWait = -1
	for range 3 {
		code(t, "a", h.keepalive(a).ErrorCode, nil)
		code(t, "c", h.beat("g", c, false).ErrorCode, nil)
		code(t, "d", h.beat("g", d, false).ErrorCode, nil)
	}
	noDoubleOwnership(t, []*cm{a, c, d})
	if got := partitionsOf(d.owned); !slices.Equal(got, []int32{3, 7, 8}) {
		g := h.c.lookup("g")
		g.mu.Lock()
		m := g.mu.cons.members["a"]
		state, revoking := m.state, partitionsOf(m.revoking)
		g.mu.Unlock()
		t.Fatalf("d owns %v, want its target [3 7 8]; a is %s, revoking %v", got, state, revoking)
	}
}

// partitionsOf lists a's partition numbers (one topic's, in these tests).
func partitionsOf(a assignment) []int32 {
	var out []int32
	for _, x := range a.tps() {
		out = append(out, x.part)
	}
	return out
}
