package group

import (
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets/offsetstest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Classic membership restored at restart: after a restart, a Stable group's members continue at their
// generation with their assignments: heartbeats, syncs and commits
// succeed, nothing rebalances. Their session timers start at the load, so
// the time the server was down does not count; a member silent after the
// load is removed one session timeout later.
func TestRestartResumesMembers(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("g", 2)
	h.close()
	h.clock.Advance(3 * testSession) // down for longer than a session
	h.open()

	if lg := h.c.ListGroups(&kmsg.ListGroupsRequest{Version: 4}); len(lg.Groups) != 1 || lg.Groups[0].GroupState != "Stable" {
		t.Fatalf("after restart %+v", lg.Groups)
	}
	d := h.describe("g")
	if len(d.Members) != 2 || d.Protocol != "range" {
		t.Fatalf("described after restart %+v", d)
	}
	for _, m := range d.Members {
		if string(m.MemberAssignment) != "a-"+m.MemberID {
			t.Fatalf("member %s assigned %q after restart", m.MemberID, m.MemberAssignment)
		}
	}
	for _, id := range ids {
		code(t, "heartbeat after restart", h.heartbeat("g", id, gen), nil)
	}
	code(t, "commit after restart", commitOne(h, "g", ids[1], gen, "t", 0, 5), nil)
	if s := h.awaitSync(h.syncAsync("g", ids[1], gen, nil)); s.ErrorCode != 0 || string(s.MemberAssignment) != "a-"+ids[1] {
		t.Fatalf("sync after restart: %+v", s)
	}
	// The leader was persisted: its join rebalances, a follower's does not.
	if h.describeLeader("g", nil, 0) != ids[0] {
		t.Fatalf("leader after restart %s, want %s", h.describeLeader("g", nil, 0), ids[0])
	}

	// Only ids[0] goes on heartbeating: ids[1] is removed a session after
	// its last heartbeat, which was right after the load.
	h.clock.Advance(testSession / 2)
	code(t, "heartbeat", h.heartbeat("g", ids[0], gen), nil)
	h.clock.Advance(testSession/2 + time.Millisecond)
	code(t, "silent member removed", h.heartbeat("g", ids[1], gen), kerr.UnknownMemberID)
	code(t, "live member told to rejoin", h.heartbeat("g", ids[0], gen), kerr.RebalanceInProgress)
}

// Classic membership restored at restart: a member that died while the server was down is removed one session
// timeout after the load, not at once and not never.
func TestRestartExpiresDeadMembers(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("g", 2)
	h.restart()
	h.clock.Advance(testSession - time.Millisecond)
	code(t, "heartbeat", h.heartbeat("g", ids[0], gen), nil)
	if n := len(h.describe("g").Members); n != 2 {
		t.Fatalf("%d members before the session timeout, want 2", n)
	}
	h.clock.Advance(2 * time.Millisecond)
	if d := h.describe("g"); len(d.Members) != 1 || d.Members[0].MemberID != ids[0] {
		t.Fatalf("after the session timeout %+v", d.Members)
	}
}

// Durable classic membership: a SyncGroup answer is durable before it is sent: a crash right
// after the answers (only synced bytes survive) keeps the generation, the
// members and their assignments.
func TestSyncAnswerDurableAcrossCrash(t *testing.T) {
	fs := offsetstest.NewCrashable()
	h := &harness{t: t, clock: newFakeClock(), dir: "offsets", fs: fs}
	h.open()
	ids, gen := h.stableGroup("g", 2)
	crashed := fs.Crash()
	h.close()

	h.fs = crashed
	h.open()
	for _, id := range ids {
		code(t, "heartbeat after crash", h.heartbeat("g", id, gen), nil)
		if s := h.awaitSync(h.syncAsync("g", id, gen, nil)); string(s.MemberAssignment) != "a-"+id {
			t.Fatalf("assignment of %s after crash %q", id, s.MemberAssignment)
		}
	}
}

// Durable classic membership: a static member's replacement (a new member id handed out without a
// rebalance) is durable before the JoinGroup answer.
func TestStaticReplacementDurableAcrossCrash(t *testing.T) {
	fs := offsetstest.NewCrashable()
	h := &harness{t: t, clock: newFakeClock(), dir: "offsets", fs: fs}
	h.open()
	inst := "instance-1"
	sj := newJoin("g", "")
	sj.InstanceID = &inst
	r := h.await(h.joinAsync(sj))
	code(t, "static join", r.ErrorCode, nil)
	code(t, "sync", h.awaitSync(h.syncAsync("g", r.MemberID, r.Generation, map[string]string{r.MemberID: "S"})).ErrorCode, nil)

	re := h.await(h.joinAsync(sj)) // restarted client: same instance, no member id
	code(t, "static rejoin", re.ErrorCode, nil)
	if re.MemberID == r.MemberID || re.Generation != r.Generation {
		t.Fatalf("static rejoin %+v", re)
	}
	crashed := fs.Crash()
	h.close()
	h.fs = crashed
	h.open()

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.Generation, hb.InstanceID = 4, "g", r.Generation, &inst
	hb.MemberID = re.MemberID
	code(t, "new id after crash", h.c.Heartbeat(hb).ErrorCode, nil)
	hb.MemberID = r.MemberID
	code(t, "old id after crash", h.c.Heartbeat(hb).ErrorCode, kerr.FencedInstanceID)
	if s := h.awaitSync(h.syncAsync("g", re.MemberID, r.Generation, nil)); string(s.MemberAssignment) != "S" {
		t.Fatalf("assignment after crash %q", s.MemberAssignment)
	}
}

// Durable classic membership: a membership past MaxGroupStateBytes cannot be persisted: the
// waiting syncs get UNKNOWN_SERVER_ERROR (Kafka's answer to a group record
// too large for __consumer_offsets) and the group rebalances; nothing was
// stored, so a restart does not bring the refused generation back.
func TestOversizedAssignmentRefused(t *testing.T) {
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{MaxGroupStateBytes: 1000}}
	h.open()
	r := h.join("g")
	code(t, "join", r.ErrorCode, nil)
	big := string(make([]byte, 2000))
	s := h.awaitSync(h.syncAsync("g", r.MemberID, r.Generation, map[string]string{r.MemberID: big}))
	code(t, "oversized sync", s.ErrorCode, kerr.UnknownServerError)
	if st := h.state("g"); st != "PreparingRebalance" {
		t.Fatalf("state after a refused sync %s", st)
	}
	h.restart()
	code(t, "heartbeat after restart", h.heartbeat("g", r.MemberID, r.Generation), kerr.UnknownMemberID)
}

// The group size bound: members plus handed-out member ids are bounded: first JoinGroups
// past group.max.size get GROUP_MAX_SIZE_REACHED instead of growing the
// group, and a static member replacing itself still gets in.
func TestGroupMaxSize(t *testing.T) {
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{MaxGroupSize: 3}}
	h.open()
	inst := "static"
	sj := newJoin("g", "")
	sj.InstanceID = &inst
	r := h.await(h.joinAsync(sj))
	code(t, "static join", r.ErrorCode, nil)
	code(t, "sync", h.awaitSync(h.syncAsync("g", r.MemberID, r.Generation, nil)).ErrorCode, nil)
	for range 2 {
		code(t, "first join", h.await(h.joinAsync(newJoin("g", ""))).ErrorCode, kerr.MemberIDRequired)
	}
	full := h.await(h.joinAsync(newJoin("g", "")))
	code(t, "join past the bound", full.ErrorCode, kerr.GroupMaxSizeReached)
	code(t, "static replacement at the bound", h.await(h.joinAsync(sj)).ErrorCode, nil)
	g := h.c.lookup("g")
	g.mu.Lock()
	n := len(g.mu.members) + len(g.mu.pending)
	g.mu.Unlock()
	if n != 3 {
		t.Fatalf("%d members and pending ids, want 3", n)
	}
}

// Durable classic membership: a static member's replacement that cannot be made durable is
// undone: the rejoin gets the error and the old member id stays the
// instance's, its session going on.
func TestStaticReplacementUndoneWhenNotDurable(t *testing.T) {
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{MaxGroupStateBytes: 400}}
	h.open()
	inst := "instance-1"
	sj := newJoin("g", "")
	sj.InstanceID = &inst
	r := h.await(h.joinAsync(sj))
	code(t, "static join", r.ErrorCode, nil)
	code(t, "sync", h.awaitSync(h.syncAsync("g", r.MemberID, r.Generation, map[string]string{r.MemberID: "S"})).ErrorCode, nil)

	// The same protocol with metadata that takes the membership past the
	// bound: no rebalance is needed, so the replacement must be persisted.
	re := newJoin("g", "")
	re.InstanceID = &inst
	re.Protocols[0].Metadata = append(consumerMeta("t"), make([]byte, 500)...)
	code(t, "oversized replacement", h.await(h.joinAsync(re)).ErrorCode, kerr.UnknownServerError)
	if d := h.describe("g"); d.State != "Stable" || len(d.Members) != 1 || d.Members[0].MemberID != r.MemberID {
		t.Fatalf("after the undone replacement %+v", d)
	}
	g := h.c.lookup("g")
	g.mu.Lock()
	owner := g.mu.static[inst]
	g.mu.Unlock()
	if owner != r.MemberID {
		t.Fatalf("instance owned by %q after the undone replacement, want %q", owner, r.MemberID)
	}
	// No heartbeat (it would restart the session): the old id's session
	// timer runs again and removes it.
	h.clock.Advance(testSession + time.Millisecond)
	if d := h.describe("g"); len(d.Members) != 0 {
		t.Fatalf("silent member not removed after its session: %+v", d)
	}
}

// Durable classic membership: a rebalance in progress is not persisted. A restart after the
// JoinGroup answers of generation N+1 but before the leader's SyncGroup
// resumes generation N: its members go on, a sync of N+1 is refused.
func TestRestartMidRebalanceResumesLastGeneration(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("g", 2)
	newID, newJoinCh := h.joinStart("g")
	rejoins := []<-chan joinOut{h.joinAsync(newJoin("g", ids[0])), h.joinAsync(newJoin("g", ids[1]))}
	if r := h.await(newJoinCh); r.Generation != gen+1 {
		t.Fatalf("new member joined generation %d, want %d", r.Generation, gen+1)
	}
	for _, ch := range rejoins {
		h.await(ch)
	}
	if st := h.state("g"); st != "CompletingRebalance" {
		t.Fatalf("state %s before the restart", st)
	}
	h.restart()

	if st := h.state("g"); st != "Stable" {
		t.Fatalf("state %s after the restart", st)
	}
	for _, id := range ids {
		code(t, "member of the last completed generation", h.heartbeat("g", id, gen), nil)
	}
	code(t, "sync of the unfinished generation", h.awaitSync(h.syncAsync("g", ids[0], gen+1, nil)).ErrorCode, kerr.IllegalGeneration)
	code(t, "member of the unfinished generation", h.heartbeat("g", newID, gen+1), kerr.UnknownMemberID)
}

// The new bounds refuse negative values; zero means the default.
func TestConfigBounds(t *testing.T) {
	if err := (Config{MaxGroupStateBytes: -1}).Validate(); err == nil {
		t.Fatal("negative MaxGroupStateBytes accepted")
	}
	if err := (Config{MaxGroupSize: -1}).Validate(); err == nil {
		t.Fatal("negative MaxGroupSize accepted")
	}
	cfg := Config{}.withDefaults()
	if cfg.MaxGroupStateBytes != DefaultMaxGroupStateBytes || cfg.MaxGroupSize != DefaultMaxGroupSize {
		t.Fatalf("defaults %d %d", cfg.MaxGroupStateBytes, cfg.MaxGroupSize)
	}
}
