package test

import (
	"slices"
	"testing"
	"time"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// internalNames are Kafka's internal topics, which kgateway shows with one
// always-empty partition (kafka/internal_topics.go).
var internalNames = []string{resolver.OffsetsTopic, resolver.TransactionStateTopic}

// internalID is an internal topic's id as Metadata gives it.
func internalID(t *testing.T, cl *kgo.Client, name string) [16]byte {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(name)
	req.Topics = append(req.Topics, rt)
	mt := request[*kmsg.MetadataResponse](t, cl, req).Topics[0]
	if mt.ErrorCode != 0 || mt.TopicID == ([16]byte{}) {
		t.Fatalf("metadata of %s: %+v", name, mt)
	}
	return mt.TopicID
}

// fetchInternal fetches name/partition at offset (by id from v13, by name
// below), without a session.
func fetchInternal(t *testing.T, cl *kgo.Client, version int16, name string, partition int32, offset int64, maxWait int32) kmsg.FetchResponseTopicPartition {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.SessionEpoch = version, maxWait, 1, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = name
	if version >= 13 {
		rt.TopicID = internalID(t, cl, name)
	}
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = partition, offset, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := request[*kmsg.FetchResponse](t, cl, req)
	if resp.Version != version {
		t.Fatalf("fetch sent at v%d, want v%d", resp.Version, version)
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch %s: %+v", name, resp)
	}
	return resp.Topics[0].Partitions[0]
}

// Each internal topic has one partition led by this node (replicas and ISR
// this node, leader epoch 0), still internal and with its kept id, in every
// kind of Metadata request.
func TestInternalTopicPartitionsInMetadata(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	node := request[*kmsg.MetadataResponse](t, cl, kmsg.NewPtrMetadataRequest()).Brokers[0].NodeID
	for _, name := range internalNames {
		id, _ := g.res.InternalTopicID(name)
		byName := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		byName.Topics = append(byName.Topics, rt)
		byID := kmsg.NewPtrMetadataRequest()
		rt = kmsg.NewMetadataRequestTopic()
		rt.TopicID = id
		byID.Topics = append(byID.Topics, rt)
		for how, req := range map[string]*kmsg.MetadataRequest{"all": kmsg.NewPtrMetadataRequest(), "by name": byName, "by id": byID} {
			resp := request[*kmsg.MetadataResponse](t, cl, req)
			i := slices.IndexFunc(resp.Topics, func(mt kmsg.MetadataResponseTopic) bool { return mt.Topic != nil && *mt.Topic == name })
			if i < 0 {
				t.Fatalf("%s %s: not listed: %+v", name, how, resp.Topics)
			}
			mt := resp.Topics[i]
			if mt.ErrorCode != 0 || !mt.IsInternal || mt.TopicID != id || len(mt.Partitions) != 1 {
				t.Fatalf("%s %s: %+v", name, how, mt)
			}
			p := mt.Partitions[0]
			if p.ErrorCode != 0 || p.Partition != 0 || p.Leader != node || p.LeaderEpoch != 0 ||
				!slices.Equal(p.Replicas, []int32{node}) || !slices.Equal(p.ISR, []int32{node}) {
				t.Fatalf("%s %s partition: %+v", name, how, p)
			}
		}
	}
}

// A fetch of an internal topic's partition at 0 is empty with every bound
// 0 (by name and by id); past 0 it is OFFSET_OUT_OF_RANGE; a partition
// that does not exist is UNKNOWN_TOPIC_OR_PARTITION; a long poll waits
// out its max wait without an error.
func TestInternalTopicFetchEmpty(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	clients := map[int16]*kgo.Client{12: g.client(kgo.MaxVersions(kversion.V3_0_0())), 18: cl}
	for _, name := range internalNames {
		for _, version := range []int16{12, 18} {
			cl := clients[version]
			p := fetchInternal(t, cl, version, name, 0, 0, 0)
			if p.ErrorCode != 0 || p.HighWatermark != 0 || p.LastStableOffset != 0 || p.LogStartOffset != 0 || len(p.RecordBatches) != 0 {
				t.Fatalf("%s v%d at 0: %v %+v", name, version, kerr.ErrorForCode(p.ErrorCode), p)
			}
			if p := fetchInternal(t, cl, version, name, 0, 1, 0); p.ErrorCode != kerr.OffsetOutOfRange.Code {
				t.Fatalf("%s v%d at 1: %v, want OFFSET_OUT_OF_RANGE", name, version, kerr.ErrorForCode(p.ErrorCode))
			}
			if p := fetchInternal(t, cl, version, name, 1, 0, 0); p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
				t.Fatalf("%s v%d partition 1: %v, want UNKNOWN_TOPIC_OR_PARTITION", name, version, kerr.ErrorForCode(p.ErrorCode))
			}
		}
		const maxWait = 300
		start := time.Now()
		p := fetchInternal(t, cl, 18, name, 0, 0, maxWait)
		if waited := time.Since(start); p.ErrorCode != 0 || waited < maxWait*time.Millisecond {
			t.Fatalf("%s long poll: %v after %v", name, kerr.ErrorForCode(p.ErrorCode), waited)
		}
	}
}

// An internal topic's partition works in a fetch session: the full fetch
// answers it empty and opens the session; an incremental fetch is answered
// without an error and leaves the unchanged partition out.
func TestInternalTopicFetchSession(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	req := kmsg.NewPtrFetchRequest()
	req.MaxBytes, req.MinBytes, req.SessionEpoch = 1<<20, 0, 0
	for _, name := range internalNames {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = name, internalID(t, cl, name)
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	full := request[*kmsg.FetchResponse](t, cl, req)
	if full.ErrorCode != 0 || full.SessionID == 0 || len(full.Topics) != len(internalNames) {
		t.Fatalf("full fetch: %v session %d, %+v", kerr.ErrorForCode(full.ErrorCode), full.SessionID, full.Topics)
	}
	for _, ft := range full.Topics {
		if p := ft.Partitions[0]; p.ErrorCode != 0 || p.HighWatermark != 0 {
			t.Fatalf("full fetch of %s: %v %+v", ft.Topic, kerr.ErrorForCode(p.ErrorCode), p)
		}
	}
	inc := kmsg.NewPtrFetchRequest()
	inc.MaxBytes, inc.MinBytes, inc.MaxWaitMillis = 1<<20, 1, 100
	inc.SessionID, inc.SessionEpoch = full.SessionID, 1
	resp := request[*kmsg.FetchResponse](t, cl, inc)
	if resp.ErrorCode != 0 || resp.SessionID != full.SessionID || len(resp.Topics) != 0 {
		t.Fatalf("incremental fetch: %v session %d, %+v", kerr.ErrorForCode(resp.ErrorCode), resp.SessionID, resp.Topics)
	}
}

// ListOffsets of an internal topic's partition answers as an empty
// ordinary partition does, for every kind of timestamp and isolation;
// OffsetForLeaderEpoch answers epoch 0 ending at 0.
func TestInternalTopicListOffsets(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	g.createTopic("empty", 1)
	list := func(topic string, ts int64, iso int8) kmsg.ListOffsetsResponseTopicPartition {
		req := kmsg.NewPtrListOffsetsRequest()
		req.IsolationLevel = iso
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = ts
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return request[*kmsg.ListOffsetsResponse](t, cl, req).Topics[0].Partitions[0]
	}
	for _, name := range internalNames {
		if p := list(name, -2, 0); p.ErrorCode != 0 || p.Offset != 0 {
			t.Fatalf("%s earliest: %v %d", name, kerr.ErrorForCode(p.ErrorCode), p.Offset)
		}
		if p := list(name, -1, 1); p.ErrorCode != 0 || p.Offset != 0 {
			t.Fatalf("%s latest: %v %d", name, kerr.ErrorForCode(p.ErrorCode), p.Offset)
		}
		for _, ts := range []int64{-1, -2, -3, -4, -5, 0, time.Now().UnixMilli()} {
			for _, iso := range []int8{0, 1} {
				got, want := list(name, ts, iso), list("empty", ts, iso)
				if got.ErrorCode != want.ErrorCode || got.Offset != want.Offset || got.Timestamp != want.Timestamp || got.LeaderEpoch != want.LeaderEpoch {
					t.Fatalf("%s at %d iso %d: %+v, an empty topic answers %+v", name, ts, iso, got, want)
				}
			}
		}
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.ReplicaID = -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = name
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.CurrentLeaderEpoch, rp.LeaderEpoch = 0, 0
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		p := request[*kmsg.OffsetForLeaderEpochResponse](t, cl, req).Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.LeaderEpoch != 0 || p.EndOffset != 0 {
			t.Fatalf("%s epoch end: %v %+v", name, kerr.ErrorForCode(p.ErrorCode), p)
		}
	}
}

// Writes to an internal topic are refused with INVALID_TOPIC_EXCEPTION
// (produce, delete records, new partitions, delete by name or id), as
// Kafka refuses them; creating it answers TOPIC_ALREADY_EXISTS;
// DescribeProducers lists none.
func TestInternalTopicWritesRefused(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	invalid := func(what, name string, c int16) {
		t.Helper()
		if c != kerr.InvalidTopicException.Code {
			t.Fatalf("%s %s: %v, want INVALID_TOPIC_EXCEPTION", what, name, kerr.ErrorForCode(c))
		}
	}
	for _, name := range internalNames {
		invalid("produce", name, produceRaw(t, cl, name, makeBatch(batchSpec{records: 1, pid: -1})).ErrorCode)

		dr := kmsg.NewPtrDeleteRecordsRequest()
		drt := kmsg.NewDeleteRecordsRequestTopic()
		drt.Topic = name
		drp := kmsg.NewDeleteRecordsRequestTopicPartition()
		drp.Offset = 0
		drt.Partitions = append(drt.Partitions, drp)
		dr.Topics, dr.TimeoutMillis = append(dr.Topics, drt), 10_000
		invalid("delete records", name, request[*kmsg.DeleteRecordsResponse](t, cl, dr).Topics[0].Partitions[0].ErrorCode)

		cp := kmsg.NewPtrCreatePartitionsRequest()
		cpt := kmsg.NewCreatePartitionsRequestTopic()
		cpt.Topic, cpt.Count = name, 2
		cp.Topics, cp.TimeoutMillis = append(cp.Topics, cpt), 10_000
		invalid("create partitions", name, request[*kmsg.CreatePartitionsResponse](t, cl, cp).Topics[0].ErrorCode)

		dt := kmsg.NewPtrDeleteTopicsRequest()
		dtt := kmsg.NewDeleteTopicsRequestTopic()
		dtt.TopicID = internalID(t, cl, name)
		dt.Topics, dt.TimeoutMillis = append(dt.Topics, dtt), 10_000
		invalid("delete by id", name, request[*kmsg.DeleteTopicsResponse](t, cl, dt).Topics[0].ErrorCode)
		dt.Topics[0].Topic, dt.Topics[0].TopicID = kmsg.StringPtr(name), [16]byte{}
		invalid("delete by name", name, request[*kmsg.DeleteTopicsResponse](t, cl, dt).Topics[0].ErrorCode)

		ct := kmsg.NewPtrCreateTopicsRequest()
		ctt := kmsg.NewCreateTopicsRequestTopic()
		ctt.Topic, ctt.NumPartitions, ctt.ReplicationFactor = name, 1, 1
		ct.Topics = append(ct.Topics, ctt)
		if c := request[*kmsg.CreateTopicsResponse](t, cl, ct).Topics[0].ErrorCode; c != kerr.TopicAlreadyExists.Code {
			t.Fatalf("create %s: %v", name, kerr.ErrorForCode(c))
		}

		dp := kmsg.NewPtrDescribeProducersRequest()
		dpt := kmsg.NewDescribeProducersRequestTopic()
		dpt.Topic, dpt.Partitions = name, []int32{0}
		dp.Topics = append(dp.Topics, dpt)
		if p := request[*kmsg.DescribeProducersResponse](t, cl, dp).Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.ActiveProducers) != 0 {
			t.Fatalf("describe producers of %s: %v %+v", name, kerr.ErrorForCode(p.ErrorCode), p)
		}
		if lo := listOffset(t, cl, name, -1); lo.ErrorCode != 0 || lo.Offset != 0 {
			t.Fatalf("%s after the refused writes: %v latest %d", name, kerr.ErrorForCode(lo.ErrorCode), lo.Offset)
		}
	}
}

// heartbeat848 heartbeats a KIP-848 member until it is assigned something
// or the test's deadline passes, and returns the assignment by topic id.
func heartbeat848(t *testing.T, cl *kgo.Client, group, member string, names []string, regex *string) map[[16]byte][]int32 {
	t.Helper()
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.RebalanceTimeoutMillis = group, member, 10_000
	req.SubscribedTopicNames, req.SubscribedTopicRegex = names, regex
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	ctx := testCtx(t)
	for {
		resp := request[*kmsg.ConsumerGroupHeartbeatResponse](t, cl, req)
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		if a := resp.Assignment; a != nil && len(a.Topics) > 0 {
			out := make(map[[16]byte][]int32)
			for _, at := range a.Topics {
				out[at.TopicID] = at.Partitions
			}
			return out
		}
		req.MemberEpoch = resp.MemberEpoch
		select {
		case <-ctx.Done():
			t.Fatal("never assigned anything")
		case <-time.After(50 * time.Millisecond): // the heartbeat interval, not a wait for a condition
		}
		req.SubscribedTopicNames, req.SubscribedTopicRegex = nil, nil // unchanged
	}
}

// KIP-848 consumer groups resolve subscriptions against every topic,
// internal ones included, as Kafka's broker does (server-side regex subscriptions): a regex matching
// the internal topics and a name subscription to one are assigned their
// partition.
func TestInternalTopicConsumerGroupAssigned(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fast848()})
	cl := g.client()
	g.createTopic("ordinary", 1)
	ids := map[string][16]byte{"ordinary": topicID(t, cl, "ordinary")}
	for _, name := range internalNames {
		ids[name] = internalID(t, cl, name)
	}
	regex := "__.*|ordinary"
	got := heartbeat848(t, cl, "by-regex", "m-regex-000000000000001", nil, &regex)
	for name, id := range ids {
		if !slices.Equal(got[id], []int32{0}) {
			t.Fatalf("regex member got %v for %s: %v", got[id], name, got)
		}
	}
	got = heartbeat848(t, cl, "by-name", "m-names-000000000000001", []string{resolver.OffsetsTopic}, nil)
	if len(got) != 1 || !slices.Equal(got[ids[resolver.OffsetsTopic]], []int32{0}) {
		t.Fatalf("name member got %v", got)
	}
}

// A franz-go KIP-848 consumer whose regex the broker resolves is assigned
// __consumer_offsets and consumes it (nothing to read) along with an
// ordinary topic.
func TestInternalTopicRegexConsumerAdoptsAssignment(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{group: fast848()})
	g.createTopic("adopt-plain", 1)
	produceRaw(t, g.client(), "adopt-plain", makeBatch(batchSpec{records: 1, pid: -1}))
	cl := g.client(kgo.ConsumerGroup("adopt"), kgo.ServerSideBalancer(), kgo.ConsumeRegex(),
		kgo.ConsumeTopics("adopt-plain", "__consumer_offsets"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.MetadataMinAge(100*time.Millisecond), kgo.FetchMaxWait(250*time.Millisecond))
	ctx := testCtx(t)
	for got := false; !got; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("nothing consumed: %v", fs.Errors())
		}
		for _, e := range fs.Errors() {
			t.Fatalf("fetch error on %s/%d: %v", e.Topic, e.Partition, e.Err)
		}
		got = fs.NumRecords() > 0
	}
	for !slices.Contains(cl.GetConsumeTopics(), resolver.OffsetsTopic) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s never consumed: %v (consuming %v)", resolver.OffsetsTopic, fs.Errors(), cl.GetConsumeTopics())
		}
		for _, e := range fs.Errors() {
			t.Fatalf("fetch error on %s/%d: %v", e.Topic, e.Partition, e.Err)
		}
	}
}

// A share group subscribing to __consumer_offsets by name is assigned its
// partition, as Kafka's share coordinator assigns any subscribed topic,
// and a share fetch of it answers nothing, without an error.
func TestInternalTopicShareGroupByName(t *testing.T) {
	g := newGateway(t)
	cl := g.client()
	id := internalID(t, cl, resolver.OffsetsTopic)
	hb := kmsg.NewPtrShareGroupHeartbeatRequest()
	hb.GroupID, hb.MemberID, hb.SubscribedTopicNames = "share-internal", "m-share-0000000000000001", []string{resolver.OffsetsTopic}
	ctx := testCtx(t)
	for {
		resp := request[*kmsg.ShareGroupHeartbeatResponse](t, cl, hb)
		if resp.ErrorCode != 0 {
			t.Fatalf("share heartbeat: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		if a := resp.Assignment; a != nil && len(a.TopicPartitions) > 0 {
			if len(a.TopicPartitions) != 1 || a.TopicPartitions[0].TopicID != id || !slices.Equal(a.TopicPartitions[0].Partitions, []int32{0}) {
				t.Fatalf("assigned %+v", a.TopicPartitions)
			}
			break
		}
		hb.MemberEpoch = resp.MemberEpoch
		select {
		case <-ctx.Done():
			t.Fatal("never assigned anything")
		case <-time.After(50 * time.Millisecond): // the heartbeat interval
		}
	}
	sf := kmsg.NewPtrShareFetchRequest()
	sf.GroupID, sf.MemberID = kmsg.StringPtr("share-internal"), kmsg.StringPtr(hb.MemberID)
	sf.MaxWaitMillis, sf.MinBytes, sf.MaxBytes, sf.MaxRecords, sf.BatchSize = 100, 1, 1<<20, 100, 100
	st := kmsg.NewShareFetchRequestTopic()
	st.TopicID = id
	sp := kmsg.NewShareFetchRequestTopicPartition()
	st.Partitions = append(st.Partitions, sp)
	sf.Topics = append(sf.Topics, st)
	resp := request[*kmsg.ShareFetchResponse](t, cl, sf)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("share fetch: %v %+v", kerr.ErrorForCode(resp.ErrorCode), resp)
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.Records) != 0 {
		t.Fatalf("share fetch of %s: %v %+v", resolver.OffsetsTopic, kerr.ErrorForCode(p.ErrorCode), p)
	}
}
