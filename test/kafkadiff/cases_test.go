package kafkadiff

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// corpus is every case; each case names its own topics and groups (kd-
// and the case's name) so that cases run in parallel.
func corpus() []diffCase {
	return []diffCase{
		{"api-versions", caseAPIVersions},
		{"metadata-errors", caseMetadataErrors},
		{"create-topics-errors", caseCreateTopicsErrors},
		{"produce-fetch-basic", caseProduceFetchBasic},
		{"produce-errors", caseProduceErrors},
		{"produce-idempotent", caseProduceIdempotent},
		{"fetch-kip74", caseFetchKIP74},
		{"fetch-max-bytes", caseFetchMaxBytes},
		{"fetch-zstd-versions", caseFetchZstd},
		{"list-offsets", caseListOffsets},
		{"delete-records", caseDeleteRecords},
		{"create-partitions", caseCreatePartitions},
		{"delete-topics", caseDeleteTopics},
		{"group-unknown", caseGroupUnknown},
		{"group-classic", caseGroupClassic},
		{"group-classic-first-rebalance", caseGroupClassicFirstRebalance},
		{"group-consumer-848", caseGroup848},
		{"group-migration", caseGroupMigration},
		{"group-streams", caseGroupStreams},
		{"group-streams-description", caseStreamsDescription},
		{"offsets-simple", caseOffsetsSimple},
		{"topic-ids", caseTopicIDs},
		{"txn-tv1", caseTxnTV1},
		{"txn-tv1-abort-fetch", caseTxnAbortFetch},
		{"txn-fencing", caseTxnFencing},
		{"txn-self-fence", caseTxnSelfFence},
		{"txn-tv2", caseTxnTV2},
		{"txn-tv1-end-v5", caseTxnTV1EndV5},
		{"txn-errors", caseTxnErrors},
		{"txn-markers-v2", caseTxnMarkersV2},
		{"txn-offsets", caseTxnOffsets},
		{"txn-offsets-deleted", caseTxnOffsetsDeleted},
		{"configs-topic", caseConfigsTopic},
		{"configs-broker", caseConfigsBroker},
		{"configs-alter", caseConfigsAlter},
		{"configs-topic-rules", caseTopicRules},
		{"configs-internal", caseConfigsInternal},
		{"telemetry", caseTelemetry},
		{"acls-disabled", caseACLsDisabled},
		{"tokens-plaintext", caseTokensPlaintext},
		{"client-quotas", caseClientQuotas},
		{"bad-input", caseBadInput},
		{"admin-describe-topic-partitions", caseDescribeTopicPartitions},
		{"admin-log-dirs", caseLogDirs},
		{"admin-elect-leaders", caseElectLeaders},
		{"admin-reassignments", caseReassignments},
		{"admin-features", caseFeatures},
		{"admin-config-resources", caseConfigResources},
		{"share-dlq-configs", caseShareDLQConfigs},
	}
}

func caseAPIVersions(r *run) {
	for _, v := range []int16{0, 3, 4} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.ClientSoftwareName, req.ClientSoftwareVersion = "kafkadiff", "1.0"
		r.doV("api versions v"+itoa(int(v)), v, req)
	}
	req := kmsg.NewPtrApiVersionsRequest()
	r.doV("api versions v127 (unsupported)", 127, req)
	req = kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "bad name!", "1.0"
	r.doV("api versions v3 invalid software name", 3, req)
}

func metadataReq(allowAuto bool, topics ...string) *kmsg.MetadataRequest {
	md := kmsg.NewPtrMetadataRequest()
	md.AllowAutoTopicCreation = allowAuto
	md.IncludeTopicAuthorizedOperations = true
	for _, t := range topics {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(t)
		md.Topics = append(md.Topics, mt)
	}
	return md
}

func caseMetadataErrors(r *run) {
	r.do("missing topic, no auto-create", metadataReq(false, "kd-md-missing"))
	r.do("invalid topic name, auto-create", metadataReq(true, "kd md bad"))
	r.do("too long topic name, auto-create", metadataReq(true, strings.Repeat("x", 250)))
	r.createTopic("kd-md-three", 3)
	r.do("three partitions", metadataReq(false, "kd-md-three"))
	r.do("auto-create", metadataReq(true, "kd-md-auto"))
	r.awaitLeaders("kd-md-auto", 1)
	r.do("auto-created", metadataReq(false, "kd-md-auto"))
	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.IncludeClusterAuthorizedOperations = true
	r.do("describe cluster", dc)
}

func caseCreateTopicsErrors(r *run) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	add := func(name string, parts int32, rf int16, configs ...string) {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, parts, rf
		for i := 0; i+1 < len(configs); i += 2 {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = configs[i], kmsg.StringPtr(configs[i+1])
			t.Configs = append(t.Configs, c)
		}
		req.Topics = append(req.Topics, t)
	}
	add("kd ct space", 1, 1)
	add(".", 1, 1)
	add("..", 1, 1)
	add(strings.Repeat("y", 250), 1, 1)
	add("kd-ct-neg-parts", -5, 1)
	add("kd-ct-zero-parts", 0, 1)
	add("kd-ct-rf3", 1, 3)
	add("kd-ct-rf0", 1, 0)
	add("kd-ct-bad-policy", 1, 1, "cleanup.policy", "bogus")
	add("kd-ct-unknown-config", 1, 1, "no.such.config", "1")
	add("kd-ct-default", -1, -1)
	r.do("create invalid topics", req)
	r.awaitLeaders("kd-ct-default", 1)
	r.createTopic("kd-ct-ok", 2, "retention.ms", "60000")
	req = kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	add("kd-ct-ok", 1, 1)
	r.do("create existing topic", req)
	req = kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis, req.ValidateOnly = 30000, true
	add("kd-ct-validate", 4, 1)
	r.do("validate only", req)
	r.do("validated topic does not exist", metadataReq(false, "kd-ct-validate"))
}

func caseProduceFetchBasic(r *run) {
	const topic = "kd-pf"
	r.createTopic(topic, 1)
	r.produce("produce 3", topic, 0, Batch{Records: []Rec{
		{Key: []byte("k0"), Value: []byte("v0"), Headers: []kmsg.Header{{Key: "h", Value: []byte("x")}}},
		{Key: nil, Value: nil},
		{Key: []byte("k2"), Value: []byte("v2")},
	}})
	r.produce("produce 2 more", topic, 0, Batch{Records: Recs("b", 2), FirstTS: BaseTimestamp + 10_000})
	r.fetch("fetch from 0", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
	r.fetch("fetch from 1 (inside a batch)", -1, fetchReq(topic, 0, 1, 1<<20, 1<<20, 0))
	r.fetch("fetch at high watermark", -1, fetchReq(topic, 0, 5, 1<<20, 1<<20, 0))
	r.fetch("fetch past high watermark", -1, fetchReq(topic, 0, 10, 1<<20, 1<<20, 0))
	r.fetch("fetch negative offset", -1, fetchReq(topic, 0, -3, 1<<20, 1<<20, 0))
	r.fetch("fetch missing partition", -1, fetchReq(topic, 7, 0, 1<<20, 1<<20, 0))
	r.fetch("fetch v12 unknown topic", 12, fetchReq("kd-pf-missing", 0, 0, 1<<20, 1<<20, 0))
	unknownID := fetchReq("kd-pf-missing", 0, 0, 1<<20, 1<<20, 0)
	unknownID.SetVersion(common[1])
	if unknownID.GetVersion() >= 13 {
		unknownID.Topics[0].TopicID = [16]byte{1, 2, 3}
		r.doV("fetch unknown topic id", -1, unknownID)
	}
	replica := fetchReq(topic, 0, 0, 1<<20, 1<<20, 0)
	replica.ReplicaID = 1
	r.fetch("fetch v12 as replica 1", 12, replica)
	r.fetch("fetch v4", 4, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
	r.fetch("fetch v0", 0, fetchReq(topic, 0, 3, 1<<20, 1<<20, 0))
}

func caseProduceErrors(r *run) {
	const topic = "kd-pe"
	r.createTopic(topic, 1)
	r.createTopic("kd-pe-small", 1, "max.message.bytes", "1000")
	r.do("produce to missing partition", produceReq(topic, 3, -1, nil, Batch{Records: Recs("a", 1)}.Bytes()))
	r.do("produce to invalid topic name", produceReq("kd pe bad", 0, -1, nil, Batch{Records: Recs("a", 1)}.Bytes()))
	r.do("produce acks=2", produceReq(topic, 0, 2, nil, Batch{Records: Recs("a", 1)}.Bytes()))
	bad := Batch{Records: Recs("a", 2)}.Bytes()
	bad[len(bad)-1] ^= 0xff
	r.do("produce with bad crc", produceReq(topic, 0, -1, nil, bad))
	r.do("produce too large for topic", produceReq("kd-pe-small", 0, -1, nil, Batch{Records: []Rec{BigRec(2000)}}.Bytes()))
	r.do("produce larger than message.max.bytes", produceReq(topic, 0, -1, nil, Batch{Records: []Rec{BigRec(1100 << 10)}}.Bytes()))
	r.do("produce transactional without txn id", produceReq(topic, 0, -1, nil, Batch{Records: Recs("a", 1), ProducerID: 1, Transactional: true}.Bytes()))
	r.do("produce with unknown producer id", produceReq(topic, 0, -1, nil, Batch{Records: Recs("a", 1), ProducerID: 123456, Idempotent: true, FirstSequence: 5}.Bytes()))
	r.fetch("nothing was written", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
	r.ackless("acks=0 to an invalid topic name", produceReq("kd pe bad", 0, 0, nil, Batch{Records: Recs("a", 1)}.Bytes()))
}

// ackless sends an acks=0 produce (no answer) and records whether the
// connection still answers the next request: a broker closes it when an
// acks=0 produce fails, so that the producer notices.
func (r *run) ackless(name string, req *kmsg.ProduceRequest) {
	req.SetVersion(common[req.Key()])
	if !r.connected(name) {
		return
	}
	outcome := "connection kept"
	if err := r.conn.Send(req); err != nil {
		outcome = "write error"
	} else if _, err := r.conn.Do(metadataReq(false)); err != nil {
		outcome = "connection closed"
		r.conn.Close()
		r.conn = nil
	}
	r.record(name, map[string]string{"": outcome})
}

func caseProduceIdempotent(r *run) {
	const topic = "kd-pi"
	r.createTopic(topic, 1)
	pid, epoch := r.initProducer("init producer id", nil, -1, -1)
	b := func(seq int32, n int) Batch {
		return Batch{Records: Recs("s"+itoa(int(seq)), n), Idempotent: true, ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq}
	}
	r.produce("seq 0", topic, 0, b(0, 2))
	r.produce("seq 2", topic, 0, b(2, 2))
	r.produce("seq 2 again (duplicate)", topic, 0, b(2, 2))
	r.produce("seq 0 again (older duplicate)", topic, 0, b(0, 2))
	r.produce("seq 9 (gap)", topic, 0, b(9, 1))
	r.produce("epoch+1 seq 5", topic, 0, Batch{Records: Recs("e", 1), Idempotent: true, ProducerID: pid, ProducerEpoch: epoch + 1, FirstSequence: 5})
	r.produce("epoch+1 seq 0", topic, 0, Batch{Records: Recs("e", 1), Idempotent: true, ProducerID: pid, ProducerEpoch: epoch + 1, FirstSequence: 0})
	r.produce("old epoch", topic, 0, b(4, 1))
	r.fetch("fetch all", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
	dp := kmsg.NewPtrDescribeProducersRequest()
	dt := kmsg.NewDescribeProducersRequestTopic()
	dt.Topic, dt.Partitions = topic, []int32{0, 5}
	dp.Topics = append(dp.Topics, dt)
	r.do("describe producers", dp)
}

func caseFetchKIP74(r *run) {
	const topic = "kd-f74"
	r.createTopic(topic, 1)
	r.produce("big batch", topic, 0, Batch{Records: []Rec{BigRec(5000)}})
	r.produce("small batch", topic, 0, Batch{Records: Recs("s", 1)})
	r.fetch("max bytes 100: whole first batch", -1, fetchReq(topic, 0, 0, 100, 100, 0))
	r.fetch("partition max 100, max 1M", -1, fetchReq(topic, 0, 0, 1<<20, 100, 0))
	r.fetch("max bytes 100 at second batch", -1, fetchReq(topic, 0, 1, 100, 100, 0))
	r.fetch("v2 (before KIP-74) max 100", 2, fetchReq(topic, 0, 0, 100, 100, 0))
	r.fetch("max bytes 0", -1, fetchReq(topic, 0, 0, 0, 0, 0))
}

func caseFetchMaxBytes(r *run) {
	const topic = "kd-fmb"
	r.createTopic(topic, 2)
	for i := 0; i < 3; i++ {
		r.produce("batch "+itoa(i), topic, 0, Batch{Records: []Rec{BigRec(400)}, FirstTS: BaseTimestamp + int64(i)})
	}
	r.produce("partition 1 batch", topic, 1, Batch{Records: []Rec{BigRec(400)}})
	r.fetch("max 1000 of 3x~470", -1, fetchReq(topic, 0, 0, 1000, 1<<20, 0))
	r.fetch("partition max 1000", -1, fetchReq(topic, 0, 0, 1<<20, 1000, 0))
	two := fetchReq(topic, 0, 0, 600, 1<<20, 0)
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition, p.FetchOffset, p.PartitionMaxBytes, p.CurrentLeaderEpoch, p.LogStartOffset = 1, 0, 1<<20, -1, -1
	two.Topics[0].Partitions = append(two.Topics[0].Partitions, p)
	r.fetch("two partitions, max 600", -1, two)
}

func caseFetchZstd(r *run) {
	const topic = "kd-zstd"
	r.createTopic(topic, 1)
	z := Batch{Records: Recs("z", 3), Zstd: true}
	r.doV("produce zstd v6 (before zstd)", 6, produceReq(topic, 0, -1, nil, z.Bytes()))
	r.doV("produce zstd v7", 7, produceReq(topic, 0, -1, nil, z.Bytes()))
	r.produce("plain batch", topic, 0, Batch{Records: Recs("p", 1)})
	r.fetch("fetch v9 (below zstd)", 9, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
	r.fetch("fetch v9 after zstd batch", 9, fetchReq(topic, 0, 3, 1<<20, 1<<20, 0))
	r.fetch("fetch v10", 10, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
	r.fetch("fetch latest", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
}

func caseListOffsets(r *run) {
	const topic = "kd-lo"
	r.createTopic(topic, 2)
	r.listOffsets("empty: latest", -1, topic, 0, -1, 0)
	r.listOffsets("empty: earliest", -1, topic, 0, -2, 0)
	r.listOffsets("empty: max timestamp", -1, topic, 0, -3, 0)
	r.listOffsets("empty: by time", -1, topic, 0, BaseTimestamp, 0)
	r.produce("batch a", topic, 0, Batch{Records: Recs("a", 3)})                                                   // ts base, +1000, +2000
	r.produce("batch b (older timestamps)", topic, 0, Batch{Records: Recs("b", 2), FirstTS: BaseTimestamp - 5000}) // base-5000, base-4000
	r.produce("batch c", topic, 0, Batch{Records: Recs("c", 2), FirstTS: BaseTimestamp + 1500})
	for _, c := range []struct {
		name string
		ts   int64
	}{
		{"latest (-1)", -1}, {"earliest (-2)", -2}, {"max timestamp (-3)", -3},
		{"earliest local (-4)", -4}, {"latest tiered (-5)", -5}, {"unknown special (-6)", -6},
		{"by time before all", BaseTimestamp - 10_000}, {"by time base+1500", BaseTimestamp + 1500},
		{"by time base+1600", BaseTimestamp + 1600}, {"by time after all", BaseTimestamp + 100_000},
	} {
		r.listOffsets(c.name, -1, topic, 0, c.ts, 0)
	}
	r.listOffsets("v6 max timestamp (-3 needs v7)", 6, topic, 0, -3, 0)
	r.listOffsets("v7 earliest local (-4 needs v8)", 7, topic, 0, -4, 0)
	r.listOffsets("v8 latest tiered (-5 needs v9)", 8, topic, 0, -5, 0)
	r.listOffsets("v0 latest", 0, topic, 0, -1, 0)
	r.listOffsets("v1 by time", 1, topic, 0, BaseTimestamp+1500, 0)
	r.listOffsets("missing partition", -1, topic, 9, -1, 0)
	r.listOffsets("missing topic", -1, "kd-lo-missing", 0, -1, 0)
	r.listOffsets("empty partition 1 max timestamp", -1, topic, 1, -3, 0)
	r.listOffsets("read committed latest", -1, topic, 0, -1, 1)
}

func caseDeleteRecords(r *run) {
	const topic = "kd-dr"
	r.createTopic(topic, 1)
	r.produce("produce 5", topic, 0, Batch{Records: Recs("a", 5)})
	del := func(name string, part int32, off int64) {
		req := kmsg.NewPtrDeleteRecordsRequest()
		req.TimeoutMillis = 30000
		t := kmsg.NewDeleteRecordsRequestTopic()
		t.Topic = topic
		p := kmsg.NewDeleteRecordsRequestTopicPartition()
		p.Partition, p.Offset = part, off
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
		r.do(name, req)
	}
	del("delete before 2", 0, 2)
	r.listOffsets("earliest after delete", -1, topic, 0, -2, 0)
	r.fetch("fetch from 0 after delete", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
	r.fetch("fetch from 2 after delete", -1, fetchReq(topic, 0, 2, 1<<20, 1<<20, 0))
	del("delete before 1 (behind start)", 0, 1)
	del("delete past high watermark", 0, 9)
	del("delete to high watermark (-1)", 0, -1)
	del("delete missing partition", 4, 1)
	r.listOffsets("earliest after delete all", -1, topic, 0, -2, 0)
}

func caseCreatePartitions(r *run) {
	const topic = "kd-cp"
	r.createTopic(topic, 1)
	cp := func(name, topic string, count int32, validate bool) {
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.TimeoutMillis, req.ValidateOnly = 30000, validate
		t := kmsg.NewCreatePartitionsRequestTopic()
		t.Topic, t.Count = topic, count
		req.Topics = append(req.Topics, t)
		r.do(name, req)
	}
	cp("validate 1 -> 4", topic, 4, true)
	cp("1 -> 3", topic, 3, false)
	r.awaitLeaders(topic, 3)
	cp("3 -> 3", topic, 3, false)
	cp("3 -> 2", topic, 2, false)
	cp("missing topic", "kd-cp-missing", 2, false)
	r.do("metadata", metadataReq(false, topic))
}

func caseDeleteTopics(r *run) {
	r.createTopic("kd-dt", 1)
	dt := func(name string, topics ...string) {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.TimeoutMillis = 30000
		for _, tp := range topics {
			t := kmsg.NewDeleteTopicsRequestTopic()
			t.Topic = kmsg.StringPtr(tp)
			req.Topics = append(req.Topics, t)
			req.TopicNames = append(req.TopicNames, tp)
		}
		r.do(name, req)
	}
	dt("delete missing", "kd-dt-missing")
	dt("delete invalid name", "kd dt bad")
	dt("delete existing", "kd-dt")
	// Kafka deletes asynchronously: wait until the topic is gone.
	r.await("kd-dt deleted", metadataReq(false, "kd-dt"), func(resp kmsg.Response) bool {
		ts := resp.(*kmsg.MetadataResponse).Topics
		return len(ts) == 1 && ts[0].ErrorCode == 3
	})
	r.do("metadata after delete", metadataReq(false, "kd-dt"))
	// Deleting an internal topic is not sent: Kafka would delete
	// __consumer_offsets under the other cases running beside this one.
}

func caseGroupUnknown(r *run) {
	const g = "kd-gu"
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups, dg.IncludeAuthorizedOperations = []string{g}, true
	r.do("describe unknown group", dg)
	of := kmsg.NewPtrOffsetFetchRequest()
	of.Group = g
	ofg := kmsg.NewOffsetFetchRequestGroup()
	ofg.Group = g
	of.Groups = append(of.Groups, ofg)
	r.do("offset fetch unknown group", of)
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.Generation, hb.MemberID = g, 1, "nobody"
	r.do("heartbeat unknown group", hb)
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Group, sg.Generation, sg.MemberID = g, 1, "nobody"
	sg.ProtocolType, sg.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	r.do("sync unknown group", sg)
	lg := kmsg.NewPtrLeaveGroupRequest()
	lg.Group, lg.MemberID = g, "nobody"
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = "nobody"
	lg.Members = append(lg.Members, m)
	r.do("leave unknown group", lg)
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{g}
	r.do("delete unknown group", del)
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = g
	odt := kmsg.NewOffsetDeleteRequestTopic()
	odt.Topic = "kd-gu-t"
	odt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
	od.Topics = append(od.Topics, odt)
	r.do("offset delete unknown group", od)
	cd := kmsg.NewPtrConsumerGroupDescribeRequest()
	cd.Groups = []string{g}
	r.do("consumer group describe unknown", cd)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKeys = 9, []string{g}
	r.do("find coordinator bad key type", fc)
}

// joinReq is a classic consumer JoinGroup of group with one range protocol.
func joinReq(group, member string, sessionMs int32) *kmsg.JoinGroupRequest {
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Group, jg.MemberID, jg.ProtocolType = group, member, "consumer"
	jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = sessionMs, 10000
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0}
	jg.Protocols = append(jg.Protocols, p)
	return jg
}

func caseGroupClassic(r *run) {
	const g = "kd-gc"
	r.awaitCoordinator(0, g)
	r.do("join: session timeout too small", joinReq(g, "", 1000))
	r.do("join: session timeout too large", joinReq(g, "", 3_600_000))
	r.do("join: unknown member id", joinReq(g, "stranger", 30000))
	first, _ := r.do("join: member id required", joinReq(g, "", 30000)).(*kmsg.JoinGroupResponse)
	member := ""
	if first != nil {
		member = first.MemberID
	}
	jr, _ := r.do("join with member id", joinReq(g, member, 30000)).(*kmsg.JoinGroupResponse)
	gen := int32(-1)
	if jr != nil {
		gen = jr.Generation
	}
	other := joinReq(g, "", 30000)
	other.ProtocolType = "connect"
	r.do("join: inconsistent protocol type", other)
	sync := func(name string, member string, gen int32, assign bool) {
		sg := kmsg.NewPtrSyncGroupRequest()
		sg.Group, sg.Generation, sg.MemberID = g, gen, member
		sg.ProtocolType, sg.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
		if assign {
			a := kmsg.NewSyncGroupRequestGroupAssignment()
			a.MemberID, a.MemberAssignment = member, []byte("assignment")
			sg.GroupAssignment = append(sg.GroupAssignment, a)
		}
		r.do(name, sg)
	}
	sync("sync: unknown member", "stranger", gen, false)
	sync("sync: wrong generation", member, gen+5, true)
	sync("sync: leader assigns", member, gen, true)
	sync("sync again", member, gen, false)
	hb := func(name, member string, gen int32) {
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group, req.Generation, req.MemberID = g, gen, member
		r.do(name, req)
	}
	hb("heartbeat", member, gen)
	hb("heartbeat: wrong generation", member, gen+1)
	hb("heartbeat: unknown member", "stranger", gen)
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation, oc.MemberID = g, gen, member
	oct := kmsg.NewOffsetCommitRequestTopic()
	oct.Topic = "kd-gc-t"
	ocp := kmsg.NewOffsetCommitRequestTopicPartition()
	ocp.Partition, ocp.Offset, ocp.LeaderEpoch, ocp.Metadata = 0, 0, -1, kmsg.StringPtr("meta")
	oct.Partitions = append(oct.Partitions, ocp)
	oc.Topics = append(oc.Topics, oct)
	r.do("commit to missing topic as member", oc)
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{g}
	r.do("describe stable group", dg)
	lg := kmsg.NewPtrLeaveGroupRequest()
	lg.Group = g
	for _, id := range []string{member, "stranger"} {
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID = id
		lg.Members = append(lg.Members, m)
	}
	r.do("leave: member and stranger", lg)
	hb("heartbeat after leave", member, gen)
	r.do("describe empty group", dg)
	lgr := kmsg.NewPtrListGroupsRequest()
	lgr.StatesFilter = []string{"Empty"}
	lgr.TypesFilter = []string{"classic"}
	resp, _ := r.setup(lgr).(*kmsg.ListGroupsResponse)
	found := "no"
	if resp != nil {
		for _, gr := range resp.Groups {
			if gr.Group == g {
				found = gr.GroupState + " " + gr.ProtocolType + " " + gr.GroupType
			}
		}
	}
	r.record("list groups: Empty classic has it", map[string]string{"found": found})
	del := kmsg.NewPtrDeleteGroupsRequest()
	del.Groups = []string{g}
	r.do("delete empty group", del)
}

// caseGroupClassicFirstRebalance: the first rebalance of an Empty group
// is not held up by a member id handed out and not back: Kafka completes
// it from its initial-delay timer only (0 ms here; kgateway runs at its
// default delay in this corpus, kafka/group tests it at 0). Were it held
// up, the rejoin would wait out the other id's 30 s session, past the
// request's IOTimeout.
func caseGroupClassicFirstRebalance(r *run) {
	const g = "kd-gfr"
	r.awaitCoordinator(0, g)
	first, _ := r.do("first member: member id required", joinReq(g, "", 30000)).(*kmsg.JoinGroupResponse)
	r.do("second member: member id required", joinReq(g, "", 30000))
	member := ""
	if first != nil {
		member = first.MemberID
	}
	r.do("first member rejoins: a generation of its own", joinReq(g, member, 30000))
	lg := kmsg.NewPtrLeaveGroupRequest()
	lg.Group = g
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = member
	lg.Members = append(lg.Members, m)
	r.do("first member leaves", lg)
}

func caseGroup848(r *run) {
	const g, topic = "kd-g848", "kd-g848-t"
	r.createTopic(topic, 2)
	r.awaitCoordinator(0, g)
	hb := func(name, member string, epoch int32, topics []string) *kmsg.ConsumerGroupHeartbeatResponse {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.MemberEpoch = g, member, epoch
		req.RebalanceTimeoutMillis = 10000
		req.SubscribedTopicNames = topics
		if epoch == 0 {
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		}
		resp, _ := r.do(name, req).(*kmsg.ConsumerGroupHeartbeatResponse)
		return resp
	}
	hb("join without member id", "", 0, []string{topic})
	hb("unknown member, epoch 3", "kd-g848-stranger-0000", 3, nil)
	// Kafka may answer the join before its assignor ran (state
	// Assigning, no assignment yet): the join's assignment is not
	// compared; heartbeats (unrecorded) go on until the member holds both
	// partitions, then the steady state is.
	r.filter = func(flat map[string]string) {
		for p := range flat {
			if strings.HasPrefix(p, "Assignment") {
				delete(flat, p)
			}
		}
	}
	resp := hb("join", "kd-g848-member-000000", 0, []string{topic})
	r.filter = nil
	epoch := int32(0)
	if resp != nil {
		epoch = resp.MemberEpoch
		for n := 0; resp.Assignment == nil || len(resp.Assignment.Topics) == 0 || len(resp.Assignment.Topics[0].Partitions) < 2; n++ {
			if r.ctx.Err() != nil {
				r.t.Errorf("%s: no assignment of both partitions", r.side.name)
				break
			}
			time.Sleep(50 * time.Millisecond)
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.Group, req.MemberID, req.MemberEpoch = g, "kd-g848-member-000000", epoch
			next, _ := r.setup(req).(*kmsg.ConsumerGroupHeartbeatResponse)
			if next == nil || next.ErrorCode != 0 {
				break
			}
			resp, epoch = next, next.MemberEpoch
		}
	}
	hb("heartbeat: epoch too new", "kd-g848-member-000000", epoch+7, nil)
	hb("heartbeat", "kd-g848-member-000000", epoch, nil)
	d := kmsg.NewPtrConsumerGroupDescribeRequest()
	d.Groups = []string{g}
	r.do("describe", d)
	classic := joinReq(g, "", 30000)
	r.do("classic join of a consumer group", classic)
	hb("leave", "kd-g848-member-000000", -1, nil)
	r.do("describe after leave", d)
}

// caseGroupMigration: KIP-848's online upgrade and downgrade. A classic
// group with one member (consumer protocol type, a valid subscription
// and assignment) is joined by a consumer-protocol member; the classic
// member is told to rejoin and is served by the consumer group; the
// consumer-protocol member leaves and the group is classic again. The
// answers that depend on when Kafka's assignor ran (epochs, generations,
// assignments) are not compared.
func caseGroupMigration(r *run) {
	const g, topic = "kd-gm", "kd-gm-t"
	r.createTopic(topic, 2)
	r.awaitCoordinator(0, g)
	meta := func(owned ...int32) []byte {
		m := kmsg.NewConsumerMemberMetadata()
		m.Version, m.Topics = 3, []string{topic}
		if len(owned) > 0 {
			m.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: topic, Partitions: owned}}
		}
		return m.AppendTo(nil)
	}
	join := func(member string, owned ...int32) *kmsg.JoinGroupRequest {
		jg := joinReq(g, member, 30000)
		jg.Protocols[0].Name, jg.Protocols[0].Metadata = "cooperative-sticky", meta(owned...)
		return jg
	}
	first, _ := r.setup(join("")).(*kmsg.JoinGroupResponse)
	member := ""
	if first != nil {
		member = first.MemberID
	}
	jr, _ := r.setup(join(member)).(*kmsg.JoinGroupResponse)
	gen := int32(-1)
	if jr != nil {
		gen = jr.Generation
	}
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Group, sg.Generation, sg.MemberID = g, gen, member
	r.do("classic sync v5 without protocol type and name", sg)
	sg.ProtocolType, sg.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("cooperative-sticky")
	a := kmsg.NewConsumerMemberAssignment()
	a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: topic, Partitions: []int32{0, 1}}}
	ga := kmsg.NewSyncGroupRequestGroupAssignment()
	ga.MemberID, ga.MemberAssignment = member, a.AppendTo(nil)
	sg.GroupAssignment = append(sg.GroupAssignment, ga)
	r.do("classic leader syncs", sg)

	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch = g, "kd-gm-consumer-000000", 0
	hb.RebalanceTimeoutMillis, hb.SubscribedTopicNames = 10000, []string{topic}
	hb.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	r.filter = func(flat map[string]string) {
		for p := range flat {
			if strings.HasPrefix(p, "Assignment") || p == "MemberEpoch" {
				delete(flat, p)
			}
		}
	}
	r.do("consumer-protocol member joins the classic group", hb)
	r.filter = nil
	types := func(name string) {
		resp, _ := r.setup(kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse)
		found := "no"
		if resp != nil {
			for _, gr := range resp.Groups {
				if gr.Group == g {
					found = gr.GroupType + " " + gr.ProtocolType
				}
			}
		}
		r.record(name, map[string]string{"found": found})
	}
	types("list groups after the upgrade")
	d := kmsg.NewPtrConsumerGroupDescribeRequest()
	d.Groups = []string{g}
	if dr, _ := r.setup(d).(*kmsg.ConsumerGroupDescribeResponse); dr != nil && len(dr.Groups) == 1 {
		kinds := map[string]string{"error": itoa(int(dr.Groups[0].ErrorCode))}
		for _, m := range dr.Groups[0].Members {
			if m.MemberID == member {
				kinds["classic member type"] = itoa(int(m.MemberType))
			} else {
				kinds["consumer member type"] = itoa(int(m.MemberType))
			}
		}
		r.record("describe after the upgrade", kinds)
	}
	beat := kmsg.NewPtrHeartbeatRequest()
	beat.Group, beat.Generation, beat.MemberID = g, gen, member
	r.do("classic heartbeat: rejoin", beat)
	beat.Generation = gen + 100
	r.do("classic heartbeat: wrong generation", beat)
	beat.Generation, beat.MemberID = gen, "stranger"
	r.do("classic heartbeat: unknown member", beat)
	r.filter = func(flat map[string]string) { delete(flat, "Generation") }
	r.do("classic rejoin", join(member, 0, 1))
	other := join(member, 0, 1)
	other.Protocols[0].Name = "range"
	r.do("classic rejoin: a protocol the group does not support", other)
	r.filter = nil
	hb.MemberEpoch = -1
	r.do("consumer-protocol member leaves", hb)
	types("list groups after the downgrade")
}

func caseOffsetsSimple(r *run) {
	const g, topic = "kd-os", "kd-os-t"
	r.createTopic(topic, 2)
	r.awaitCoordinator(0, g)
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = g, -1
	oct := kmsg.NewOffsetCommitRequestTopic()
	oct.Topic = topic
	for _, c := range []struct {
		p   int32
		off int64
	}{{0, 5}, {1, -1}, {7, 3}} {
		ocp := kmsg.NewOffsetCommitRequestTopicPartition()
		ocp.Partition, ocp.Offset, ocp.LeaderEpoch, ocp.Metadata = c.p, c.off, -1, kmsg.StringPtr("m")
		oct.Partitions = append(oct.Partitions, ocp)
	}
	oc.Topics = append(oc.Topics, oct)
	r.do("simple commit", oc)
	oc.Generation = 3
	r.do("simple commit with a generation", oc)
	of := kmsg.NewPtrOffsetFetchRequest()
	ofg := kmsg.NewOffsetFetchRequestGroup()
	ofg.Group = g
	oft := kmsg.NewOffsetFetchRequestGroupTopic()
	oft.Topic, oft.Partitions = topic, []int32{0, 1, 7}
	ofg.Topics = append(ofg.Topics, oft)
	of.Groups = append(of.Groups, ofg)
	of.Group = g
	of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{0, 1, 7}}}
	r.do("fetch committed", of)
	r.doV("fetch committed v7", 7, of)
	od := kmsg.NewPtrOffsetDeleteRequest()
	od.Group = g
	odt := kmsg.NewOffsetDeleteRequestTopic()
	odt.Topic = topic
	odt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}, {Partition: 9}}
	od.Topics = append(od.Topics, odt)
	r.do("offset delete", od)
	r.do("fetch after delete", of)
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{g}
	r.do("describe simple group", dg)
}

// caseTopicIDs: the versions that name topics by id (KIP-516; Produce
// v13, OffsetCommit v10, OffsetFetch v10), with a known id and with an id
// no topic has; a commit naming only unknown ids creates no group.
func caseTopicIDs(r *run) {
	const g, topic = "kd-ti", "kd-ti-t"
	r.createTopic(topic, 1)
	r.awaitCoordinator(0, g)
	unknown := [16]byte{'k', 'd', 't', 'i'}
	r.produce("produce by id", topic, 0, Batch{Records: Recs("i", 2)})
	pr := produceReq(topic, 0, -1, nil, Batch{Records: Recs("u", 1)}.Bytes())
	pr.Topics[0].TopicID = unknown
	r.do("produce to an unknown id", pr)
	pr = produceReq(topic, 0, -1, nil, Batch{Records: Recs("u", 1)}.Bytes())
	second := pr.Topics[0]
	second.TopicID = unknown
	pr.Topics = append(pr.Topics, second)
	r.do("produce to a known and an unknown id", pr)

	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = g, -1
	oct := kmsg.NewOffsetCommitRequestTopic()
	oct.TopicID = unknown
	ocp := kmsg.NewOffsetCommitRequestTopicPartition()
	ocp.Partition, ocp.Offset, ocp.LeaderEpoch = 0, 1, -1
	oct.Partitions = append(oct.Partitions, ocp)
	oc.Topics = append(oc.Topics, oct)
	r.do("commit to an unknown id only", oc)
	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = []string{g}
	r.do("describe the group (none)", dg)
	known := oct
	known.TopicID, known.Topic = [16]byte{}, topic
	oc.Topics = append(oc.Topics, known)
	r.do("commit to a known and an unknown id", oc)

	of := kmsg.NewPtrOffsetFetchRequest()
	ofg := kmsg.NewOffsetFetchRequestGroup()
	ofg.Group = g
	ofg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: []int32{0}}, {TopicID: unknown, Partitions: []int32{0}}}
	of.Groups = append(of.Groups, ofg)
	r.do("fetch a known and an unknown id", of)
	all := kmsg.NewPtrOffsetFetchRequest()
	all.Groups = []kmsg.OffsetFetchRequestGroup{{Group: g}}
	r.do("fetch all topics", all)
}

func caseTxnTV1(r *run) {
	const topic, id = "kd-tx1", "kd-tx1-id"
	r.createTopic(topic, 2)
	r.awaitCoordinator(1, id)
	pid, epoch := r.initProducer("init", str(id), -1, -1)
	r.addPartitionsV3("add partitions", id, pid, epoch, topic, 0, 1)
	r.addPartitionsV3("add missing partition", id, pid, epoch, topic, 0, 9)
	r.doV("produce txn v11", 11, produceReq(topic, 0, -1, str(id), txnBatch("t", 2, pid, epoch, 0).Bytes()))
	r.fetch("read committed before commit", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 1))
	r.listOffsets("read committed latest (LSO)", -1, topic, 0, -1, 1)
	r.fetch("read uncommitted before commit", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
	dtx := kmsg.NewPtrDescribeTransactionsRequest()
	dtx.TransactionalIDs = []string{id, "kd-tx1-unknown"}
	r.do("describe ongoing", dtx)
	r.endTxn("commit v4", 4, id, pid, epoch, true)
	r.await("txn complete", dtx, func(resp kmsg.Response) bool {
		for _, s := range resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
			if s.TransactionalID == id {
				return s.State == "CompleteCommit"
			}
		}
		return false
	})
	r.awaitReadable(topic, 0)
	r.fetch("read committed after commit", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 1))
	r.fetch("read committed after commit, from 2 (the marker)", -1, fetchReq(topic, 0, 2, 1<<20, 1<<20, 1))
	r.do("describe complete", dtx)
	r.endTxn("commit with no transaction", 4, id, pid, epoch, true)
	r.endTxn("abort with no transaction", 4, id, pid, epoch, false)
	r.doV("produce txn v11 without add partitions", 11, produceReq(topic, 1, -1, str(id), txnBatch("n", 1, pid, epoch, 0).Bytes()))
	r.doV("produce txn v10 without add partitions", 10, produceReq(topic, 1, -1, str(id), txnBatch("n", 1, pid, epoch, 0).Bytes()))
	r.doV("produce txn v9 without add partitions", 9, produceReq(topic, 1, -1, str(id), txnBatch("n", 1, pid, epoch, 0).Bytes()))
}

func caseTxnAbortFetch(r *run) {
	const topic, id = "kd-txa", "kd-txa-id"
	r.createTopic(topic, 1)
	r.awaitCoordinator(1, id)
	r.produce("plain before", topic, 0, Batch{Records: Recs("p", 1)})
	pid, epoch := r.initProducer("init", str(id), -1, -1)
	r.addPartitionsV3("add", id, pid, epoch, topic, 0)
	r.doV("produce txn", 11, produceReq(topic, 0, -1, str(id), txnBatch("t", 2, pid, epoch, 0).Bytes()))
	r.produce("plain inside", topic, 0, Batch{Records: Recs("q", 1), FirstTS: BaseTimestamp + 7})
	r.endTxn("abort", 4, id, pid, epoch, false)
	dtx := kmsg.NewPtrDescribeTransactionsRequest()
	dtx.TransactionalIDs = []string{id}
	r.await("txn aborted", dtx, func(resp kmsg.Response) bool {
		s := resp.(*kmsg.DescribeTransactionsResponse).TransactionStates
		return len(s) == 1 && s[0].State == "CompleteAbort"
	})
	r.awaitReadable(topic, 0)
	r.fetch("read committed: aborted transactions", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 1))
	r.fetch("read uncommitted", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
	r.fetch("read committed from 2", -1, fetchReq(topic, 0, 2, 1<<20, 1<<20, 1))
	r.fetch("read committed v3", 3, fetchReq(topic, 0, 0, 1<<20, 1<<20, 1))
	r.listOffsets("latest read committed", -1, topic, 0, -1, 1)
	r.listOffsets("max timestamp", -1, topic, 0, -3, 0)
	r.listOffsets("by time base+1", -1, topic, 0, BaseTimestamp+1, 1)
}

func caseTxnFencing(r *run) {
	const topic, id = "kd-txf", "kd-txf-id"
	r.createTopic(topic, 1)
	r.awaitCoordinator(1, id)
	pid, epoch := r.initProducer("init", str(id), -1, -1)
	r.addPartitionsV3("add", id, pid, epoch, topic, 0)
	r.doV("produce txn", 11, produceReq(topic, 0, -1, str(id), txnBatch("t", 1, pid, epoch, 0).Bytes()))
	pid2, epoch2 := r.initProducer("init again (fences and aborts)", str(id), -1, -1)
	// Kafka completes the abort (markers) after answering: wait for it.
	dtx := kmsg.NewPtrDescribeTransactionsRequest()
	dtx.TransactionalIDs = []string{id}
	r.await("abort complete", dtx, func(resp kmsg.Response) bool {
		s := resp.(*kmsg.DescribeTransactionsResponse).TransactionStates
		return len(s) == 1 && (s[0].State == "CompleteAbort" || s[0].State == "Empty")
	})
	r.awaitReadable(topic, 0)
	r.record("same producer id", map[string]string{"same": boolStr(pid == pid2), "epoch+1": boolStr(epoch2 == epoch+1)})
	r.doV("produce old epoch", 11, produceReq(topic, 0, -1, str(id), txnBatch("o", 1, pid, epoch, 1).Bytes()))
	r.addPartitionsV3("add with old epoch", id, pid, epoch, topic, 0)
	r.endTxn("commit with old epoch", 4, id, pid, epoch, true)
	r.initProducer("init with wrong pid/epoch", str(id), pid+1000, 3)
	r.initProducer("init with current pid/epoch (KIP-360)", str(id), pid2, epoch2)
	r.fetch("read committed", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 1))
	r.fetch("read uncommitted", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 0))
}

// caseTxnSelfFence: a client that lost track of its transaction (a
// request lost while the coordinator moved) recovers with a KIP-360
// InitProducerId naming its own producer id and epoch while the
// transaction is Ongoing (the InitProducerId bump): CONCURRENT_TRANSACTIONS while
// the abort completes, then its retries continue at the epoch one up,
// where the old epoch is fenced.
func caseTxnSelfFence(r *run) {
	const topic, id = "kd-txs", "kd-txs-id"
	r.createTopic(topic, 1)
	r.awaitCoordinator(1, id)
	pid, epoch := r.initProducer("init", str(id), -1, -1)
	r.addPartitionsV3("add", id, pid, epoch, topic, 0)
	r.doV("produce txn", 11, produceReq(topic, 0, -1, str(id), txnBatch("t", 1, pid, epoch, 0).Bytes()))
	r.initProducer("KIP-360 init naming the ongoing transaction's producer", str(id), pid, epoch)
	dtx := kmsg.NewPtrDescribeTransactionsRequest()
	dtx.TransactionalIDs = []string{id}
	r.await("abort complete", dtx, func(resp kmsg.Response) bool {
		s := resp.(*kmsg.DescribeTransactionsResponse).TransactionStates
		return len(s) == 1 && (s[0].State == "CompleteAbort" || s[0].State == "Empty")
	})
	pid2, epoch2 := r.initProducer("its retry, naming the same epoch", str(id), pid, epoch)
	r.record("the retry continues", map[string]string{"same pid": boolStr(pid2 == pid), "epoch+1": boolStr(epoch2 == epoch+1)})
	r.initProducer("a retry of the retry", str(id), pid, epoch)
	r.awaitReadable(topic, 0)
	r.fetch("read committed", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 1))
	r.addPartitionsV3("add at the epoch one up", id, pid, epoch+1, topic, 0)
	r.addPartitionsV3("add at the old epoch", id, pid, epoch, topic, 0)
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func caseTxnTV2(r *run) {
	const topic, id = "kd-tx2", "kd-tx2-id"
	r.createTopic(topic, 1)
	r.awaitCoordinator(1, id)
	pid, epoch := r.initProducer("init", str(id), -1, -1)
	r.doV("produce v12 without add partitions", 12, produceReq(topic, 0, -1, str(id), txnBatch("t", 2, pid, epoch, 0).Bytes()))
	apt := kmsg.NewPtrAddPartitionsToTxnRequest()
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, pid, epoch, true
	tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	tt.Topic, tt.Partitions = topic, []int32{0}
	tx.Topics = append(tx.Topics, tt)
	apt.Transactions = append(apt.Transactions, tx)
	r.doV("add partitions v5 from a client (brokers only)", 5, apt)
	end := r.endTxn("commit v5", 5, id, pid, epoch, true)
	nextEpoch := epoch + 1
	if end != nil {
		r.record("commit v5 bumps the epoch", map[string]string{"epoch+1": boolStr(end.ProducerEpoch == epoch+1), "same pid": boolStr(end.ProducerID == pid)})
		nextEpoch = end.ProducerEpoch
	}
	dtx := kmsg.NewPtrDescribeTransactionsRequest()
	dtx.TransactionalIDs = []string{id}
	r.await("txn committed", dtx, func(resp kmsg.Response) bool {
		s := resp.(*kmsg.DescribeTransactionsResponse).TransactionStates
		return len(s) == 1 && s[0].State == "CompleteCommit"
	})
	r.doV("produce v12 with the old epoch", 12, produceReq(topic, 0, -1, str(id), txnBatch("o", 1, pid, epoch, 2).Bytes()))
	r.doV("produce v12 with the new epoch", 12, produceReq(topic, 0, -1, str(id), txnBatch("n", 1, pid, nextEpoch, 0).Bytes()))
	r.endTxn("abort v5 with the old epoch", 5, id, pid, epoch, false)
	r.endTxn("abort v5", 5, id, pid, nextEpoch, false)
	r.await("txn aborted", dtx, func(resp kmsg.Response) bool {
		s := resp.(*kmsg.DescribeTransactionsResponse).TransactionStates
		return len(s) == 1 && s[0].State == "CompleteAbort"
	})
	r.awaitReadable(topic, 0)
	r.fetch("read committed", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 1))
	r.doV("produce v11 (TV1 client) in a TV2 transaction", 11, produceReq(topic, 0, -1, str(id), txnBatch("v", 1, pid, nextEpoch+1, 0).Bytes()))
}

// caseTxnTV1EndV5 is a transaction started the version-1 way (explicit
// AddPartitionsToTxn v3, Produce v11) and ended by EndTxn v5: the EndTxn's
// version decides the rules, so the epoch is bumped as at version 2; then
// the retry with the old epoch, a commit v5 with nothing running, and the
// old epoch's batches fenced by the bumped markers.
// caseTxnMarkersV2: WriteTxnMarkers v2 (KIP-1228) names each marker's
// transaction version, and the partition leader checks the marker's
// epoch by it: at TV2 the batches' own epoch is fenced while the
// transaction is open, the bumped one ends it, a retried one is a
// success and an older one is fenced with nothing open; at TV0 the
// batches' epoch ends it.
func caseTxnMarkersV2(r *run) {
	const topic, id = "kd-txm", "kd-txm-id"
	r.createTopic(topic, 2)
	r.awaitCoordinator(1, id)
	pid, epoch := r.initProducer("init", str(id), -1, -1)
	r.addPartitionsV3("add", id, pid, epoch, topic, 0, 1)
	r.doV("produce txn to 0", 11, produceReq(topic, 0, -1, str(id), txnBatch("t", 2, pid, epoch, 0).Bytes()))
	r.doV("produce txn to 1", 11, produceReq(topic, 1, -1, str(id), txnBatch("u", 1, pid, epoch, 0).Bytes()))
	marker := func(name string, part int32, e int16, tv int8) {
		req := kmsg.NewPtrWriteTxnMarkersRequest()
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.TransactionVersion = pid, e, tv
		m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: topic, Partitions: []int32{part}}}
		req.Markers = append(req.Markers, m)
		r.doV(name, 2, req)
	}
	marker("TV2 at the batches' epoch", 0, epoch, 2)
	marker("TV2 at the bumped epoch", 0, epoch+1, 2)
	marker("TV2 retried", 0, epoch+1, 2)
	marker("TV2 older with nothing open", 0, epoch, 2)
	marker("TV0 at the batches' epoch", 1, epoch, 0)
	r.awaitReadable(topic, 0)
	r.listOffsets("read committed latest after the TV2 abort", -1, topic, 0, -1, 1)
}

func caseTxnTV1EndV5(r *run) {
	const topic, id = "kd-tx15", "kd-tx15-id"
	r.createTopic(topic, 1)
	r.awaitCoordinator(1, id)
	pid, epoch := r.initProducer("init", str(id), -1, -1)
	dtx := kmsg.NewPtrDescribeTransactionsRequest()
	dtx.TransactionalIDs = []string{id}
	for _, commit := range []bool{true, false} { // each at a new epoch: sequences from 0
		what := map[bool]string{true: "commit", false: "abort"}[commit]
		r.addPartitionsV3(what+": add partitions v3", id, pid, epoch, topic, 0)
		r.doV(what+": produce v11", 11, produceReq(topic, 0, -1, str(id), txnBatch(what[:1], 2, pid, epoch, 0).Bytes()))
		end := r.endTxn(what+": end v5", 5, id, pid, epoch, commit)
		if end == nil || end.ErrorCode != 0 {
			return
		}
		r.record(what+": end v5 bumps the epoch", map[string]string{"epoch+1": boolStr(end.ProducerEpoch == epoch+1), "same pid": boolStr(end.ProducerID == pid)})
		state := map[bool]string{true: "CompleteCommit", false: "CompleteAbort"}[commit]
		r.await(what+": complete", dtx, func(resp kmsg.Response) bool {
			s := resp.(*kmsg.DescribeTransactionsResponse).TransactionStates
			return len(s) == 1 && s[0].State == state
		})
		r.endTxn(what+": end v5 retried with the old epoch", 5, id, pid, epoch, commit)
		r.endTxn(what+": commit v5 with the new epoch, nothing running", 5, id, pid, end.ProducerEpoch, true)
		r.doV(what+": produce v11 with the old epoch", 11, produceReq(topic, 0, -1, str(id), txnBatch("o", 1, pid, epoch, 2).Bytes()))
		epoch = end.ProducerEpoch
	}
	r.awaitReadable(topic, 0)
	r.fetch("read committed", -1, fetchReq(topic, 0, 0, 1<<20, 1<<20, 1))
}

// caseTxnOffsets: a transaction's offsets as clients see them (KIP-447).
// While it runs, OffsetFetch with require_stable answers
// UNSTABLE_OFFSET_COMMIT and one without the offset committed before.
// Both brokers answer EndTxn once its decision is durable and commit the
// offsets after (Kafka with its marker on __consumer_offsets), so the
// stable offset is awaited, then read both ways: the transaction's after
// a commit, the one committed before after an abort.
func caseTxnOffsets(r *run) {
	const topic, id, group = "kd-txo", "kd-txo-id", "kd-txo-g"
	r.createTopic(topic, 1)
	r.awaitCoordinator(1, id)
	r.awaitCoordinator(0, group)
	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Group, oc.Generation = group, -1
	oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 3, LeaderEpoch: -1}}}}
	r.do("plain commit before", oc)
	fetch := func(stable bool) *kmsg.OffsetFetchRequest {
		of := kmsg.NewPtrOffsetFetchRequest()
		of.RequireStable = stable
		of.Group = group
		of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: topic, Partitions: []int32{0}}}
		of.Groups = []kmsg.OffsetFetchRequestGroup{{Group: group, Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, Partitions: []int32{0}}}}}
		return of
	}
	stable := func(resp kmsg.Response) bool {
		f := resp.(*kmsg.OffsetFetchResponse)
		switch {
		case len(f.Groups) == 1 && len(f.Groups[0].Topics) == 1 && len(f.Groups[0].Topics[0].Partitions) == 1:
			return f.Groups[0].Topics[0].Partitions[0].ErrorCode == 0
		case len(f.Topics) == 1 && len(f.Topics[0].Partitions) == 1:
			return f.Topics[0].Partitions[0].ErrorCode == 0
		}
		return false
	}
	pid, epoch := r.initProducer("init", str(id), -1, -1)
	for i, commit := range []bool{true, false} {
		what := map[bool]string{true: "commit", false: "abort"}[commit]
		ao := kmsg.NewPtrAddOffsetsToTxnRequest()
		ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = id, pid, epoch, group
		r.doV(what+": add offsets v3", 3, ao)
		tc := kmsg.NewPtrTxnOffsetCommitRequest()
		tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch, tc.Generation = id, group, pid, epoch, -1
		tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: int64(7 + 2*i), LeaderEpoch: -1}}}}
		r.doV(what+": txn offset commit v3", 3, tc)
		r.doV(what+": fetch v7 require_stable while running", 7, fetch(true))
		r.doV(what+": fetch v7 while running", 7, fetch(false))
		r.endTxn(what+": end v4", 4, id, pid, epoch, commit)
		r.await(what+": stable offset", fetch(true), stable)
		r.doV(what+": fetch v7 require_stable after", 7, fetch(true))
		r.doV(what+": fetch v7 after", 7, fetch(false))
	}
}

func caseTxnErrors(r *run) {
	const id = "kd-txe-id"
	r.awaitCoordinator(1, id)
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = str(id), 3_600_000, -1, -1
	r.do("init with timeout too large", req)
	r.addPartitionsV3("add partitions before init", id, 5, 0, "kd-txe-t", 0)
	r.endTxn("end before init", 4, id, 5, 0, true)
	lt := kmsg.NewPtrListTransactionsRequest()
	lt.StateFilters = []string{"NoSuchState"}
	r.do("list transactions bad state filter", lt)
	dp := kmsg.NewPtrDescribeProducersRequest()
	dt := kmsg.NewDescribeProducersRequestTopic()
	dt.Topic, dt.Partitions = "kd-txe-missing", []int32{0}
	dp.Topics = append(dp.Topics, dt)
	r.do("describe producers unknown topic", dp)
	to := kmsg.NewPtrTxnOffsetCommitRequest()
	to.TransactionalID, to.Group, to.ProducerID, to.ProducerEpoch, to.Generation = id, "kd-txe-g", 5, 0, -1
	tt := kmsg.NewTxnOffsetCommitRequestTopic()
	tt.Topic = "kd-txe-t"
	tp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	tp.Partition, tp.Offset, tp.LeaderEpoch = 0, 1, -1
	tt.Partitions = append(tt.Partitions, tp)
	to.Topics = append(to.Topics, tt)
	r.awaitCoordinator(0, "kd-txe-g")
	r.do("txn offset commit without a transaction", to)
	r.createTopic("kd-txe-t", 1)
	r.doV("produce v12 for an unknown producer", 12, produceReq("kd-txe-t", 0, -1, str(id), txnBatch("u", 1, 424242, 0, 0).Bytes()))
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = id, 5, 0, "kd-txe-g"
	r.do("add offsets before init", ao)
}

func describeConfigsReq(resType kmsg.ConfigResourceType, name string, keys ...string) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms, req.IncludeDocumentation = true, true
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName, res.ConfigNames = resType, name, keys
	req.Resources = append(req.Resources, res)
	return req
}

var topicConfigKeys = []string{"retention.ms", "cleanup.policy", "segment.bytes", "max.message.bytes",
	"min.insync.replicas", "message.timestamp.type", "retention.bytes", "unclean.leader.election.enable",
	"segment.ms", "delete.retention.ms", "min.compaction.lag.ms", "message.timestamp.before.max.ms", "compression.type"}

func caseConfigsTopic(r *run) {
	const topic = "kd-ct"
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, 1, 1
	for _, kv := range [][2]string{{"retention.ms", "123456"}, {"cleanup.policy", "compact"}} {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = kv[0], kmsg.StringPtr(kv[1])
		t.Configs = append(t.Configs, c)
	}
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 30000
	r.do("create topic: the configs it lists", req)
	r.awaitLeaders(topic, 1)
	r.do("describe chosen keys", describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, topicConfigKeys...))
	plain := describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, "retention.ms")
	plain.IncludeSynonyms, plain.IncludeDocumentation = false, false
	r.do("describe without synonyms or docs", plain)
	r.doV("describe v0", 0, describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, "retention.ms", "segment.bytes"))
	r.do("describe unknown key", describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, "no.such.key"))
	r.do("describe missing topic", describeConfigsReq(kmsg.ConfigResourceTypeTopic, "kd-ct-missing", "retention.ms"))
	r.do("describe invalid topic name", describeConfigsReq(kmsg.ConfigResourceTypeTopic, "kd ct bad", "retention.ms"))
	all, _ := r.setup(describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic)).(*kmsg.DescribeConfigsResponse)
	var names []string
	if all != nil && len(all.Resources) == 1 {
		for _, c := range all.Resources[0].Configs {
			names = append(names, c.Name)
		}
	}
	flat := map[string]string{}
	for _, n := range names {
		flat["Names["+n+"]"] = "listed"
	}
	r.record("names of all topic configs", flat)
}

func caseConfigsBroker(r *run) {
	id := itoa(int(r.side.nodeID))
	r.filter = r.nodeFilter()
	defer func() { r.filter = nil }()
	keys := []string{"num.partitions", "auto.create.topics.enable", "message.max.bytes", "log.retention.hours",
		"log.retention.ms", "default.replication.factor", "offsets.retention.minutes", "log.cleanup.policy",
		"transaction.max.timeout.ms", "group.min.session.timeout.ms", "group.max.session.timeout.ms"}
	r.do("describe broker keys", describeConfigsReq(kmsg.ConfigResourceTypeBroker, id, keys...))
	r.do("describe other broker", describeConfigsReq(kmsg.ConfigResourceTypeBroker, "77", "num.partitions"))
	// Each side has its own loggers; both have the root, at INFO.
	r.do("describe broker logger", describeConfigsReq(kmsg.ConfigResourceTypeBrokerLogger, id, "root", "kd.no.such.logger"))
	r.do("describe broker logger: empty id", describeConfigsReq(kmsg.ConfigResourceTypeBrokerLogger, "", "root"))
	r.do("describe broker logger: not a number", describeConfigsReq(kmsg.ConfigResourceTypeBrokerLogger, "kd", "root"))
	logger := func(name, res string, op kmsg.IncrementalAlterConfigOp, logger string, value *string) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, res
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = logger, op, value
		rr.Configs = append(rr.Configs, c)
		req.Resources = append(req.Resources, rr)
		r.do(name, req)
	}
	set := kmsg.IncrementalAlterConfigOpSet
	logger("set root logger INFO", id, set, "root", kmsg.StringPtr("INFO"))
	logger("set root logger lower-case", id, set, "root", kmsg.StringPtr("info"))
	logger("set root logger OFF", id, set, "root", kmsg.StringPtr("OFF"))
	logger("set unknown logger", id, set, "kd.no.such.logger", kmsg.StringPtr("INFO"))
	logger("set root logger null", id, set, "root", nil)
	logger("append to root logger", id, kmsg.IncrementalAlterConfigOpAppend, "root", kmsg.StringPtr("INFO"))
	logger("delete root logger", id, kmsg.IncrementalAlterConfigOpDelete, "root", nil)
	logger("set logger: empty id", "", set, "root", kmsg.StringPtr("INFO"))
	r.do("describe root logger after", describeConfigsReq(kmsg.ConfigResourceTypeBrokerLogger, id, "root"))
	alter := kmsg.NewPtrAlterConfigsRequest()
	ar := kmsg.NewAlterConfigsRequestResource()
	ar.ResourceType, ar.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, id
	ac := kmsg.NewAlterConfigsRequestResourceConfig()
	ac.Name, ac.Value = "root", kmsg.StringPtr("INFO")
	ar.Configs = append(ar.Configs, ac)
	alter.Resources = append(alter.Resources, ar)
	r.do("alter configs on a broker logger", alter)
	r.do("describe group config", describeConfigsReq(kmsg.ConfigResourceTypeGroupConfig, "kd-cb-g", "consumer.session.timeout.ms"))
}

func caseConfigsAlter(r *run) {
	const topic = "kd-ca"
	r.createTopic(topic, 1)
	inc := func(name, res string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName, rr.Configs = kmsg.ConfigResourceTypeTopic, res, ops
		req.Resources = append(req.Resources, rr)
		r.do(name, req)
	}
	op := func(name string, op kmsg.IncrementalAlterConfigOp, v *string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = name, op, v
		return c
	}
	inc("set retention.ms", topic, op("retention.ms", kmsg.IncrementalAlterConfigOpSet, str("5000")))
	r.awaitConfig(topic, "retention.ms", "5000")
	inc("set invalid value", topic, op("retention.ms", kmsg.IncrementalAlterConfigOpSet, str("soon")))
	inc("set unknown key", topic, op("no.such.key", kmsg.IncrementalAlterConfigOpSet, str("1")))
	inc("append to cleanup.policy", topic, op("cleanup.policy", kmsg.IncrementalAlterConfigOpAppend, str("compact")))
	r.awaitConfig(topic, "cleanup.policy", "delete,compact")
	inc("append to a non-list", topic, op("retention.ms", kmsg.IncrementalAlterConfigOpAppend, str("1")))
	inc("missing topic", "kd-ca-missing", op("retention.ms", kmsg.IncrementalAlterConfigOpSet, str("5000")))
	legacy := kmsg.NewPtrAlterConfigsRequest()
	lr := kmsg.NewAlterConfigsRequestResource()
	lr.ResourceType, lr.ResourceName = kmsg.ConfigResourceTypeTopic, "kd-ca-missing"
	lc := kmsg.NewAlterConfigsRequestResourceConfig()
	lc.Name, lc.Value = "retention.ms", str("5000")
	lr.Configs = append(lr.Configs, lc)
	legacy.Resources = append(legacy.Resources, lr)
	r.do("legacy AlterConfigs of a missing topic", legacy)
	r.do("describe after", describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, "retention.ms", "cleanup.policy"))
	inc("delete retention.ms", topic, op("retention.ms", kmsg.IncrementalAlterConfigOpDelete, nil))
	r.awaitConfig(topic, "retention.ms", "604800000")
	r.do("describe after delete", describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, "retention.ms"))
}

func caseACLsDisabled(r *run) {
	da := kmsg.NewPtrDescribeACLsRequest()
	da.ResourceType, da.ResourcePatternType, da.Operation, da.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	r.do("describe acls without an authorizer", da)
	ca := kmsg.NewPtrCreateACLsRequest()
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "kd-acl", kmsg.ACLResourcePatternTypeLiteral
	c.Principal, c.Host, c.Operation, c.PermissionType = "User:alice", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
	ca.Creations = append(ca.Creations, c)
	r.do("create acls without an authorizer", ca)
	dl := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	dl.Filters = append(dl.Filters, f)
	r.do("delete acls without an authorizer", dl)
	sh := kmsg.NewPtrSASLHandshakeRequest()
	sh.Mechanism = "PLAIN"
	r.do("sasl handshake on a plaintext listener", sh)
	dsc := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	r.do("describe scram credentials", dsc)
}

// frame is a request frame body: header v1 (key, version, correlation id,
// client id) followed by body.
func frame(key, version int16, body []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, 1)
	b = binary.BigEndian.AppendUint16(b, 2)
	b = append(b, "kd"...)
	return append(b, body...)
}

func caseBadInput(r *run) {
	r.createTopic("kd-bad", 1)
	r.raw("unknown api key 999", frame(999, 0, nil))
	r.raw("metadata v99", frame(3, 99, nil))
	r.raw("produce v2 (below the minimum)", frame(0, 2, nil))
	r.raw("truncated metadata v1", frame(3, 1, []byte{0, 0, 0, 5}))
	r.raw("negative array length metadata v4", frame(3, 4, []byte{0xff, 0xff, 0xff, 0xfe, 1}))
	r.doV("metadata after bad frames", 4, metadataReq(false, "kd-bad"))
	fr := fetchReq("kd-bad", -1, 0, 1<<20, 1<<20, 0)
	r.fetch("fetch negative partition", 12, fr)
	r.do("produce negative partition", produceReq("kd-bad", -1, -1, nil, Batch{Records: Recs("a", 1)}.Bytes()))
	r.listOffsets("list offsets negative partition", -1, "kd-bad", -1, -1, 0)
	r.fetch("fetch isolation level 7", 12, fetchReq("kd-bad", 0, 0, 1<<20, 1<<20, 7))
}

// awaitConfig waits (unrecorded) until topic's config key reads value:
// Kafka applies an accepted change to its brokers' view a moment after
// answering.
func (r *run) awaitConfig(topic, key, value string) {
	r.await(key+" = "+value, describeConfigsReq(kmsg.ConfigResourceTypeTopic, topic, key), func(resp kmsg.Response) bool {
		rs := resp.(*kmsg.DescribeConfigsResponse).Resources
		return len(rs) == 1 && len(rs[0].Configs) == 1 && rs[0].Configs[0].Value != nil && *rs[0].Configs[0].Value == value
	})
}

// nodeFilter names the broker resource, which each side names by its own
// node id, <node> in paths and values.
func (r *run) nodeFilter() func(map[string]string) {
	id := itoa(int(r.side.nodeID))
	return func(flat map[string]string) {
		for p, v := range flat {
			q := strings.ReplaceAll(p, "[ResourceName="+id+"]", "[ResourceName=<node>]")
			if strings.HasSuffix(q, ".ResourceName") && v == id {
				v = "<node>"
			}
			if q != p || v != flat[p] {
				delete(flat, p)
				flat[q] = v
			}
		}
	}
}
