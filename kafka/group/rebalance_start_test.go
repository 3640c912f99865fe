package group

import (
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// storedState is the group's state as the offsets store has it.
func (h *harness) storedState(group string) offsets.GroupState {
	h.t.Helper()
	groups, err := h.store.Groups()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, g := range groups {
		if g.ID == group {
			return g.State
		}
	}
	h.t.Fatalf("group %s not stored", group)
	return 0
}

// Persisted empty groups: as in Kafka, the start of a rebalance is not
// written. An Empty group whose offsets are due to expire stays Empty in
// the store while a member's join waits out the initial delay, and
// retention, which goes by the group's state in memory, passes over it:
// the offsets are there when the generation completes (written then).
func TestRebalanceStartNotWritten(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("g", 1)
	code(t, "commit", commitOne(h, "g", ids[0], gen, "t", 0, 7), nil)
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group = 3, "g"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[0]}}
	code(t, "leave", h.c.LeaveGroup(leave).Members[0].ErrorCode, nil)
	// The retention pass runs only when the test calls it.
	h.cfg.InitialRebalanceDelay, h.cfg.RetentionCheckInterval = time.Minute, 100*time.Hour
	h.restart()
	h.clock.Advance(25 * time.Hour) // Empty longer than the 24 h retention

	member, ch := h.joinStart("g")
	if st := h.state("g"); st != "PreparingRebalance" {
		t.Fatalf("state %s, want PreparingRebalance", st)
	}
	if st := h.storedState("g"); st != offsets.GroupEmpty {
		t.Fatalf("stored state %s while the first join waits: the rebalance's start was written", st)
	}
	h.c.ExpireOffsets()
	if p := fetchOne(t, h, 7, "g", "t", 0); p.Offset != 7 {
		t.Fatalf("offset %d during the rebalance: retention took a rebalancing group", p.Offset)
	}
	h.clock.Advance(time.Minute)
	r := h.await(ch)
	if r.MemberID != member || r.ErrorCode != 0 {
		t.Fatalf("join: member %s code %d", r.MemberID, r.ErrorCode)
	}
	if st := h.storedState("g"); st != offsets.GroupActive {
		t.Fatalf("stored state %s after the generation completed", st)
	}
	h.c.ExpireOffsets()
	if p := fetchOne(t, h, 7, "g", "t", 0); p.Offset != 7 {
		t.Fatalf("offset %d of a group with a member expired", p.Offset)
	}
}
