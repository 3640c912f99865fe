package group

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// clm is a simulated classic consumer (cooperative): it owns what its
// last SyncGroup gave it and reports that in its JoinGroup metadata.
type clm struct {
	id    string
	gen   int32
	owned []int32 // partitions of topic "t"
}

func classicMeta848(owned []int32) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version, m.Topics = 3, []string{"t"}
	if len(owned) > 0 {
		m.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "t", Partitions: slices.Clone(owned)}}
	}
	return m.AppendTo(nil)
}

func assignmentBytes(parts ...int32) []byte {
	a := kmsg.NewConsumerMemberAssignment()
	a.Version = 3
	a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t", Partitions: parts}}
	return a.AppendTo(nil)
}

func (h *harness) classicJoin(group string, m *clm) *kmsg.JoinGroupResponse {
	h.t.Helper()
	req := newJoin(group, m.id, "cooperative-sticky")
	req.Protocols[0].Metadata = classicMeta848(m.owned)
	resp := h.await(h.joinAsync(req))
	if resp.ErrorCode == kerr.MemberIDRequired.Code {
		m.id = resp.MemberID
		req.MemberID = m.id
		resp = h.await(h.joinAsync(req))
	}
	if resp.ErrorCode == 0 {
		m.gen = resp.Generation
	}
	return resp
}

func (h *harness) classicSync(group string, m *clm, assign map[string][]byte) int16 {
	h.t.Helper()
	r := kmsg.NewPtrSyncGroupRequest()
	r.Version = 5
	r.Group, r.MemberID, r.Generation = group, m.id, m.gen
	pt, pn := "consumer", "cooperative-sticky"
	r.ProtocolType, r.Protocol = &pt, &pn
	for id, a := range assign {
		ga := kmsg.NewSyncGroupRequestGroupAssignment()
		ga.MemberID, ga.MemberAssignment = id, a
		r.GroupAssignment = append(r.GroupAssignment, ga)
	}
	ch := make(chan syncOut, 1)
	go func() {
		resp, err := h.c.SyncGroup(h.t.Context(), r)
		ch <- syncOut{resp, err}
	}()
	resp := h.awaitSync(ch)
	if resp.ErrorCode == 0 {
		var a kmsg.ConsumerMemberAssignment
		if err := a.ReadFrom(resp.MemberAssignment); err != nil {
			h.t.Fatalf("sync assignment: %v", err)
		}
		m.owned = nil
		for _, t := range a.Topics {
			m.owned = append(m.owned, t.Partitions...)
		}
	}
	return resp.ErrorCode
}

// classicGroupOf2 forms a Stable classic group of two cooperative
// members splitting t's 4 partitions, as a client-side leader would.
func (h *harness) classicGroupOf2(group string) (*clm, *clm) {
	h.t.Helper()
	a, b := &clm{}, &clm{}
	code(h.t, "a joins", h.classicJoin(group, a).ErrorCode, nil)
	code(h.t, "a syncs", h.classicSync(group, a, map[string][]byte{a.id: assignmentBytes(0, 1, 2, 3)}), nil)
	first := h.await(h.joinAsync(newJoin(group, "", "cooperative-sticky")))
	b.id = first.MemberID
	reqB := newJoin(group, b.id, "cooperative-sticky")
	reqB.Protocols[0].Metadata = classicMeta848(nil)
	chB := h.joinAsync(reqB)
	h.waitParked(group, b.id, chB)
	code(h.t, "a rejoins", h.classicJoin(group, a).ErrorCode, nil)
	b.gen = h.await(chB).Generation
	chSync := make(chan int16, 1)
	go func() { chSync <- h.classicSync(group, b, nil) }()
	code(h.t, "leader sync", h.classicSync(group, a, map[string][]byte{a.id: assignmentBytes(0, 1), b.id: assignmentBytes(2, 3)}), nil)
	code(h.t, "follower sync", <-chSync, nil)
	return a, b
}

// settle drives the classic members (heartbeat; on REBALANCE_IN_PROGRESS
// rejoin with what they own, then sync) and the consumer-protocol
// members (heartbeat) until nothing changes, checking after every step
// that no partition is owned twice.
func (h *harness) settle(group string, cls []*clm, cms []*cm) {
	h.t.Helper()
	check := func() {
		seen := map[int32]string{}
		for _, m := range cls {
			for _, p := range m.owned {
				if o, ok := seen[p]; ok {
					h.t.Fatalf("partition %d owned by %s and %s", p, o, m.id)
				}
				seen[p] = m.id
			}
		}
		for _, m := range cms {
			for _, x := range m.owned.tps() {
				if o, ok := seen[x.part]; ok {
					h.t.Fatalf("partition %d owned by %s and %s", x.part, o, m.id)
				}
				seen[x.part] = m.id
			}
		}
	}
	for range 20 {
		for _, m := range cls {
			if c := h.heartbeat(group, m.id, m.gen); c == kerr.RebalanceInProgress.Code {
				code(h.t, "classic rejoin", h.classicJoin(group, m).ErrorCode, nil)
				code(h.t, "classic sync", h.classicSync(group, m, nil), nil)
			} else if c != 0 {
				h.t.Fatalf("classic heartbeat of %s: %v", m.id, kerr.ErrorForCode(c))
			}
			check()
		}
		for _, m := range cms {
			code(h.t, "consumer heartbeat", h.beat(group, m, false).ErrorCode, nil)
			check()
		}
	}
}

func (h *harness) describe848(group string) kmsg.ConsumerGroupDescribeResponseGroup {
	r := kmsg.NewPtrConsumerGroupDescribeRequest()
	r.Version = 1
	r.Groups = []string{group}
	return h.c.ConsumerGroupDescribe(r).Groups[0]
}

// Online upgrade and downgrade (KIP-848's migration path, migrate.go):
// a consumer-protocol member joins a classic group with members; the
// group becomes a consumer group keeping the classic members, which go
// on through Heartbeat, JoinGroup and SyncGroup; the partitions are
// split among the three with none ever owned twice; the group survives
// a restart; when the consumer-protocol member leaves, the group is
// classic again and rebalances.
func TestMigrationUpgradeServeDowngrade(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 4)
	a, b := h.classicGroupOf2("g")
	gen := a.gen

	c := &cm{id: "c", topics: []string{"t"}}
	code(t, "consumer member joins the classic group", h.beat("g", c, true).ErrorCode, nil)
	d := h.describe848("g")
	if d.ErrorCode != 0 || len(d.Members) != 3 || d.Epoch != gen+1 {
		t.Fatalf("after upgrade: %+v", d)
	}
	for _, m := range d.Members {
		if want := int8(0); m.MemberID != "c" && m.MemberType != want {
			t.Fatalf("member %s type %d, want classic", m.MemberID, m.MemberType)
		}
	}
	// The classic members are told to rejoin (they are behind the epoch).
	code(t, "classic heartbeat after upgrade", h.heartbeat("g", a.id, a.gen), kerr.RebalanceInProgress)
	code(t, "stale generation", h.heartbeat("g", a.id, a.gen-1), kerr.IllegalGeneration)
	h.settle("g", []*clm{a, b}, []*cm{c})
	total := len(a.owned) + len(b.owned) + c.owned.count()
	if total != 4 || c.owned.count() == 0 || len(a.owned) == 0 || len(b.owned) == 0 {
		t.Fatalf("after settling: a %v b %v c %v", a.owned, b.owned, c.owned)
	}
	// A classic member commits with its generation (any version).
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.MemberID, commit.Generation = 7, "g", a.id, a.gen
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "t"
	ct.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: a.owned[0], Offset: 5}}
	commit.Topics = []kmsg.OffsetCommitRequestTopic{ct}
	code(t, "classic commit", h.c.OffsetCommit(commit).Topics[0].Partitions[0].ErrorCode, nil)
	commit.Generation = a.gen + 7
	code(t, "classic commit, wrong generation", h.c.OffsetCommit(commit).Topics[0].Partitions[0].ErrorCode, kerr.IllegalGeneration)

	h.restart()
	code(t, "classic heartbeat after restart", h.heartbeat("g", a.id, a.gen), nil)
	if d := h.describe848("g"); len(d.Members) != 3 {
		t.Fatalf("after restart: %+v", d)
	}

	// Downgrade: the consumer-protocol member leaves.
	c.epoch = epochLeave
	code(t, "consumer member leaves", h.beat("g", c, false).ErrorCode, nil)
	code(t, "describe after downgrade", h.describe848("g").ErrorCode, kerr.GroupIDNotFound)
	if st := h.state("g"); st != "PreparingRebalance" {
		t.Fatalf("after downgrade: %s", st)
	}
	h.restart() // the classic record is what is durable
	if dg := h.describe("g"); dg.State == "Dead" || len(dg.Members) != 2 || dg.ProtocolType != "consumer" {
		t.Fatalf("classic group after downgrade and restart: %+v", dg)
	}
}

// group.consumer.migration.policy: "upgrade" converts but never back
// (the group stays a consumer group of classic members), "downgrade"
// and "disabled" refuse the upgrade as Kafka: GROUP_ID_NOT_FOUND.
func TestMigrationPolicy(t *testing.T) {
	for _, policy := range []string{MigrationDowngrade, MigrationDisabled} {
		h, topics := new848Harness(t)
		h.cfg.ConsumerMigrationPolicy = policy
		h.restart()
		topics.add("t", 4)
		h.classicGroupOf2("g")
		code(t, policy, h.beat("g", &cm{id: "c", topics: []string{"t"}}, true).ErrorCode, kerr.GroupIDNotFound)
	}
	h, topics := new848Harness(t)
	h.cfg.ConsumerMigrationPolicy = MigrationUpgrade
	h.restart()
	topics.add("t", 4)
	a, b := h.classicGroupOf2("g")
	c := &cm{id: "c", topics: []string{"t"}}
	code(t, "upgrade", h.beat("g", c, true).ErrorCode, nil)
	h.settle("g", []*clm{a, b}, []*cm{c})
	c.epoch = epochLeave
	code(t, "leave", h.beat("g", c, false).ErrorCode, nil)
	if d := h.describe848("g"); d.ErrorCode != 0 || len(d.Members) != 2 {
		t.Fatalf("upgrade-only policy downgraded: %+v", d)
	}
	h.settle("g", []*clm{a, b}, nil)
	if len(a.owned)+len(b.owned) != 4 {
		t.Fatalf("classic members of a consumer group: a %v b %v", a.owned, b.owned)
	}
	// A classic member's LeaveGroup leaves the consumer group.
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Version, leave.Group = 5, "g"
	leave.Members = []kmsg.LeaveGroupRequestMember{{MemberID: a.id}, {MemberID: "nobody"}}
	resp := h.c.LeaveGroup(leave)
	code(t, "leave a", resp.Members[0].ErrorCode, nil)
	code(t, "leave unknown", resp.Members[1].ErrorCode, kerr.UnknownMemberID)
	h.settle("g", []*clm{b}, nil)
	if len(b.owned) != 4 {
		t.Fatalf("b after a left: %v", b.owned)
	}
}

// A classic member that is told to rejoin and does not, within its
// rebalance timeout, is removed from the consumer group although it
// heartbeats; one that stops heartbeating is removed after its classic
// session timeout.
func TestMigrationClassicDeadlines(t *testing.T) {
	h, topics := new848Harness(t)
	topics.add("t", 4)
	a, b := h.classicGroupOf2("g")
	c := &cm{id: "c", topics: []string{"t"}}
	code(t, "upgrade", h.beat("g", c, true).ErrorCode, nil)
	code(t, "a told to rejoin", h.heartbeat("g", a.id, a.gen), kerr.RebalanceInProgress)
	code(t, "b told to rejoin", h.heartbeat("g", b.id, b.gen), kerr.RebalanceInProgress)
	code(t, "b rejoins", h.classicJoin("g", b).ErrorCode, nil)
	code(t, "b syncs", h.classicSync("g", b, nil), nil)
	step := testSession / 2
	for elapsed := step; elapsed <= testRebalance; elapsed += step {
		h.clock.Advance(step)
		if elapsed < testRebalance {
			code(t, "a heartbeats without rejoining", h.heartbeat("g", a.id, a.gen), kerr.RebalanceInProgress)
		}
		h.heartbeat("g", b.id, b.gen)
		code(t, "c heartbeats", h.beat("g", c, false).ErrorCode, nil)
	}
	code(t, "a is gone", h.heartbeat("g", a.id, a.gen), kerr.UnknownMemberID)
	if d := h.describe848("g"); len(d.Members) != 2 {
		t.Fatalf("%d members after a's join deadline", len(d.Members))
	}
	for elapsed := step; elapsed <= testSession; elapsed += step {
		h.clock.Advance(step)
		code(t, "c heartbeats", h.beat("g", c, false).ErrorCode, nil)
	}
	if d := h.describe848("g"); len(d.Members) != 1 {
		t.Fatalf("b's classic session expired but %d members remain", len(d.Members))
	}
}
