package test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The share-group APIs' ACLs (per-API authorization), as Kafka's: READ on the group for
// membership and fetching, then DESCRIBE on subscribed topics and READ on
// fetched ones; DESCRIBE on the group to describe it and its offsets,
// DELETE to delete offsets, DESCRIBE_CONFIGS for its configs.
func TestShareGroupACLs(t *testing.T) {
	a := newACLServer(t)
	a.createTopics("sh-1")
	alice := a.client("alice")
	id := aclTopicID(t, a, "sh-1")
	heartbeat := func(t *testing.T, cl *kgo.Client) int16 {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.SubscribedTopicNames = "g-sh", "alice-member-0000000001", []string{"sh-1"}
		return seedRequest[*kmsg.ShareGroupHeartbeatResponse](t, cl, req).ErrorCode
	}
	fetch := func(t *testing.T, cl *kgo.Client) (top, part int16) {
		req := kmsg.NewPtrShareFetchRequest()
		g, m := "g-sh", "alice-member-0000000001"
		req.GroupID, req.MemberID, req.MaxRecords = &g, &m, 10
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = id
		rt.Partitions = []kmsg.ShareFetchRequestTopicPartition{kmsg.NewShareFetchRequestTopicPartition()}
		req.Topics = []kmsg.ShareFetchRequestTopic{rt}
		resp := seedRequest[*kmsg.ShareFetchResponse](t, cl, req)
		if len(resp.Topics) == 0 {
			return resp.ErrorCode, 0
		}
		return resp.ErrorCode, resp.Topics[0].Partitions[0].ErrorCode
	}
	describe := func(t *testing.T, cl *kgo.Client) int16 {
		req := kmsg.NewPtrShareGroupDescribeRequest()
		req.GroupIDs = []string{"g-sh"}
		return seedRequest[*kmsg.ShareGroupDescribeResponse](t, cl, req).Groups[0].ErrorCode
	}
	deleteOffsets := func(t *testing.T, cl *kgo.Client) int16 {
		req := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
		req.GroupID = "g-sh"
		return seedRequest[*kmsg.DeleteShareGroupOffsetsResponse](t, cl, req).ErrorCode
	}
	expect := func(what string, got int16, want *kerr.Error) {
		t.Helper()
		if (want == nil && got != 0) || (want != nil && got != want.Code) {
			t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
		}
	}

	expect("heartbeat without group READ", heartbeat(t, alice), kerr.GroupAuthorizationFailed)
	top, _ := fetch(t, alice)
	expect("share fetch without group READ", top, kerr.GroupAuthorizationFailed)
	expect("describe without group DESCRIBE", describe(t, alice), kerr.GroupAuthorizationFailed)
	expect("group configs without DESCRIBE_CONFIGS", describeConfigsCode(t, alice, kmsg.ConfigResourceTypeGroupConfig, "g-sh"), kerr.GroupAuthorizationFailed)

	a.grant(allowAlice().Groups("g-sh").Operations(kadm.OpRead))
	expect("heartbeat without topic DESCRIBE", heartbeat(t, alice), kerr.TopicAuthorizationFailed)
	a.grant(allowAlice().Topics("sh-1").Operations(kadm.OpDescribe))
	expect("heartbeat with group READ and topic DESCRIBE", heartbeat(t, alice), nil)
	top, part := fetch(t, alice)
	expect("share fetch with group READ", top, nil)
	expect("share fetch of a topic without READ", part, kerr.TopicAuthorizationFailed)
	a.grant(allowAlice().Topics("sh-1").Operations(kadm.OpRead))
	_, part = fetch(t, alice)
	expect("share fetch with topic READ", part, nil)
	expect("describe with group READ (implies DESCRIBE)", describe(t, alice), nil)
	expect("delete offsets without group DELETE", deleteOffsets(t, alice), kerr.GroupAuthorizationFailed)
	a.grant(allowAlice().Groups("g-sh").Operations(kadm.OpDescribeConfigs))
	expect("group configs with DESCRIBE_CONFIGS", describeConfigsCode(t, alice, kmsg.ConfigResourceTypeGroupConfig, "g-sh"), nil)
}

// Per-API authorization for share acknowledgements and share members: acknowledging needs
// READ on the topic (Kafka's handleShareAcknowledgeRequest, and the
// acknowledgements a ShareFetch carries), and a share member id is bound
// to a member that joined through ShareGroupHeartbeat, by the principal
// that joined it. mallory, with READ on the group and DESCRIBE on the
// topic, neither acknowledges records of a topic she may not read nor
// drives alice's member: ShareFetch and ShareAcknowledge under alice's
// member id, or an id no member has, are UNKNOWN_MEMBER_ID, and alice's
// session and records are untouched.
func TestShareAckACLsAndMemberBinding(t *testing.T) {
	a := &aclServer{t: t, dir: t.TempDir()}
	for _, u := range []string{"admin", "alice", "mallory"} {
		addUser(t, a.dir, u, u+"-pw")
	}
	a.start()
	const topic, group = "sh-ack", "g-ack"
	a.createTopics(topic)
	id := aclTopicID(t, a, topic)
	mallory := kadm.NewACLs().Allow("User:mallory")
	a.grant(allowAlice().Groups(group).Operations(kadm.OpRead))
	a.grant(allowAlice().Topics(topic).Operations(kadm.OpRead, kadm.OpDescribe))
	a.grant(mallory.Groups(group).Operations(kadm.OpRead))
	a.grant(kadm.NewACLs().Allow("User:mallory").Topics(topic).Operations(kadm.OpDescribe))
	alice, mal := a.client("alice"), a.client("mallory")

	join := func(cl *kgo.Client, member string) int16 {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.SubscribedTopicNames = group, member, []string{topic}
		return seedRequest[*kmsg.ShareGroupHeartbeatResponse](t, cl, req).ErrorCode
	}
	// fetch sends a ShareFetch of partition 0 at epoch, acknowledging
	// [first, last] with typ when typ > 0; it returns the top-level
	// code, the partition's code, its acknowledgement code and the
	// acquired offsets.
	fetch := func(cl *kgo.Client, member string, epoch int32, first, last int64, typ int8) (top, part, ack int16, got []int64) {
		t.Helper()
		req := kmsg.NewPtrShareFetchRequest()
		g, m := group, member
		req.GroupID, req.MemberID, req.ShareSessionEpoch, req.MaxRecords, req.MaxBytes = &g, &m, epoch, 100, 1<<20
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = id
		rp := kmsg.NewShareFetchRequestTopicPartition()
		if typ > 0 {
			rp.AcknowledgementBatches = []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch{{FirstOffset: first, LastOffset: last, AcknowledgeTypes: []int8{typ}}}
		}
		rt.Partitions = []kmsg.ShareFetchRequestTopicPartition{rp}
		req.Topics = []kmsg.ShareFetchRequestTopic{rt}
		resp := seedRequest[*kmsg.ShareFetchResponse](t, cl, req)
		if len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
			return resp.ErrorCode, 0, 0, nil
		}
		p := resp.Topics[0].Partitions[0]
		for _, ar := range p.AcquiredRecords {
			for o := ar.FirstOffset; o <= ar.LastOffset; o++ {
				got = append(got, o)
			}
		}
		return resp.ErrorCode, p.ErrorCode, p.AcknowledgeErrorCode, got
	}
	ack := func(cl *kgo.Client, member string, epoch int32, first, last int64, typ int8) (top, part int16) {
		t.Helper()
		req := kmsg.NewPtrShareAcknowledgeRequest()
		g, m := group, member
		req.GroupID, req.MemberID, req.ShareSessionEpoch = &g, &m, epoch
		rt := kmsg.NewShareAcknowledgeRequestTopic()
		rt.TopicID = id
		rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
		rp.AcknowledgementBatches = []kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch{{FirstOffset: first, LastOffset: last, AcknowledgeTypes: []int8{typ}}}
		rt.Partitions = []kmsg.ShareAcknowledgeRequestTopicPartition{rp}
		req.Topics = []kmsg.ShareAcknowledgeRequestTopic{rt}
		resp := seedRequest[*kmsg.ShareAcknowledgeResponse](t, cl, req)
		if len(resp.Topics) == 0 || len(resp.Topics[0].Partitions) == 0 {
			return resp.ErrorCode, 0
		}
		return resp.ErrorCode, resp.Topics[0].Partitions[0].ErrorCode
	}
	expect := func(what string, got int16, want *kerr.Error) {
		t.Helper()
		if (want == nil && got != 0) || (want != nil && got != want.Code) {
			t.Errorf("%s: %v, want %v", what, kerr.ErrorForCode(got), want)
		}
	}
	const accept, reject = 1, 3

	const aliceID, malID = "alice-member-0000000001", "mallory-member-00000001"
	expect("alice joins", join(alice, aliceID), nil)
	top, _, _, _ := fetch(alice, aliceID, 0, 0, 0, 0) // opens alice's session; the partition starts at the end
	expect("alice opens her session", top, nil)
	admin := a.client("admin")
	for i := range 5 {
		if err := admin.ProduceSync(testCtx(t), &kgo.Record{Topic: topic, Value: []byte{byte('0' + i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	epoch := int32(1)
	var held []int64
	waitFor(t, "alice acquires the 5 records", func() bool {
		top, part, _, got := fetch(alice, aliceID, epoch, 0, 0, 0)
		if top != 0 || part != 0 {
			t.Fatalf("alice's fetch: %v / %v", kerr.ErrorForCode(top), kerr.ErrorForCode(part))
		}
		epoch++
		held = append(held, got...)
		return len(held) == 5
	})
	first, last := held[0], held[len(held)-1]

	// mallory under alice's member id: every share request refused.
	for e := int32(1); e <= epoch; e++ { // whatever the session's epoch
		top, _ := ack(mal, aliceID, e, first, last, reject)
		expect("mallory acknowledges under alice's member id", top, kerr.UnknownMemberID)
	}
	top, _, _, _ = fetch(mal, aliceID, 0, 0, 0, 0)
	expect("mallory opens a session under alice's member id", top, kerr.UnknownMemberID)
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.GroupID, hb.MemberID, hb.MemberEpoch = group, aliceID, -1
	expect("mallory makes alice's member leave", seedRequest[*kmsg.ShareGroupHeartbeatResponse](t, mal, hb).ErrorCode, kerr.UnknownMemberID)
	top, _, _, _ = fetch(mal, "never-joined-0000000001", 0, 0, 0, 0)
	expect("a share fetch of a member id no member has", top, kerr.UnknownMemberID)

	// mallory as her own member: no READ on the topic, so she neither
	// fetches from it nor acknowledges on it.
	expect("mallory joins", join(mal, malID), nil)
	top, part, _, _ := fetch(mal, malID, 0, 0, 0, 0)
	expect("mallory opens her session", top, nil)
	expect("mallory's fetch of a topic without READ", part, kerr.TopicAuthorizationFailed)
	top, part = ack(mal, malID, 1, first, last, reject)
	expect("mallory's ShareAcknowledge", top, nil)
	expect("ShareAcknowledge of a topic without READ", part, kerr.TopicAuthorizationFailed)
	top, _, ackCode, _ := fetch(mal, malID, 2, first, last, reject)
	expect("mallory's ShareFetch", top, nil)
	expect("acknowledgements on ShareFetch of a topic without READ", ackCode, kerr.TopicAuthorizationFailed)

	// alice's session and records were untouched: she accepts them all.
	top, part = ack(alice, aliceID, epoch, first, last, accept)
	expect("alice acknowledges her records", top, nil)
	expect("alice's records, still hers", part, nil)
}

// Per-API authorization: describing a share group and its offsets reveals no topic the
// principal may not DESCRIBE, as ConsumerGroupDescribe: a group whose
// members subscribe to or are assigned such a topic is
// TOPIC_AUTHORIZATION_FAILED; DescribeShareGroupOffsets of every topic
// leaves it out, and of the topic by name answers it without its id,
// each partition TOPIC_AUTHORIZATION_FAILED.
func TestShareDescribeHidesUndescribableTopics(t *testing.T) {
	a := newACLServer(t)
	const topic, group = "sh-secret", "g-secret"
	a.createTopics(topic)
	admin := a.client("admin")
	join := kmsg.NewPtrShareGroupHeartbeatRequest()
	join.GroupID, join.MemberID, join.SubscribedTopicNames = group, "admin-member-0000000001", []string{topic}
	if c := seedRequest[*kmsg.ShareGroupHeartbeatResponse](t, admin, join).ErrorCode; c != 0 {
		t.Fatalf("admin joins: %v", kerr.ErrorForCode(c))
	}
	sf := kmsg.NewPtrShareFetchRequest()
	g, m := group, join.MemberID
	sf.GroupID, sf.MemberID, sf.MaxRecords, sf.MaxBytes = &g, &m, 10, 1<<20
	rt := kmsg.NewShareFetchRequestTopic()
	rt.TopicID = aclTopicID(t, a, topic)
	rt.Partitions = []kmsg.ShareFetchRequestTopicPartition{kmsg.NewShareFetchRequestTopicPartition()}
	sf.Topics = []kmsg.ShareFetchRequestTopic{rt}
	if r := seedRequest[*kmsg.ShareFetchResponse](t, admin, sf); r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("admin's share fetch: %+v", r)
	}

	a.grant(allowAlice().Groups(group).Operations(kadm.OpDescribe))
	alice := a.client("alice")
	dreq := kmsg.NewPtrShareGroupDescribeRequest()
	dreq.GroupIDs = []string{group}
	dg := seedRequest[*kmsg.ShareGroupDescribeResponse](t, alice, dreq).Groups[0]
	if dg.ErrorCode != kerr.TopicAuthorizationFailed.Code || len(dg.Members) != 0 {
		t.Errorf("share group describe without topic DESCRIBE: %v, %d members; want TOPIC_AUTHORIZATION_FAILED, none", kerr.ErrorForCode(dg.ErrorCode), len(dg.Members))
	}

	offsetsOf := func(named bool) kmsg.DescribeShareGroupOffsetsResponseGroup {
		req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
		rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
		rg.GroupID = group
		if named {
			rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
			rt.Topic, rt.Partitions = topic, []int32{0}
			rg.Topics = append(rg.Topics, rt)
		}
		req.Groups = append(req.Groups, rg)
		return seedRequest[*kmsg.DescribeShareGroupOffsetsResponse](t, alice, req).Groups[0]
	}
	if all := offsetsOf(false); len(all.Topics) != 0 {
		t.Errorf("offsets of every topic list %+v, want none (no DESCRIBE)", all.Topics)
	}
	named := offsetsOf(true)
	if len(named.Topics) != 1 || named.Topics[0].TopicID != ([16]byte{}) || named.Topics[0].Partitions[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("offsets of the named topic: %+v, want no id and TOPIC_AUTHORIZATION_FAILED", named.Topics)
	}

	// With DESCRIBE on the topic both describe it.
	a.grant(allowAlice().Topics(topic).Operations(kadm.OpDescribe))
	if dg := seedRequest[*kmsg.ShareGroupDescribeResponse](t, alice, dreq).Groups[0]; dg.ErrorCode != 0 || len(dg.Members) != 1 {
		t.Errorf("share group describe with topic DESCRIBE: %v, %d members", kerr.ErrorForCode(dg.ErrorCode), len(dg.Members))
	}
	if all := offsetsOf(false); len(all.Topics) != 1 || all.Topics[0].TopicID == ([16]byte{}) {
		t.Errorf("offsets of every topic with DESCRIBE: %+v", all.Topics)
	}
}
