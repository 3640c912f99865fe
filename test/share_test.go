package test

import (
	"context"
	"testing"
	"time"

	"github.com/kgateway/kgateway/kafka/share"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestShareGroupMembersShareOnePartition: three franz-go share consumers
// on one partition (share assignment: all three are assigned it). Every record is
// accepted exactly once; the records released on their first delivery are
// delivered again, with delivery count 2, and then accepted (one acquirer per record, acknowledgement by the lock holder). The
// share-partition start offset ends past the last record (the share-partition start offset).
func TestShareGroupMembersShareOnePartition(t *testing.T) {
	g := newGateway(t)
	const topic, group, n = "sq", "sq-group", 300
	g.createTopic(topic, 1)
	produceNumbered(t, g.addr, topic, n)
	setGroupConfigs(t, g.addr, group, share.ConfigAutoOffsetReset, "earliest")

	l := newShareLedger()
	decide := func(v int, r *kgo.Record) kgo.AckStatus {
		if v%10 == 0 && r.DeliveryCount() == 1 {
			return kgo.AckRelease
		}
		return kgo.AckAccept
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done []func()
	for _, name := range []string{"a", "b", "c"} {
		wg := runShareMember(ctx, t, g.addr, group, topic, name, l, decide)
		done = append(done, wg.Wait)
	}
	waitFor(t, "three members sharing the partition", func() bool { return sharedBy(t, g.addr, group, topic) == 3 })
	waitFor(t, "every record accepted", func() bool { return l.acceptedAll(n) })
	cancel()
	for _, d := range done {
		d()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for v := range n {
		if l.accepted[v] != 1 {
			t.Errorf("record %d accepted %d times", v, l.accepted[v])
		}
		want := []int32{1}
		if v%10 == 0 {
			want = []int32{1, 2}
		}
		if got := l.counts[v]; len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
			t.Errorf("record %d delivered with counts %v, want %v", v, got, want)
		}
	}
	t.Logf("records delivered per member: %v", l.by)
	waitFor(t, "the start offset past the last record", func() bool { return shareOffset(t, g.addr, group, topic) == n })
}

// sharedBy is how many members of group have partition 0 of topic.
func sharedBy(t *testing.T, addr, group, topic string) int {
	req := kmsg.NewPtrShareGroupDescribeRequest()
	req.GroupIDs = []string{group}
	resp := request[*kmsg.ShareGroupDescribeResponse](t, shareClient(t, addr), req)
	n := 0
	for _, m := range resp.Groups[0].Members {
		for _, tp := range m.Assignment.TopicPartitions {
			if tp.Topic == topic && len(tp.Partitions) == 1 && tp.Partitions[0] == 0 {
				n++
			}
		}
	}
	return n
}

// TestShareGroupRejectAndDeliveryLimit: a rejected record is never
// delivered again; a record released every time is delivered exactly
// group.share.delivery.count.limit times and then archived (the delivery count limit), after
// which the start offset passes every record: nothing is left to deliver.
func TestShareGroupRejectAndDeliveryLimit(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{share: share.Config{DeliveryCountLimit: 3}})
	const topic, group, n = "rl", "rl-group", 20
	g.createTopic(topic, 1)
	produceNumbered(t, g.addr, topic, n)
	setGroupConfigs(t, g.addr, group, share.ConfigAutoOffsetReset, "earliest")

	l := newShareLedger()
	ctx, cancel := context.WithCancel(context.Background())
	wg := runShareMember(ctx, t, g.addr, group, topic, "m", l, func(v int, _ *kgo.Record) kgo.AckStatus {
		if v < 5 {
			return kgo.AckReject
		}
		return kgo.AckRelease
	})
	waitFor(t, "every record finished", func() bool { return shareOffset(t, g.addr, group, topic) == n })
	cancel()
	wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	for v := range n {
		want := 3
		if v < 5 {
			want = 1
		}
		if l.delivered[v] != want {
			t.Errorf("record %d delivered %d times (counts %v), want %d", v, l.delivered[v], l.counts[v], want)
		}
	}
}

// TestShareGroupLockExpiryRedelivers: a member that acquires records and
// then hangs (connected, never acknowledging) keeps them only for the
// lock duration; then another member gets them, delivery count 2 (releases on lock expiry).
func TestShareGroupLockExpiryRedelivers(t *testing.T) {
	lock := 500 * time.Millisecond
	g := newGatewayWith(t, gatewayOptions{share: share.Config{RecordLockDuration: lock}})
	const topic, group, n = "lx", "lx-group", 10
	g.createTopic(topic, 1)
	produceNumbered(t, g.addr, topic, n)
	setGroupConfigs(t, g.addr, group, share.ConfigAutoOffsetReset, "earliest")

	hung := joinRaw(t, g.addr, group, topic, "hung-member-0000000001")
	held := hung.fetch(5 * time.Second)
	acquiredAt := time.Now()
	if len(held) != n {
		t.Fatalf("hung member acquired %d records, want %d", len(held), n)
	}

	l := newShareLedger()
	ctx, cancel := context.WithCancel(context.Background())
	wg := runShareMember(ctx, t, g.addr, group, topic, "live", l, func(int, *kgo.Record) kgo.AckStatus { return kgo.AckAccept })
	waitFor(t, "every record accepted by the live member", func() bool { return l.acceptedAll(n) })
	cancel()
	wg.Wait()
	if waited := time.Since(acquiredAt); waited < lock {
		t.Errorf("records re-delivered %v after acquisition, before the %v lock expired", waited, lock)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for v := range n {
		if c := l.counts[v]; len(c) != 1 || c[0] != 2 {
			t.Errorf("record %d delivered to the live member with counts %v, want [2]", v, c)
		}
	}
}

// TestShareGroupRestartReleasesLocks: records acquired (locked for a
// minute) when the server stops are available after the restart, their
// delivery count kept (locks released at restart, acquisitions persisted as available): the next member gets them at once with
// count 2, long before the lock would have expired. Here the member's
// connection closes first, which releases its records (releases on lock expiry);
// TestShareGroupKillWithLocksHeld kills the server with them held.
func TestShareGroupRestartReleasesLocks(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{share: share.Config{RecordLockDuration: time.Minute}})
	const topic, group, n = "rr", "rr-group", 10
	g.createTopic(topic, 1)
	produceNumbered(t, g.addr, topic, n)
	setGroupConfigs(t, g.addr, group, share.ConfigAutoOffsetReset, "earliest")

	first := joinRaw(t, g.addr, group, topic, "first-member-00000001")
	if held := first.fetch(5 * time.Second); len(held) != n {
		t.Fatalf("acquired %d records, want %d", len(held), n)
	}
	first.cl.Close()
	g.restart()

	second := joinRaw(t, g.addr, group, topic, "second-member-0000001")
	got := second.fetch(5 * time.Second)
	if len(got) != n {
		t.Fatalf("after restart acquired %d records, want %d (locks not released)", len(got), n)
	}
	for off, c := range got {
		if c != 2 {
			t.Errorf("offset %d delivered with count %d after restart, want 2", off, c)
		}
	}
	// The group config survived too (earliest), and the group is listed
	// as a share group.
	lg := request[*kmsg.ListGroupsResponse](t, second.cl, kmsg.NewPtrListGroupsRequest())
	found := false
	for _, x := range lg.Groups {
		found = found || (x.Group == group && x.ProtocolType == "share")
	}
	if !found {
		t.Errorf("share group %q not listed after restart: %+v", group, lg.Groups)
	}
}

// TestShareGroupNamespace: a classic group's id is not a share group's
// (GROUP_ID_NOT_FOUND), and a share group's id refuses classic joins and
// commits (one group-id namespace).
func TestShareGroupNamespace(t *testing.T) {
	g := newGateway(t)
	g.createTopic("ns", 1)
	cl := shareClient(t, g.addr)

	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group = "classic"
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "ns"
	cp := kmsg.NewOffsetCommitRequestTopicPartition()
	cp.Offset = 1
	ct.Partitions = append(ct.Partitions, cp)
	commit.Topics = append(commit.Topics, ct)
	if r := request[*kmsg.OffsetCommitResponse](t, cl, commit); r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("classic commit: %v", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
	}
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = "classic", "m-000000000000000000001", []string{"ns"}
	if r := request[*kmsg.ShareGroupHeartbeatResponse](t, cl, hb); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("share heartbeat on a classic group: %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(r.ErrorCode))
	}

	member := joinRaw(t, g.addr, "shared", "ns", "m-000000000000000000002")
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.ProtocolType, join.SessionTimeoutMillis = "shared", "consumer", 10000
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	if r := request[*kmsg.JoinGroupResponse](t, cl, join); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("classic join on a share group: %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(r.ErrorCode))
	}
	// A KIP-848 consumer group and a share group do not share an id either.
	chb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	chb.Group, chb.MemberID, chb.RebalanceTimeoutMillis = "consumer", "m-000000000000000000003", 10000
	chb.SubscribedTopicNames = []string{"ns"}
	chb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if r := request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, chb); r.ErrorCode != 0 {
		t.Fatalf("consumer group join: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	hb.GroupID = "consumer"
	if r := request[*kmsg.ShareGroupHeartbeatResponse](t, cl, hb); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("share heartbeat on a consumer group: %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(r.ErrorCode))
	}
	chb.Group = "shared"
	if r := request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, chb); r.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("consumer heartbeat on a share group: %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(r.ErrorCode))
	}
	lg := kmsg.NewPtrListGroupsRequest()
	lg.TypesFilter = []string{"consumer"}
	for _, g := range request[*kmsg.ListGroupsResponse](t, cl, lg).Groups {
		if g.GroupType == "share" {
			t.Errorf("ListGroups filtered to consumer lists share group %s", g.Group)
		}
	}

	// ShareGroupDescribe of the classic group, DescribeGroups (v5) of the
	// share group: not found, and Dead without an error, as Kafka.
	sd := kmsg.NewPtrShareGroupDescribeRequest()
	sd.GroupIDs = []string{"classic"}
	if r := request[*kmsg.ShareGroupDescribeResponse](t, cl, sd); r.Groups[0].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("share describe of a classic group: %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(r.Groups[0].ErrorCode))
	}
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{"shared"}
	v5 := kversion.Stable()
	v5.SetMaxKeyVersion(dg.Key(), 5)
	if r := request[*kmsg.DescribeGroupsResponse](t, shareClient(t, g.addr, kgo.MaxVersions(v5)), dg); r.Groups[0].ErrorCode != 0 || r.Groups[0].State != "Dead" {
		t.Errorf("classic describe of a share group: %v %s, want Dead", kerr.ErrorForCode(r.Groups[0].ErrorCode), r.Groups[0].State)
	}
	// From v6 (KIP-1043): GROUP_ID_NOT_FOUND, in Kafka's words.
	r6 := request[*kmsg.DescribeGroupsResponse](t, cl, dg).Groups[0]
	if r6.ErrorCode != kerr.GroupIDNotFound.Code || r6.ErrorMessage == nil || *r6.ErrorMessage != "Group shared is not a classic group." {
		t.Errorf("v6 classic describe of a share group: %v %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(r6.ErrorCode), r6.ErrorMessage)
	}
	commit.Group = "shared"
	if r := request[*kmsg.OffsetCommitResponse](t, cl, commit); r.Topics[0].Partitions[0].ErrorCode != kerr.GroupIDNotFound.Code {
		t.Errorf("commit to a share group: %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(r.Topics[0].Partitions[0].ErrorCode))
	}

	// DeleteGroups deletes a share group once it is empty.
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{"shared"}
	if r := request[*kmsg.DeleteGroupsResponse](t, cl, del); r.Groups[0].ErrorCode != kerr.NonEmptyGroup.Code {
		t.Errorf("deleting a share group with a member: %v, want NON_EMPTY_GROUP", kerr.ErrorForCode(r.Groups[0].ErrorCode))
	}
	leave := kmsg.NewPtrShareGroupHeartbeatRequest()
	leave.GroupID, leave.MemberID, leave.MemberEpoch = "shared", member.id, -1
	if r := request[*kmsg.ShareGroupHeartbeatResponse](t, cl, leave); r.ErrorCode != 0 || r.MemberEpoch != -1 {
		t.Fatalf("leave: %v epoch %d", kerr.ErrorForCode(r.ErrorCode), r.MemberEpoch)
	}
	if r := request[*kmsg.DeleteGroupsResponse](t, cl, del); r.Groups[0].ErrorCode != 0 {
		t.Errorf("deleting an empty share group: %v", kerr.ErrorForCode(r.Groups[0].ErrorCode))
	}
	for _, lg := range request[*kmsg.ListGroupsResponse](t, cl, kmsg.NewPtrListGroupsRequest()).Groups {
		if lg.Group == "shared" {
			t.Errorf("deleted share group still listed: %+v", lg)
		}
	}
}

// TestShareGroupTopicRecreated: the share state of a deleted topic does
// not hold back a new topic of the same name (the share-partition start offset): the group reads the new
// topic's records from its start.
func TestShareGroupTopicRecreated(t *testing.T) {
	g := newGateway(t)
	const topic, group = "tr", "tr-group"
	g.createTopic(topic, 1)
	produceNumbered(t, g.addr, topic, 50)
	setGroupConfigs(t, g.addr, group, share.ConfigAutoOffsetReset, "earliest")
	m := joinRaw(t, g.addr, group, topic, "member-000000000000001")
	if got := m.fetch(5 * time.Second); len(got) != 50 {
		t.Fatalf("acquired %d, want 50", len(got))
	}
	if _, err := g.admin().DeleteTopics(testCtx(t), topic); err != nil {
		t.Fatal(err)
	}
	g.createTopic(topic, 1)
	produceNumbered(t, g.addr, topic, 5)
	m2 := joinRaw(t, g.addr, group, topic, "member-000000000000002")
	got := m2.fetch(5 * time.Second)
	if len(got) != 5 {
		t.Fatalf("acquired %d records of the new topic, want 5", len(got))
	}
}

// TestShareGroupDeadMemberReleases: a member whose connection closes
// (its process died) releases its records at once, and so does a member
// whose session times out: both long before their one-minute locks
// expire, each record's delivery counted (releases on lock expiry).
func TestShareGroupDeadMemberReleases(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{share: share.Config{RecordLockDuration: time.Minute, SessionTimeout: 300 * time.Millisecond}})
	const topic, group, n = "dm", "dm-group", 10
	g.createTopic(topic, 1)
	produceNumbered(t, g.addr, topic, n)
	setGroupConfigs(t, g.addr, group, share.ConfigAutoOffsetReset, "earliest")

	dead := joinRaw(t, g.addr, group, topic, "dead-member-0000000001")
	if got := dead.fetch(5 * time.Second); len(got) != n {
		t.Fatalf("acquired %d, want %d", len(got), n)
	}
	dead.cl.Close() // the connection closes: its share session with it

	silent := joinRaw(t, g.addr, group, topic, "silent-member-00000001")
	got := silent.fetch(5 * time.Second)
	if len(got) != n {
		t.Fatalf("after the connection closed acquired %d, want %d", len(got), n)
	}
	// silent stops heartbeating but keeps its connection: once its
	// session times out the group drops it (seen on describe) and its
	// records go to the next member.
	waitFor(t, "the silent member removed", func() bool { return sharedBy(t, g.addr, group, topic) == 0 })
	next := joinRaw(t, g.addr, group, topic, "next-member-0000000001")
	got = next.fetch(5 * time.Second)
	if len(got) != n {
		t.Fatalf("after the session timeout acquired %d, want %d", len(got), n)
	}
	for off, c := range got {
		if c != 3 {
			t.Errorf("offset %d delivered with count %d, want 3", off, c)
		}
	}
}

// ApiVersions v3+ finalizes share.version at 2 (dead-letter queues,
// KIP-1191), as Kafka 4.4, and lists
// the share-group APIs at the versions franz-go's share consumer needs
// (ShareFetch and ShareAcknowledge v2).
func TestShareVersionAdvertised(t *testing.T) {
	g := newGateway(t)
	resp := request[*kmsg.ApiVersionsResponse](t, shareClient(t, g.addr), kmsg.NewPtrApiVersionsRequest())
	finalized := map[string]int16{}
	for _, f := range resp.FinalizedFeatures {
		finalized[f.Name] = f.MaxVersionLevel
	}
	if finalized["share.version"] != 2 || finalized["transaction.version"] != 2 {
		t.Errorf("finalized features %v, want share.version 2 and transaction.version 2", finalized)
	}
	max := map[int16]int16{}
	for _, k := range resp.ApiKeys {
		max[k.ApiKey] = k.MaxVersion
	}
	for key, want := range map[int16]int16{76: 1, 77: 1, 78: 2, 79: 2, 90: 1, 91: 0, 92: 0} {
		if v, ok := max[key]; !ok || v != want {
			t.Errorf("key %d: max version %d (listed %v), want %d", key, v, ok, want)
		}
	}
}
