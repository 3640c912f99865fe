package group

import (
	"testing"
	"time"
)

// Rebalance completion, group.initial.rebalance.delay.ms: the first rebalance of an Empty
// group waits the delay, again while members keep joining, and never
// past the rebalance timeout, as Kafka's InitialDelayedJoin does.
func TestInitialRebalanceDelay(t *testing.T) {
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{InitialRebalanceDelay: 3 * time.Second}}
	h.open()

	_, cha := h.joinStart("g")
	h.clock.Advance(2 * time.Second)
	h.blocked(cha, "the first member inside the delay")
	_, chb := h.joinStart("g") // joins during the delay: one more wait
	h.clock.Advance(time.Second)
	h.blocked(cha, "after the first delay, a member having joined in it")
	h.clock.Advance(2 * time.Second)
	h.blocked(cha, "inside the second delay")
	h.clock.Advance(time.Second) // the second delay passes with no new member
	ra, rb := h.await(cha), h.await(chb)
	if ra.ErrorCode != 0 || rb.ErrorCode != 0 || ra.Generation != 1 || rb.Generation != 1 {
		t.Fatalf("joins: %+v %+v", ra, rb)
	}
	if len(ra.Members)+len(rb.Members) != 2 {
		t.Fatalf("the leader got %d+%d members, want both", len(ra.Members), len(rb.Members))
	}

	// The waits stop at the rebalance timeout (30 s here): ten more 3 s
	// waits would be needed for members joining every 2 s.
	_, first := h.joinStart("g2")
	var chans = []<-chan joinOut{first}
	start := h.clock.Now()
	for h.clock.Now().Sub(start) < testRebalance-2*time.Second {
		h.clock.Advance(2 * time.Second)
		if len(first) > 0 {
			t.Fatalf("completed after %v, before the rebalance timeout", h.clock.Now().Sub(start))
		}
		_, ch := h.joinStart("g2")
		chans = append(chans, ch)
	}
	h.clock.Advance(3 * time.Second)
	for _, ch := range chans {
		if r := h.await(ch); r.ErrorCode != 0 || r.Generation != 1 {
			t.Fatalf("g2 join: code %d generation %d", r.ErrorCode, r.Generation)
		}
	}

	// Without the delay (0, a zero Config's) the first member is answered at once.
	h.c.cfg.InitialRebalanceDelay = 0
	if r := h.join("g3"); r.ErrorCode != 0 || r.Generation != 1 {
		t.Fatalf("no delay: code %d generation %d", r.ErrorCode, r.Generation)
	}
}

// Rebalance completion with group.initial.rebalance.delay.ms = 0, as in
// Kafka (InitialDelayedJoin with no delay): the first rebalance of an
// Empty group completes from a check that runs once the group's lock is
// free again, not inside the join that started it, so joins already
// waiting for the lock are in the first generation; and a member id
// handed out but not back yet does not hold it up.
func TestInitialRebalanceWithoutDelay(t *testing.T) {
	h := newHarness(t) // a zero Config: no delay
	a := h.await(h.joinAsync(newJoin("g", "")))
	b := h.await(h.joinAsync(newJoin("g", "")))
	g := h.c.lookup("g")
	g.mu.Lock() // two joins applied back to back, as joins queued for the lock are
	_, cha := g.joinLocked(rejoinReq(a.MemberID))
	_, chb := g.joinLocked(rejoinReq(b.MemberID))
	g.mu.Unlock()
	ra, rb := awaitResult(t, cha), awaitResult(t, chb)
	if ra.code != 0 || rb.code != 0 || ra.generation != 1 || rb.generation != 1 {
		t.Fatalf("joins: %+v %+v", ra, rb)
	}
	if len(ra.members)+len(rb.members) != 2 {
		t.Fatalf("the leader got %d+%d members, want both in the first generation", len(ra.members), len(rb.members))
	}

	// c's member id is out and not back: d's join completes without it.
	c := h.await(h.joinAsync(newJoin("g2", "")))
	d := h.await(h.joinAsync(newJoin("g2", "")))
	rd := h.await(h.joinAsync(newJoin("g2", d.MemberID)))
	if rd.ErrorCode != 0 || rd.Generation != 1 || rd.LeaderID != d.MemberID || len(rd.Members) != 1 {
		t.Fatalf("a join behind a handed-out id: %+v", rd)
	}
	// c comes back: the next rebalance takes it in.
	rc := h.joinAsync(newJoin("g2", c.MemberID))
	h.waitParked("g2", c.MemberID, rc)
	if r := h.await(h.joinAsync(newJoin("g2", d.MemberID))); r.ErrorCode != 0 || r.Generation != 2 || len(r.Members) != 2 {
		t.Fatalf("rejoin after the second member: %+v", r)
	}
	if r := h.await(rc); r.ErrorCode != 0 || r.Generation != 2 {
		t.Fatalf("second member: %+v", r)
	}
}

// rejoinReq is the second join of the KIP-394 handshake, as join builds it.
func rejoinReq(member string) joinReq {
	r := newJoin("g", member)
	return joinReq{client: Client{ID: "cl", Host: "/127.0.0.1"}, version: r.Version, memberID: member,
		protocolType: r.ProtocolType, protocols: r.Protocols, sessionTimeout: testSession, rebalanceTimeout: testRebalance}
}

func awaitResult(t *testing.T, ch chan joinResult) joinResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitFor):
		t.Fatal("join did not complete")
		return joinResult{}
	}
}
