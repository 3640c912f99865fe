package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// within runs f and fails the test if it does not return within waitFor
// (a call blocked on the group's lock).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(waitFor):
		t.Fatalf("%s: still blocked after %v", what, waitFor)
	}
}

// The leader's assignment is stored as Kafka stores it: the group stays
// CompletingRebalance while the synced write runs, and the group's lock is
// free meanwhile. A member joining during the write starts the next
// rebalance at once and the leader's waiting sync is answered
// REBALANCE_IN_PROGRESS without waiting for the write; no sync is answered
// with the assignment before its write returned; and the overtaken write,
// once it returns, leaves the next generation alone: its syncs get the
// next leader's assignment.
func TestJoinDuringAssignmentWriteRebalancesAtOnce(t *testing.T) {
	gate := &writeGate{entered: make(chan struct{}, 1)}
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), writeHook: gate.write}
	h.open()
	r := h.join("g")
	a, gen := r.MemberID, r.Generation

	hold := make(chan struct{})
	gate.set(hold, nil)
	released := false
	release := func() {
		if !released {
			released = true
			gate.set(nil, nil)
			close(hold)
		}
	}
	t.Cleanup(release) // before the harness closes (cleanups run last first)
	sa := h.syncAsync("g", a, gen, map[string]string{a: "a1"})
	select {
	case <-gate.entered:
	case <-time.After(waitFor):
		t.Fatal("the leader's assignment was never written")
	}
	select {
	case o := <-sa:
		t.Fatalf("the leader's sync was answered (%+v) while its write is held", o.resp)
	default:
	}
	within(t, "DescribeGroups during the assignment's write", func() {
		if s := h.state("g"); s != "CompletingRebalance" {
			t.Errorf("state during the assignment's write %s, want CompletingRebalance", s)
		}
	})

	var cid string
	select {
	case o := <-h.joinAsync(newJoin("g", "")):
		cid = o.resp.MemberID
	case <-time.After(waitFor):
		t.Fatal("a member's first JoinGroup blocked during the assignment's write")
	}
	cch := h.joinAsync(newJoin("g", cid))
	code(t, "the leader's sync, overtaken by the join", h.awaitSync(sa).ErrorCode, kerr.RebalanceInProgress)

	// a rejoins and completes generation 2, whose record is written after
	// the overtaken one (the writes stay in order): the overtaken write
	// returns while generation 2 is CompletingRebalance.
	g := h.c.lookup("g")
	rach := h.joinAsync(newJoin("g", a))
	waitLockHeld(t, g)
	release()
	ra, rc := h.await(rach), h.await(cch)
	if ra.ErrorCode != 0 || rc.ErrorCode != 0 || ra.Generation != gen+1 || rc.Generation != gen+1 {
		t.Fatalf("rejoins: a %d gen %d, c %d gen %d; want generation %d", ra.ErrorCode, ra.Generation, rc.ErrorCode, rc.Generation, gen+1)
	}
	g.assigns.Wait() // the overtaken write has returned and finished
	if s := h.state("g"); s != "CompletingRebalance" {
		t.Fatalf("after the overtaken write returned: %s, want CompletingRebalance", s)
	}
	leader, follower := ra, rc
	if ra.LeaderID != a {
		leader, follower = rc, ra
	}
	fs := h.syncAsync("g", follower.MemberID, gen+1, nil)
	ls := h.awaitSync(h.syncAsync("g", leader.MemberID, gen+1, map[string]string{a: "a2", cid: "c2"}))
	fr := h.awaitSync(fs)
	got := map[string]string{leader.MemberID: string(ls.MemberAssignment), follower.MemberID: string(fr.MemberAssignment)}
	if ls.ErrorCode != 0 || fr.ErrorCode != 0 || got[a] != "a2" || got[cid] != "c2" {
		t.Fatalf("generation %d syncs: codes %d %d, assignments %v; want a2 and c2", gen+1, ls.ErrorCode, fr.ErrorCode, got)
	}
}

// waitLockHeld waits until g's lock is held (by a join that completes a
// rebalance and waits, holding it, for an earlier write to end).
func waitLockHeld(t *testing.T, g *group) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		if !g.mu.TryLock() {
			return
		}
		g.mu.Unlock()
		time.Sleep(time.Millisecond) // polling a condition, bounded by the deadline
	}
	t.Fatal("the rejoin never took the group's lock")
}
