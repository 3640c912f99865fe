package group

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// One member: KIP-394 handshake, generation 1, sync, heartbeats, and the
// member errors of Kafka's group error order.
func TestSingleMemberLifecycle(t *testing.T) {
	h := newHarness(t)
	first := h.await(h.joinAsync(newJoin("g", "")))
	code(t, "first join", first.ErrorCode, kerr.MemberIDRequired)
	if first.MemberID == "" {
		t.Fatal("MEMBER_ID_REQUIRED without a member id")
	}
	resp := h.await(h.joinAsync(newJoin("g", first.MemberID)))
	code(t, "join", resp.ErrorCode, nil)
	if resp.Generation != 1 || resp.LeaderID != first.MemberID || len(resp.Members) != 1 || *resp.Protocol != "range" {
		t.Fatalf("join response %+v", resp)
	}
	if !bytes.Equal(resp.Members[0].ProtocolMetadata, consumerMeta("t")) {
		t.Fatal("leader did not receive member metadata")
	}
	if got := h.state("g"); got != "CompletingRebalance" {
		t.Fatalf("state %s", got)
	}
	code(t, "heartbeat while completing", h.heartbeat("g", first.MemberID, 1), nil)
	sr := h.awaitSync(h.syncAsync("g", first.MemberID, 1, map[string]string{first.MemberID: "mine"}))
	code(t, "sync", sr.ErrorCode, nil)
	if string(sr.MemberAssignment) != "mine" || *sr.Protocol != "range" || *sr.ProtocolType != "consumer" {
		t.Fatalf("sync response %+v", sr)
	}
	d := h.describe("g")
	if d.State != "Stable" || d.Protocol != "range" || len(d.Members) != 1 || string(d.Members[0].MemberAssignment) != "mine" {
		t.Fatalf("describe %+v", d)
	}
	code(t, "heartbeat", h.heartbeat("g", first.MemberID, 1), nil)
	code(t, "wrong generation", h.heartbeat("g", first.MemberID, 7), kerr.IllegalGeneration)
	code(t, "unknown member", h.heartbeat("g", "nobody", 1), kerr.UnknownMemberID)
	code(t, "unknown group", h.heartbeat("nogroup", "nobody", 1), kerr.UnknownMemberID)
	code(t, "sync wrong generation", h.awaitSync(h.syncAsync("g", first.MemberID, 2, nil)).ErrorCode, kerr.IllegalGeneration)
	// A stable follower-less leader's rejoin forces a rebalance (Kafka).
	again := h.await(h.joinAsync(newJoin("g", first.MemberID)))
	if again.Generation != 2 {
		t.Fatalf("leader rejoin generation %d", again.Generation)
	}
}

func TestJoinValidation(t *testing.T) {
	h := newHarness(t)
	bad := newJoin("g", "")
	bad.SessionTimeoutMillis = int32(200 * time.Hour / time.Millisecond)
	code(t, "session too long", h.await(h.joinAsync(bad)).ErrorCode, kerr.InvalidSessionTimeout)
	code(t, "empty group", h.await(h.joinAsync(newJoin("", ""))).ErrorCode, kerr.InvalidGroupID)
	code(t, "unknown member on new group", h.await(h.joinAsync(newJoin("g", "ghost"))).ErrorCode, kerr.UnknownMemberID)
	noProto := newJoin("g", "")
	noProto.Protocols = nil
	code(t, "no protocols", h.await(h.joinAsync(noProto)).ErrorCode, kerr.InconsistentGroupProtocol)

	h.join("g", "range")
	other := newJoin("g", "", "roundrobin")
	code(t, "no common protocol", h.await(h.joinAsync(other)).ErrorCode, kerr.InconsistentGroupProtocol)
	otherType := newJoin("g", "")
	otherType.ProtocolType = "connect"
	code(t, "other protocol type", h.await(h.joinAsync(otherType)).ErrorCode, kerr.InconsistentGroupProtocol)

	// v3 joins without the handshake.
	old := newJoin("g2", "")
	old.Version = 3
	r := h.await(h.joinAsync(old))
	code(t, "v3 join", r.ErrorCode, nil)
	if r.MemberID == "" || r.Generation != 1 {
		t.Fatalf("v3 join %+v", r)
	}
}

// Two members: the second's join parks until the first rejoins after
// seeing REBALANCE_IN_PROGRESS; the leader gets both members' metadata; a
// follower's sync waits for the leader's.
func TestTwoMemberRebalance(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("g", 1)
	a := ids[0]
	b, bJoin := h.joinStart("g")
	h.blocked(bJoin, "second member join")
	code(t, "heartbeat during rebalance", h.heartbeat("g", a, gen), kerr.RebalanceInProgress)
	// Commits are still allowed while PreparingRebalance.
	code(t, "commit during rebalance", commitOne(h, "g", a, gen, "t", 0, 5), nil)

	aResp := h.await(h.joinAsync(newJoin("g", a)))
	bResp := h.await(bJoin)
	if aResp.Generation != gen+1 || bResp.Generation != gen+1 {
		t.Fatalf("generations %d %d", aResp.Generation, bResp.Generation)
	}
	if aResp.LeaderID != a || len(aResp.Members) != 2 || len(bResp.Members) != 0 {
		t.Fatalf("leader %s members %d/%d", aResp.LeaderID, len(aResp.Members), len(bResp.Members))
	}
	code(t, "commit while completing", commitOne(h, "g", a, gen+1, "t", 0, 6), kerr.RebalanceInProgress)
	bSync := h.syncAsync("g", b, gen+1, nil)
	select {
	case <-bSync:
		t.Fatal("follower sync answered before the leader's")
	default:
	}
	h.awaitSync(h.syncAsync("g", a, gen+1, map[string]string{a: "A", b: "B"}))
	if got := string(h.awaitSync(bSync).MemberAssignment); got != "B" {
		t.Fatalf("follower assignment %q", got)
	}
	if h.state("g") != "Stable" {
		t.Fatal("not stable")
	}
}

// No stranded member: a sync waiting on a generation that a new rebalance overtakes gets
// REBALANCE_IN_PROGRESS; nobody is left blocked.
func TestSyncOvertakenByRebalance(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("g", 2)
	leader, follower := ids[0], ids[1]
	// Start a new rebalance and complete it, but let only the follower sync.
	j1 := h.joinAsync(newJoin("g", leader))
	h.waitParked("g", leader, j1)
	j2 := h.joinAsync(newJoin("g", follower))
	gen2 := h.await(j1).Generation
	h.await(j2)
	if gen2 != gen+1 {
		t.Fatalf("generation %d", gen2)
	}
	fSync := h.syncAsync("g", follower, gen2, nil)
	h.waitSyncParked("g", follower, fSync)
	_, cJoin := h.joinStart("g")
	code(t, "overtaken sync", h.awaitSync(fSync).ErrorCode, kerr.RebalanceInProgress)
	h.blocked(cJoin, "third member")
	lj := h.joinAsync(newJoin("g", leader))
	fj := h.joinAsync(newJoin("g", follower))
	h.await(lj)
	h.await(fj)
	if r := h.await(cJoin); r.Generation != gen2+1 {
		t.Fatalf("third member generation %d", r.Generation)
	}
}

// Three members; one leaves (batch LeaveGroup v3+), including the leader:
// the rest rebalance and a new leader is chosen.
func TestLeave(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("g", 3)
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version = 5
	leave.Group = "g"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[0]}, {MemberID: "ghost"}}
	resp := h.c.LeaveGroup(leave)
	code(t, "leave", resp.ErrorCode, nil)
	code(t, "leaver", resp.Members[0].ErrorCode, nil)
	code(t, "ghost", resp.Members[1].ErrorCode, kerr.UnknownMemberID)
	if h.state("g") != "PreparingRebalance" {
		t.Fatalf("state %s", h.state("g"))
	}
	r1 := h.joinAsync(newJoin("g", ids[1]))
	r2 := h.joinAsync(newJoin("g", ids[2]))
	a, b := h.await(r1), h.await(r2)
	if a.Generation != gen+1 || a.LeaderID == ids[0] || a.LeaderID != b.LeaderID {
		t.Fatalf("after leave: gen %d leader %s/%s", a.Generation, a.LeaderID, b.LeaderID)
	}
	// v0 leave of the rest; the group ends Empty.
	for _, id := range ids[1:] {
		l := kmsg.NewPtrLeaveGroupRequest()
		l.Group, l.MemberID = "g", id
		code(t, "v0 leave", h.c.LeaveGroup(l).ErrorCode, nil)
	}
	if h.state("g") != "Empty" {
		t.Fatalf("state %s", h.state("g"))
	}
	l := kmsg.NewPtrLeaveGroupRequest()
	l.Group, l.MemberID = "g", ids[1]
	code(t, "leave twice", h.c.LeaveGroup(l).ErrorCode, kerr.UnknownMemberID)
}

// The session timeout: a member that stops heartbeating is removed after its session
// timeout; heartbeats keep the other one.
func TestSessionExpiry(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("g", 2)
	alive, silent := ids[0], ids[1]
	for i := 0; i < 4; i++ {
		h.clock.Advance(testSession / 2)
		if c := h.heartbeat("g", alive, gen); c != 0 {
			// The silent member's expiry started a rebalance.
			code(t, "heartbeat", c, kerr.RebalanceInProgress)
			break
		}
	}
	if h.state("g") != "PreparingRebalance" {
		t.Fatalf("state %s", h.state("g"))
	}
	code(t, "expired member", h.heartbeat("g", silent, gen), kerr.UnknownMemberID)
	r := h.await(h.joinAsync(newJoin("g", alive)))
	if r.Generation != gen+1 || len(r.Members) != 1 {
		t.Fatalf("after expiry %+v", r)
	}
}

// Rebalance completion: members that do not rejoin within the rebalance timeout are removed.
func TestRebalanceTimeout(t *testing.T) {
	h := newHarness(t)
	ids, _ := h.stableGroup("g", 1)
	_, bJoin := h.joinStart("g")
	h.blocked(bJoin, "joiner")
	// The old member keeps heartbeating but never rejoins.
	for i := 0; i < 8; i++ {
		h.clock.Advance(testRebalance / 8)
		h.heartbeat("g", ids[0], 1)
	}
	r := h.await(bJoin)
	if r.ErrorCode != 0 || len(r.Members) != 1 || r.LeaderID != r.MemberID {
		t.Fatalf("after rebalance timeout %+v", r)
	}
	code(t, "removed member", h.heartbeat("g", ids[0], r.Generation), kerr.UnknownMemberID)
}

// The pending-sync timeout: a leader that never syncs is removed after the rebalance timeout and
// the follower's sync is answered (REBALANCE_IN_PROGRESS), so it rejoins.
func TestPendingSyncTimeout(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("g", 2)
	j1 := h.joinAsync(newJoin("g", ids[0]))
	h.waitParked("g", ids[0], j1)
	j2 := h.joinAsync(newJoin("g", ids[1]))
	h.await(j1)
	h.await(j2)
	fSync := h.syncAsync("g", ids[1], gen+1, nil)
	h.waitSyncParked("g", ids[1], fSync)
	// The leader heartbeats (so its session holds) but never syncs.
	for i := 0; i < 6; i++ {
		h.clock.Advance(testRebalance / 6)
		h.heartbeat("g", ids[0], gen+1)
	}
	code(t, "follower sync", h.awaitSync(fSync).ErrorCode, kerr.RebalanceInProgress)
	code(t, "unsynced leader removed", h.heartbeat("g", ids[0], gen+1), kerr.UnknownMemberID)
	r := h.await(h.joinAsync(newJoin("g", ids[1])))
	if r.LeaderID != ids[1] || len(r.Members) != 1 {
		t.Fatalf("after pending-sync timeout %+v", r)
	}
}

// A member id handed out with MEMBER_ID_REQUIRED holds up a rebalance of
// a group with members until it joins or its session timeout passes
// (rebalance completion; not the first rebalance of an Empty group, see
// TestInitialRebalanceWithoutDelay).
func TestPendingMemberExpires(t *testing.T) {
	h := newHarness(t)
	ids, _ := h.stableGroup("g", 1)
	first := h.await(h.joinAsync(newJoin("g", "")))
	code(t, "first", first.ErrorCode, kerr.MemberIDRequired)
	otherJoin := h.joinAsync(newJoin("g", ids[0])) // the leader's rejoin: a rebalance
	h.waitParked("g", ids[0], otherJoin)
	h.blocked(otherJoin, "join behind a pending member")
	h.clock.Advance(testSession)
	r := h.await(otherJoin)
	if r.ErrorCode != 0 || r.LeaderID != ids[0] || len(r.Members) != 1 || r.Generation != 2 {
		t.Fatalf("after pending expiry %+v", r)
	}
}

// KIP-345: a static member that comes back with its instance id gets a new
// member id and its old assignment without a rebalance; the old id is
// fenced; a static member can leave by instance id.
func TestStaticMember(t *testing.T) {
	h := newHarness(t)
	inst := "instance-1"
	sj := newJoin("g", "")
	sj.InstanceID = &inst
	r := h.await(h.joinAsync(sj))
	code(t, "static join", r.ErrorCode, nil) // no MEMBER_ID_REQUIRED for static members
	static := r.MemberID
	dyn, dynJoin := h.joinStart("g")
	sj2 := newJoin("g", static)
	sj2.InstanceID = &inst
	sr := h.await(h.joinAsync(sj2))
	h.await(dynJoin)
	gen := sr.Generation
	leader := sr.LeaderID
	assign := map[string]string{static: "S", dyn: "D"}
	fs := h.syncAsync("g", dyn, gen, nil)
	if leader == static {
		h.awaitSync(h.syncAsync("g", static, gen, assign))
		h.awaitSync(fs)
	} else {
		ls := h.syncAsync("g", static, gen, nil)
		h.awaitSync(h.syncAsync("g", dyn, gen, assign))
		h.awaitSync(ls)
	}

	// Restart of the static member: new id, same generation, no rebalance.
	sj3 := newJoin("g", "")
	sj3.InstanceID = &inst
	re := h.await(h.joinAsync(sj3))
	code(t, "static rejoin", re.ErrorCode, nil)
	if re.MemberID == static || re.Generation != gen {
		t.Fatalf("static rejoin %+v", re)
	}
	if h.state("g") != "Stable" {
		t.Fatalf("state %s", h.state("g"))
	}
	code(t, "other member unaffected", h.heartbeat("g", dyn, gen), nil)
	sync := h.awaitSync(h.syncAsync("g", re.MemberID, gen, nil))
	if string(sync.MemberAssignment) != "S" {
		t.Fatalf("static member assignment %q", sync.MemberAssignment)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.Generation, hb.InstanceID = 4, "g", static, gen, &inst
	code(t, "fenced old id", h.c.Heartbeat(hb).ErrorCode, kerr.FencedInstanceID)

	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group = 4, "g"
	leave.Members = []kmsg.LeaveGroupRequestMember{{InstanceID: &inst}}
	code(t, "leave by instance", h.c.LeaveGroup(leave).Members[0].ErrorCode, nil)
	code(t, "leave again", h.c.LeaveGroup(leave).Members[0].ErrorCode, kerr.UnknownMemberID)
}

// A JoinGroup waiting on a dead connection returns; the member stays in the
// rebalance as in Kafka, and its next join gets the result.
func TestJoinContextCancel(t *testing.T) {
	h := newHarness(t)
	ids, _ := h.stableGroup("g", 1)
	_, bJoin := h.joinStart("g")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.c.JoinGroup(ctx, Client{ID: "cl"}, newJoin("g", ids[0]))
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			// The rebalance may have completed first; that is fine too.
			break
		}
	case <-time.After(waitFor):
		t.Fatal("cancelled join did not return")
	}
	h.await(bJoin)
}

// Many members joining, syncing, heartbeating and leaving concurrently:
// every one finishes (no member stranded) and the survivors agree.
func TestConcurrentMembersNeverStranded(t *testing.T) {
	h := newHarness(t)
	const n = 6
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) { errs <- runMember(h.c, "g", 2+i%3) }(i)
	}
	for i := 0; i < n; i++ {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(3 * waitFor):
			t.Fatal("a member is stranded")
		}
	}
	if h.state("g") != "Empty" {
		t.Fatalf("state after everyone left: %s", h.state("g"))
	}
}

// runMember plays a well-behaved consumer until it has been through
// `rounds` generations, then leaves.
func runMember(c *Coordinator, group string, rounds int) error {
	ctx := context.Background()
	id := ""
	for done := 0; done < rounds; {
		jr, err := c.JoinGroup(ctx, Client{ID: "m"}, newJoin(group, id))
		if err != nil {
			return err
		}
		switch jr.ErrorCode {
		case kerr.MemberIDRequired.Code:
			id = jr.MemberID
			continue
		case 0:
		default:
			return fmt.Errorf("join: %v", kerr.ErrorForCode(jr.ErrorCode))
		}
		id = jr.MemberID
		sreq := kmsg.NewPtrSyncGroupRequest()
		sreq.Version, sreq.Group, sreq.MemberID, sreq.Generation = 5, group, id, jr.Generation
		sreq.ProtocolType, sreq.Protocol = jr.ProtocolType, jr.Protocol
		for _, m := range jr.Members {
			sreq.GroupAssignment = append(sreq.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: m.MemberID, MemberAssignment: []byte(m.MemberID)})
		}
		sr, err := c.SyncGroup(ctx, sreq)
		if err != nil {
			return err
		}
		if sr.ErrorCode == kerr.RebalanceInProgress.Code || sr.ErrorCode == kerr.IllegalGeneration.Code {
			continue
		}
		if sr.ErrorCode != 0 || string(sr.MemberAssignment) != id {
			return fmt.Errorf("sync: %v assignment %q", kerr.ErrorForCode(sr.ErrorCode), sr.MemberAssignment)
		}
		done++
	}
	l := kmsg.NewPtrLeaveGroupRequest()
	l.Version, l.Group = 3, group
	l.Members = []kmsg.LeaveGroupRequestMember{{MemberID: id}}
	if c := c.LeaveGroup(l).Members[0].ErrorCode; c != 0 {
		return fmt.Errorf("leave: %v", kerr.ErrorForCode(c))
	}
	return nil
}

func TestFindCoordinator(t *testing.T) {
	h := newHarness(t)
	self := Node{ID: 3, Host: "h", Port: 9}
	r := kmsg.NewPtrFindCoordinatorRequest()
	r.Version, r.CoordinatorKey = 3, "g"
	resp := h.c.FindCoordinator(r, self)
	if resp.ErrorCode != 0 || resp.NodeID != 3 || resp.Host != "h" || resp.Port != 9 {
		t.Fatalf("v3 %+v", resp)
	}
	r.Version, r.CoordinatorKeys = 4, []string{"a", "b"}
	resp = h.c.FindCoordinator(r, self)
	if len(resp.Coordinators) != 2 || resp.Coordinators[1].Key != "b" || resp.Coordinators[1].NodeID != 3 {
		t.Fatalf("v4 %+v", resp)
	}
	r.CoordinatorType = 7
	code(t, "bad key type", h.c.FindCoordinator(r, self).Coordinators[0].ErrorCode, kerr.InvalidRequest)
}
