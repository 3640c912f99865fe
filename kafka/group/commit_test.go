package group

import (
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/offsets"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func commitReq(group, member string, gen int32, topic string, partition int32, offset int64, md *string) *kmsg.OffsetCommitRequest {
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version = 8
	r.Group, r.MemberID, r.Generation = group, member, gen
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = topic
	p := kmsg.NewOffsetCommitRequestTopicPartition()
	p.Partition, p.Offset, p.Metadata, p.LeaderEpoch = partition, offset, md, 4
	t.Partitions = append(t.Partitions, p)
	r.Topics = append(r.Topics, t)
	return r
}

func commitOne(h *harness, group, member string, gen int32, topic string, partition int32, offset int64) int16 {
	return h.c.OffsetCommit(commitReq(group, member, gen, topic, partition, offset, nil)).Topics[0].Partitions[0].ErrorCode
}

func fetchOne(t *testing.T, h *harness, version int16, group, topic string, partition int32) kmsg.OffsetFetchResponseTopicPartition {
	t.Helper()
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group = version, group
	r.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{partition}}}
	resp := h.c.OffsetFetch(r)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch %+v", resp)
	}
	return resp.Topics[0].Partitions[0]
}

// Simple consumers (generation -1, no member) commit into a group that does
// not exist yet; metadata round-trips; no commit is offset -1.
func TestSimpleCommitAndFetch(t *testing.T) {
	h := newHarness(t)
	md := "hello"
	resp := h.c.OffsetCommit(commitReq("simple", "", -1, "t", 0, 42, &md))
	code(t, "simple commit", resp.Topics[0].Partitions[0].ErrorCode, nil)
	p := fetchOne(t, h, 7, "simple", "t", 0)
	if p.Offset != 42 || *p.Metadata != "hello" || p.LeaderEpoch != 4 {
		t.Fatalf("fetched %+v", p)
	}
	if p := fetchOne(t, h, 1, "simple", "t", 1); p.Offset != -1 || *p.Metadata != "" {
		t.Fatalf("uncommitted %+v", p)
	}
	if p := fetchOne(t, h, 7, "nogroup", "t", 0); p.Offset != -1 {
		t.Fatalf("unknown group %+v", p)
	}
	// Null topics (v2+): everything the group committed.
	code(t, "second", commitOne(h, "simple", "", -1, "u", 3, 7), nil)
	all := kmsg.NewPtrOffsetFetchRequest()
	all.Version, all.Group = 5, "simple"
	got := h.c.OffsetFetch(all)
	if len(got.Topics) != 2 || got.Topics[0].Topic != "t" || got.Topics[1].Partitions[0].Offset != 7 {
		t.Fatalf("all offsets %+v", got.Topics)
	}
	// v8 batches groups.
	b := kmsg.NewPtrOffsetFetchRequest()
	b.Version = 8
	b.Groups = []kmsg.OffsetFetchRequestGroup{
		{Group: "simple", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0, 9}}}},
		{Group: "simple"},
		{Group: "other", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t", Partitions: []int32{0}}}},
	}
	br := h.c.OffsetFetch(b)
	if len(br.Groups) != 3 {
		t.Fatalf("v8 groups %+v", br)
	}
	g0 := br.Groups[0].Topics[0].Partitions
	if g0[0].Offset != 42 || *g0[0].Metadata != "hello" || g0[1].Offset != -1 {
		t.Fatalf("v8 group 0 %+v", g0)
	}
	if len(br.Groups[1].Topics) != 2 || br.Groups[2].Topics[0].Partitions[0].Offset != -1 {
		t.Fatalf("v8 groups 1-2 %+v", br.Groups[1:])
	}
	// ListGroups shows the offsets-only group with no protocol type.
	lg := h.c.ListGroups(&kmsg.ListGroupsRequest{Version: 4})
	if len(lg.Groups) != 1 || lg.Groups[0].Group != "simple" || lg.Groups[0].ProtocolType != "" || lg.Groups[0].GroupState != "Empty" {
		t.Fatalf("list %+v", lg.Groups)
	}
	big := strings.Repeat("x", DefaultMaxMetadataBytes+1)
	code(t, "metadata too large", h.c.OffsetCommit(commitReq("simple", "", -1, "t", 0, 1, &big)).Topics[0].Partitions[0].ErrorCode, kerr.OffsetMetadataTooLarge)
}

// Kafka's group error order: commit errors exactly as Kafka's validateOffsetCommit.
func TestCommitErrors(t *testing.T) {
	h := newHarness(t)
	code(t, "generation on unknown group", commitOne(h, "g", "", 3, "t", 0, 1), kerr.IllegalGeneration)
	if h.state("g") != "Dead" {
		t.Fatal("a rejected commit created the group")
	}
	ids, gen := h.stableGroup("g", 2)
	code(t, "member commit", commitOne(h, "g", ids[1], gen, "t", 0, 10), nil)
	code(t, "wrong generation", commitOne(h, "g", ids[1], gen+1, "t", 0, 11), kerr.IllegalGeneration)
	code(t, "unknown member", commitOne(h, "g", "ghost", gen, "t", 0, 11), kerr.UnknownMemberID)
	code(t, "simple commit into live group", commitOne(h, "g", "", -1, "t", 0, 11), kerr.UnknownMemberID)
	code(t, "member without generation into live group", commitOne(h, "g", ids[1], -1, "t", 0, 11), kerr.IllegalGeneration)
	if p := fetchOne(t, h, 8-1, "g", "t", 0); p.Offset != 10 {
		t.Fatalf("offset after rejected commits %d", p.Offset)
	}
}

// DeleteGroups: only Empty groups, offsets go with them; DescribeGroups and
// ListGroups (states filter) see the right states.
func TestDeleteDescribeList(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("live", 1)
	code(t, "commit", commitOne(h, "live", ids[0], gen, "t", 0, 5), nil)
	code(t, "simple", commitOne(h, "idle", "", -1, "t", 0, 5), nil)

	lg := h.c.ListGroups(&kmsg.ListGroupsRequest{Version: 4, StatesFilter: []string{"stable"}})
	if len(lg.Groups) != 1 || lg.Groups[0].Group != "live" || lg.Groups[0].ProtocolType != "consumer" {
		t.Fatalf("stable groups %+v", lg.Groups)
	}
	if n := len(h.c.ListGroups(&kmsg.ListGroupsRequest{Version: 3}).Groups); n != 2 {
		t.Fatalf("all groups %d", n)
	}
	d := h.describe("live")
	if d.ProtocolType != "consumer" || len(d.Members) != 1 || d.Members[0].ClientID != "cl" || d.Members[0].ClientHost != "/127.0.0.1" {
		t.Fatalf("describe %+v", d)
	}
	if d := h.describe("nope"); d.State != "Dead" || d.ErrorCode != 0 {
		t.Fatalf("describe unknown %+v", d)
	}

	del := &kmsg.DeleteGroupsRequest{Version: 2, Groups: []string{"live", "idle", "nope"}}
	dr := h.c.DeleteGroups(del)
	code(t, "delete live", dr.Groups[0].ErrorCode, kerr.NonEmptyGroup)
	code(t, "delete idle", dr.Groups[1].ErrorCode, nil)
	code(t, "delete unknown", dr.Groups[2].ErrorCode, kerr.GroupIDNotFound)
	if p := fetchOne(t, h, 7, "idle", "t", 0); p.Offset != -1 {
		t.Fatalf("offsets survived delete: %d", p.Offset)
	}

	l := kmsg.NewPtrLeaveGroupRequest()
	l.Group, l.MemberID = "live", ids[0]
	h.c.LeaveGroup(l)
	code(t, "delete emptied", h.c.DeleteGroups(&kmsg.DeleteGroupsRequest{Groups: []string{"live"}}).Groups[0].ErrorCode, nil)
	if n := len(h.c.ListGroups(&kmsg.ListGroupsRequest{}).Groups); n != 0 {
		t.Fatalf("groups left %d", n)
	}
	// The id is free again.
	h.join("live")
}

// OffsetDelete: a live consumer group keeps offsets of subscribed topics.
func TestOffsetDelete(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("g", 1)
	code(t, "commit t", commitOne(h, "g", ids[0], gen, "t", 0, 5), nil)
	code(t, "commit u", commitOne(h, "g", ids[0], gen, "u", 0, 6), nil)
	r := kmsg.NewPtrOffsetDeleteRequest()
	r.Group = "g"
	r.Topics = []kmsg.OffsetDeleteRequestTopic{
		{Topic: "t", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
		{Topic: "u", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
	}
	resp := h.c.OffsetDelete(r)
	code(t, "group", resp.ErrorCode, nil)
	code(t, "subscribed", resp.Topics[0].Partitions[0].ErrorCode, kerr.GroupSubscribedToTopic)
	code(t, "unsubscribed", resp.Topics[1].Partitions[0].ErrorCode, nil)
	if fetchOne(t, h, 7, "g", "t", 0).Offset != 5 || fetchOne(t, h, 7, "g", "u", 0).Offset != -1 {
		t.Fatal("wrong offsets deleted")
	}
	r.Group = "nope"
	code(t, "unknown group", h.c.OffsetDelete(r).ErrorCode, kerr.GroupIDNotFound)
}

// Persisted empty groups: after a restart, an Empty group with offsets is listed (Empty, with
// its protocol type), its offsets are there, and generations continue.
func TestRestartKeepsGroups(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("g", 2)
	md := "m"
	code(t, "commit", h.c.OffsetCommit(commitReq("g", ids[0], gen, "t", 1, 99, &md)).Topics[0].Partitions[0].ErrorCode, nil)
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group = 4, "g"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[0]}, {MemberID: ids[1]}}
	h.c.LeaveGroup(leave)
	h.restart()

	lg := h.c.ListGroups(&kmsg.ListGroupsRequest{Version: 4})
	if len(lg.Groups) != 1 || lg.Groups[0].Group != "g" || lg.Groups[0].GroupState != "Empty" || lg.Groups[0].ProtocolType != "consumer" {
		t.Fatalf("after restart %+v", lg.Groups)
	}
	if p := fetchOne(t, h, 7, "g", "t", 1); p.Offset != 99 || *p.Metadata != "m" {
		t.Fatalf("offset after restart %+v", p)
	}
	code(t, "old member after restart", h.heartbeat("g", ids[0], gen), kerr.UnknownMemberID)
	if r := h.join("g"); r.Generation != gen+2 {
		t.Fatalf("generation after restart %d, want %d", r.Generation, gen+2)
	}
}

// KIP-211 retention through the coordinator: an Empty group's offsets
// expire a retention period after it emptied, and the group goes; a live
// group's never do.
func TestRetention(t *testing.T) {
	h := newHarness(t)
	ids, gen := h.stableGroup("gone", 1)
	code(t, "commit", commitOne(h, "gone", ids[0], gen, "t", 0, 1), nil)
	// The live member's session outlasts the test's 25 hours.
	lj := newJoin("live", "")
	lj.Version = 3
	lj.SessionTimeoutMillis = int32(30 * time.Hour / time.Millisecond)
	lr := h.await(h.joinAsync(lj))
	live, lgen := []string{lr.MemberID}, lr.Generation
	code(t, "live sync", h.awaitSync(h.syncAsync("live", live[0], lgen, nil)).ErrorCode, nil)
	code(t, "commit", commitOne(h, "live", live[0], lgen, "t", 0, 1), nil)
	l := kmsg.NewPtrLeaveGroupRequest()
	l.Group, l.MemberID = "gone", ids[0]
	h.c.LeaveGroup(l)

	for i := 0; i < 5; i++ { // 25h in 5h steps, heartbeating the live group
		h.clock.Advance(5 * time.Hour)
		h.heartbeat("live", live[0], lgen)
	}
	h.c.ExpireOffsets()
	if h.state("gone") != "Dead" || fetchOne(t, h, 7, "gone", "t", 0).Offset != -1 {
		t.Fatalf("expired group still there: %s", h.state("gone"))
	}
	if fetchOne(t, h, 7, "live", "t", 0).Offset != 1 || h.state("live") == "Dead" {
		t.Fatal("live group's offsets expired")
	}
}

// An Empty group nothing was ever stored for (a join that never came back)
// is dropped by the retention pass.
func TestCleanupOfNeverStoredGroup(t *testing.T) {
	h := newHarness(t)
	first := h.await(h.joinAsync(newJoin("ghost", "")))
	code(t, "first", first.ErrorCode, kerr.MemberIDRequired)
	h.clock.Advance(testSession) // the handed-out id expires
	if h.state("ghost") != "Empty" {
		t.Fatalf("state %s", h.state("ghost"))
	}
	h.c.ExpireOffsets()
	if h.state("ghost") != "Dead" {
		t.Fatalf("state after cleanup %s", h.state("ghost"))
	}
}

// A commit the store cannot take is never acknowledged: the client gets a
// retriable COORDINATOR_NOT_AVAILABLE per partition.
func TestCommitStoreFailure(t *testing.T) {
	h := newHarness(t)
	code(t, "commit", commitOne(h, "g", "", -1, "t", 0, 1), nil)
	_ = h.store.Close()
	code(t, "commit on closed store", commitOne(h, "g", "", -1, "t", 0, 2), kerr.CoordinatorNotAvailable)
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version, r.Group = 7, "g"
	code(t, "fetch on closed store", h.c.OffsetFetch(r).ErrorCode, kerr.CoordinatorNotAvailable)
}

// Kafka's group error order: a commit with generation -1 and a member id (a consumer outside group
// management that still sends one, or whose group is gone) is accepted into
// an absent or Empty group, as Kafka's validateOffsetCommit does; a live
// group still refuses it.
func TestCommitNoGenerationWithMemberID(t *testing.T) {
	h := newHarness(t)
	code(t, "member on absent group", commitOne(h, "g", "m", -1, "t", 0, 1), nil)
	if h.state("g") != "Empty" {
		t.Fatalf("state %s, want Empty", h.state("g"))
	}
	code(t, "member on Empty group", commitOne(h, "g", "other", -1, "t", 0, 2), nil)
	r := commitReq("static", "m", -1, "t", 0, 3, nil)
	r.InstanceID = kmsg.StringPtr("instance")
	code(t, "static member on absent group", h.c.OffsetCommit(r).Topics[0].Partitions[0].ErrorCode, nil)

	// A group whose members all left is Empty again: its old member's
	// commit outside the group is accepted.
	ids, gen := h.stableGroup("left", 1)
	code(t, "live member, no generation", commitOne(h, "left", ids[0], -1, "t", 0, 4), kerr.IllegalGeneration)
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group = 3, "left"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: ids[0]}}
	code(t, "leave", h.c.LeaveGroup(leave).Members[0].ErrorCode, nil)
	code(t, "old member, no generation, Empty group", commitOne(h, "left", ids[0], -1, "t", 0, 5), nil)
	code(t, "old member, old generation, Empty group", commitOne(h, "left", ids[0], gen, "t", 0, 6), kerr.UnknownMemberID)
	for _, c := range []struct {
		group  string
		offset int64
	}{{"g", 2}, {"static", 3}, {"left", 5}} {
		if p := fetchOne(t, h, 7, c.group, "t", 0); p.Offset != c.offset {
			t.Errorf("%s: committed %d, want %d", c.group, p.Offset, c.offset)
		}
	}
}

// O7 (KIP-447): with require_stable, a partition holding a pending
// transactional offset is UNSTABLE_OFFSET_COMMIT (v7 and v8 forms, and a
// fetch of all partitions); without it, or for other partitions, the
// committed offset is answered.
func TestOffsetFetchRequireStable(t *testing.T) {
	h := newHarness(t)
	code(t, "commit", commitOne(h, "g", "", -1, "t", 0, 3), nil)
	code(t, "commit other", commitOne(h, "g", "", -1, "t", 1, 4), nil)
	if err := h.store.PutPending("txn", "g", []offsets.Commit{{TopicPartition: offsets.TopicPartition{Topic: "t", Partition: 0}, Offset: 9}}); err != nil {
		t.Fatal(err)
	}
	stable := func(version int16, topics []kmsg.OffsetFetchRequestTopic) []kmsg.OffsetFetchResponseTopicPartition {
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.Group, r.Topics, r.RequireStable = version, "g", topics, true
		if version >= 8 {
			rg := kmsg.NewOffsetFetchRequestGroup()
			rg.Group = "g"
			for _, tt := range topics {
				rg.Topics = append(rg.Topics, kmsg.OffsetFetchRequestGroupTopic{Topic: tt.Topic, Partitions: tt.Partitions})
			}
			r.Groups = []kmsg.OffsetFetchRequestGroup{rg}
			var out []kmsg.OffsetFetchResponseTopicPartition
			for _, p := range h.c.OffsetFetch(r).Groups[0].Topics[0].Partitions {
				out = append(out, kmsg.OffsetFetchResponseTopicPartition{Partition: p.Partition, Offset: p.Offset, ErrorCode: p.ErrorCode})
			}
			return out
		}
		return h.c.OffsetFetch(r).Topics[0].Partitions
	}
	both := []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	for _, v := range []int16{7, 8} {
		ps := stable(v, both)
		code(t, "pending partition", ps[0].ErrorCode, kerr.UnstableOffsetCommit)
		if ps[0].Offset != -1 || ps[1].ErrorCode != 0 || ps[1].Offset != 4 {
			t.Fatalf("v%d: %+v", v, ps)
		}
	}
	if all := stable(7, nil); len(all) != 2 || all[0].ErrorCode != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("all partitions: %+v", all)
	}
	if p := fetchOne(t, h, 7, "g", "t", 0); p.Offset != 3 || p.ErrorCode != 0 {
		t.Fatalf("without require_stable: %+v", p)
	}
}

// Kafka's group error order for TxnOffsetCommit: Kafka's validateOffsetCommit with
// isTransactional: members and generations are checked as for
// OffsetCommit, but a commit without member and generation is accepted
// into a group with members.
func TestValidateTxnOffsetCommit(t *testing.T) {
	h := newHarness(t)
	members, gen := h.stableGroup("g", 1)
	code(t, "member", h.c.ValidateTxnOffsetCommit("g", members[0], nil, gen), nil)
	code(t, "old generation", h.c.ValidateTxnOffsetCommit("g", members[0], nil, gen-1), kerr.IllegalGeneration)
	code(t, "unknown member", h.c.ValidateTxnOffsetCommit("g", "nobody", nil, gen), kerr.UnknownMemberID)
	code(t, "no member, transactional", h.c.ValidateTxnOffsetCommit("g", "", nil, -1), nil)
	code(t, "no member, plain", commitOne(h, "g", "", -1, "t", 0, 1), kerr.UnknownMemberID)
	code(t, "new group", h.c.ValidateTxnOffsetCommit("fresh", "", nil, -1), nil)
	code(t, "bad group", h.c.ValidateTxnOffsetCommit("", "", nil, -1), kerr.InvalidGroupID)
	code(t, "metadata", h.c.CheckTxnOffset("t", 0, strings.Repeat("m", DefaultMaxMetadataBytes+1)), kerr.OffsetMetadataTooLarge)
	// A member's commit to an absent group creates nothing: from v6
	// (KIP-1319) GROUP_ID_NOT_FOUND, before ILLEGAL_GENERATION, as Kafka.
	code(t, "absent group v6", h.c.ValidateTxnOffsetCommitAt(6, "absent", "m", nil, 3), kerr.GroupIDNotFound)
	code(t, "absent group v5", h.c.ValidateTxnOffsetCommitAt(5, "absent", "m", nil, 3), kerr.IllegalGeneration)
	if h.c.HasGroup("absent") {
		t.Error("a member's TxnOffsetCommit created its absent group")
	}
	code(t, "absent group, simple v6", h.c.ValidateTxnOffsetCommitAt(6, "simple", "", nil, -1), nil)
}
