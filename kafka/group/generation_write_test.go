package group

import (
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// storedGeneration is the group's generation in the store's metadata
// record and in its membership record (-1: none), and the members there.
func (h *harness) storedGeneration(group string) (meta, members int32, n int) {
	h.t.Helper()
	meta, members = -1, -1
	groups, err := h.store.Groups()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, g := range groups {
		if g.ID == group {
			meta = g.Generation
		}
	}
	classic, err := h.store.ClassicGroups()
	if err != nil {
		h.t.Fatal(err)
	}
	if cg, ok := classic[group]; ok {
		members, n = cg.Generation, len(cg.Members)
	}
	return meta, members, n
}

// Durable classic membership: as in Kafka (completeClassicGroupJoin
// appends nothing), a generation with members is written once, with the
// leader's assignment. A member joining a Stable group (kgbench's "+1")
// costs no synced write until the leader's SyncGroup, whose write holds
// the new generation; a restart before it resumes the last assigned
// generation, and one after it the new one.
func TestClassicGenerationWrittenWithAssignment(t *testing.T) {
	h := newHarness(t)
	var writes atomic.Int32
	h.writeHook = func() error { writes.Add(1); return nil }
	h.restart()
	ids, gen := h.stableGroup("g", 1)
	a := ids[0]

	// A second member joins; the first learns at its heartbeat and rejoins.
	before := writes.Load()
	b, chB := h.joinStart("g")
	code(t, "heartbeat", h.heartbeat("g", a, gen), kerr.RebalanceInProgress)
	ra := h.await(h.joinAsync(newJoin("g", a)))
	rb := h.await(chB)
	if ra.ErrorCode != 0 || rb.ErrorCode != 0 || ra.Generation != gen+1 {
		t.Fatalf("rejoin: codes %d %d, generation %d", ra.ErrorCode, rb.ErrorCode, ra.Generation)
	}
	if n := writes.Load() - before; n != 0 {
		t.Fatalf("%d synced writes from the join to the join's completion, want 0", n)
	}
	if meta, mgen, n := h.storedGeneration("g"); meta != gen || mgen != gen || n != 1 {
		t.Fatalf("stored after the join completed: metadata generation %d, membership %d with %d members; want %d, one member", meta, mgen, n, gen)
	}

	// Restart before the leader's sync: the last assigned generation.
	h.restart()
	code(t, "heartbeat of the assigned generation after the restart", h.heartbeat("g", a, gen), nil)
	code(t, "heartbeat of the unassigned member after the restart", h.heartbeat("g", b, gen+1), kerr.UnknownMemberID)

	// Again, and this time the leader syncs: one write, the new generation.
	b, chB = h.joinStart("g")
	code(t, "heartbeat", h.heartbeat("g", a, gen), kerr.RebalanceInProgress)
	ra = h.await(h.joinAsync(newJoin("g", a)))
	rb = h.await(chB)
	leader := ra.LeaderID
	follower := h.syncAsync("g", b, rb.Generation, nil)
	if leader == b {
		follower = h.syncAsync("g", a, ra.Generation, nil)
	}
	before = writes.Load()
	if r := h.awaitSync(h.syncAsync("g", leader, ra.Generation, map[string]string{a: "a", b: "b"})); r.ErrorCode != 0 {
		t.Fatalf("leader sync: code %d", r.ErrorCode)
	}
	if r := h.awaitSync(follower); r.ErrorCode != 0 {
		t.Fatalf("follower sync: code %d", r.ErrorCode)
	}
	if n := writes.Load() - before; n != 1 {
		t.Fatalf("%d synced writes for the leader's assignment, want 1", n)
	}
	h.restart()
	if meta, mgen, n := h.storedGeneration("g"); meta != ra.Generation || mgen != ra.Generation || n != 2 {
		t.Fatalf("stored after the sync and a restart: metadata generation %d, membership %d with %d members; want %d, two", meta, mgen, n, ra.Generation)
	}
	code(t, "heartbeat a", h.heartbeat("g", a, ra.Generation), nil)
	code(t, "heartbeat b", h.heartbeat("g", b, ra.Generation), nil)
}
