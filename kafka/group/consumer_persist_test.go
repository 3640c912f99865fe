package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets/offsetstest"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func settle(h *harness, group string, ms ...*cm) {
	for range 4 {
		for _, m := range ms {
			h.beat(group, m, false)
		}
	}
}

// Durable consumer group state, consumer groups restored at restart: after a restart the members heartbeat with their epochs and
// keep their partitions; nothing is reassigned and the epochs stay.
func TestConsumerRestartKeepsAssignment(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 4)
	a, b := &cm{id: "a", topics: []string{"t"}}, &cm{id: "b", topics: []string{"t"}}
	h.beat("g", a, true)
	h.beat("g", b, true)
	settle(h, "g", a, b)
	ea, eb, oa, ob := a.epoch, b.epoch, a.owned.clone(), b.owned.clone()
	h.restart()
	for _, m := range []*cm{a, b} {
		if resp := h.beat("g", m, false); resp.ErrorCode != 0 {
			t.Fatalf("%s after restart: %v", m.id, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
	if a.epoch != ea || b.epoch != eb || !a.owned.equal(oa) || !b.owned.equal(ob) {
		t.Fatalf("restart moved things: a %d %v (was %d %v), b %d %v (was %d %v)", a.epoch, a.owned, ea, oa, b.epoch, b.owned, eb, ob)
	}
	dreq := kmsg.NewPtrConsumerGroupDescribeRequest()
	dreq.Groups = []string{"g"}
	dg := h.c.ConsumerGroupDescribe(dreq).Groups[0]
	if dg.ErrorCode != 0 || dg.State != "Stable" || len(dg.Members) != 2 || dg.AssignorName != "uniform" {
		t.Fatalf("described after restart: %+v", dg)
	}
	// A member silent since the restart is removed one session later.
	h.clock.Advance(DefaultConsumerSessionTimeout / 2)
	h.beat("g", a, false)
	h.clock.Advance(DefaultConsumerSessionTimeout/2 + time.Second)
	settle(h, "g", a)
	if a.owned.count() != 4 {
		t.Fatalf("a owns %v after b expired", a.owned)
	}
}

// Server-side regex subscriptions: a regex subscription picks up a topic created later. (Internal
// topics are whatever the lister offers; kafka/ offers them, as Kafka's
// broker matches them: test/internal_partitions_test.go.)
func TestConsumerRegexPicksUpNewTopic(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("orders-a", 2)
	topics.add("other", 2)
	re := "orders-.*"
	a := &cm{id: "a", regex: &re}
	h.beat("g", a, true)
	settle(h, "g", a)
	if a.owned.count() != 2 {
		t.Fatalf("a owns %v", a.owned)
	}
	id := topics.add("orders-b", 3)
	h.clock.Advance(2 * metadataRefresh)
	settle(h, "g", a)
	if a.owned.count() != 5 || len(a.owned[id]) != 3 {
		t.Fatalf("new topic not picked up: %v", a.owned)
	}
}

// Consumer groups restored at restart: a static member leaving with epoch -2 keeps its partitions; its
// instance id rejoining under a new member id takes them over without a
// new group epoch. While the old member is still in, the instance id is
// UNRELEASED_INSTANCE_ID.
func TestConsumerStaticMemberRejoin(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 4)
	inst := "i1"
	a := &cm{id: "a", topics: []string{"t"}, inst: &inst}
	b := &cm{id: "b", topics: []string{"t"}}
	h.beat("g", a, true)
	h.beat("g", b, true)
	settle(h, "g", a, b)
	owned, epoch := a.owned.clone(), a.epoch
	a2 := &cm{id: "a2", topics: []string{"t"}, inst: &inst}
	code(t, "instance still in use", h.beat("g", a2, true).ErrorCode, kerr.UnreleasedInstanceID)
	a.epoch = epochStaticLeave
	if resp := h.beat("g", a, false); resp.ErrorCode != 0 || resp.MemberEpoch != epochStaticLeave {
		t.Fatalf("static leave: %v epoch %d", kerr.ErrorForCode(resp.ErrorCode), resp.MemberEpoch)
	}
	settle(h, "g", b)
	if b.owned.count() != 2 {
		t.Fatalf("b took the static member's partitions: %v", b.owned)
	}
	if resp := h.beat("g", a2, true); resp.ErrorCode != 0 {
		t.Fatalf("rejoin: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	if !a2.owned.equal(owned) || a2.epoch != epoch {
		t.Fatalf("rejoined static member got %v at %d, had %v at %d", a2.owned, a2.epoch, owned, epoch)
	}
	code(t, "old member id fenced", h.beat("g", &cm{id: "a", epoch: epoch, inst: &inst, owned: owned}, false).ErrorCode, kerr.FencedInstanceID)
}

// Commits at the member epoch: OffsetCommit v9 and OffsetFetch v9 check the member epoch; older
// OffsetCommit versions are refused for members of the consumer protocol.
func TestConsumerCommitEpochs(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 1)
	a := &cm{id: "a", topics: []string{"t"}}
	h.beat("g", a, true)
	commit := func(version int16, epoch int32) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.MemberID, req.Generation = version, "g", "a", epoch
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset = 5
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return h.c.OffsetCommit(req).Topics[0].Partitions[0].ErrorCode
	}
	code(t, "stale epoch", commit(9, a.epoch-1), kerr.StaleMemberEpoch)
	code(t, "v8", commit(8, a.epoch), kerr.UnsupportedVersion)
	code(t, "current epoch", commit(9, a.epoch), nil)
	fetch := func(epoch int32) int16 {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = 9
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group, rg.MemberID, rg.MemberEpoch = "g", kmsg.StringPtr("a"), epoch
		req.Groups = append(req.Groups, rg)
		return h.c.OffsetFetch(req).Groups[0].ErrorCode
	}
	code(t, "txn stale", h.c.ValidateTxnOffsetCommit("g", "a", nil, a.epoch-1), kerr.IllegalGeneration)
	code(t, "txn stale v6", h.c.ValidateTxnOffsetCommitAt(6, "g", "a", nil, a.epoch-1), kerr.StaleMemberEpoch) // KIP-1319
	code(t, "txn current", h.c.ValidateTxnOffsetCommit("g", "a", nil, a.epoch), nil)
	absent := func(version int16) int16 {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version, req.Group, req.MemberID, req.Generation = version, "absent", "a", 3
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "t"
		rt.Partitions = append(rt.Partitions, kmsg.NewOffsetCommitRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		return h.c.OffsetCommit(req).Topics[0].Partitions[0].ErrorCode
	}
	code(t, "v9 commit to an absent group", absent(9), kerr.GroupIDNotFound)
	code(t, "v8 commit to an absent group", absent(8), kerr.IllegalGeneration)
	code(t, "fetch stale", fetch(a.epoch+1), kerr.StaleMemberEpoch)
	code(t, "fetch current", fetch(a.epoch), nil)
}

// Durable consumer group state: every heartbeat answer is durable before it is sent: a crash
// right after the answers (only synced bytes survive) keeps the group
// exactly as described before it, including a revocation in progress.
func TestConsumerAnswerDurableAcrossCrash(t *testing.T) {
	fs := offsetstest.NewCrashable()
	topics := &staticTopics{}
	topics.add("t", 4)
	h := &harness{t: t, clock: newFakeClock(), dir: "offsets", fs: fs, cfg: Config{Metadata: topics}}
	h.open()
	a, b := &cm{id: "a", topics: []string{"t"}}, &cm{id: "b", topics: []string{"t"}}
	h.beat("g", a, true)
	h.beat("g", b, true)
	h.beat("g", a, false) // a is told to revoke two partitions
	if a.owned.count() != 2 {
		t.Fatalf("a owns %v", a.owned)
	}
	describe := func() string {
		dreq := kmsg.NewPtrConsumerGroupDescribeRequest()
		dreq.Groups = []string{"g"}
		dg := h.c.ConsumerGroupDescribe(dreq).Groups[0]
		out := fmt.Sprintf("epoch %d/%d", dg.Epoch, dg.AssignmentEpoch)
		for _, m := range dg.Members {
			out += fmt.Sprintf("; %s@%d %v -> %v", m.MemberID, m.MemberEpoch, m.Assignment.TopicPartitions, m.TargetAssignment.TopicPartitions)
		}
		return out
	}
	before := describe()
	crashed := fs.Crash()
	h.close()
	h.fs = crashed
	h.open()
	if after := describe(); after != before {
		t.Fatalf("state lost in the crash:\nbefore %s\nafter  %s", before, after)
	}
	settle(h, "g", a, b)
	noDoubleOwnership(t, []*cm{a, b})
	if a.owned.count() != 2 || b.owned.count() != 2 {
		t.Fatalf("after crash a %v b %v", a.owned, b.owned)
	}
}

// Durable consumer group state: a join whose state would exceed the group's bound is refused
// (UNKNOWN_SERVER_ERROR, as Kafka for a record too large) and leaves no
// trace: the group goes back to its last durable state and its members
// go on.
func TestConsumerStateBoundRollsBack(t *testing.T) {
	topics := &staticTopics{}
	topics.add("t", 2)
	h := &harness{t: t, clock: newFakeClock(), dir: t.TempDir(), cfg: Config{Metadata: topics, MaxGroupStateBytes: 2000}}
	h.open()
	a := &cm{id: "a", topics: []string{"t"}}
	code(t, "join", h.beat("g", a, true).ErrorCode, nil)
	settle(h, "g", a)
	var many []string
	for i := range 100 {
		many = append(many, fmt.Sprintf("topic-with-a-long-name-%03d", i))
	}
	code(t, "oversized join", h.beat("g", &cm{id: "big", topics: many}, true).ErrorCode, kerr.UnknownServerError)
	dreq := kmsg.NewPtrConsumerGroupDescribeRequest()
	dreq.Groups = []string{"g"}
	if dg := h.c.ConsumerGroupDescribe(dreq).Groups[0]; len(dg.Members) != 1 || dg.Epoch != 1 {
		t.Fatalf("after the refused join: %d members, epoch %d", len(dg.Members), dg.Epoch)
	}
	epoch := a.epoch
	code(t, "a goes on", h.beat("g", a, false).ErrorCode, nil)
	if a.epoch != epoch || a.owned.count() != 2 {
		t.Fatalf("a at %d with %v", a.epoch, a.owned)
	}
}
