package test

import (
	"net"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

func createTopicsReq(validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.ValidateOnly, req.Topics, req.TimeoutMillis = validateOnly, topics, 10_000
	return req
}

func topicReq(name string, partitions int32, replication int16, configs map[string]string) kmsg.CreateTopicsRequestTopic {
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, partitions, replication
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, &v
		rt.Configs = append(rt.Configs, c)
	}
	return rt
}

// CreateTopics validates every topic on its own and answers per topic with
// a message; validate_only creates nothing.
func TestCreateTopicsValidation(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{numPartitions: 3})
	cl := g.client()
	resp := request[*kmsg.CreateTopicsResponse](t, cl, createTopicsReq(false,
		topicReq("ok", 2, 1, map[string]string{"retention.ms": "1000"}),
		topicReq("default-parts", -1, -1, nil),
		topicReq("bad/name", 1, 1, nil),
		topicReq("zero", 0, 1, nil),
		topicReq("rf3", 1, 3, nil),
		topicReq("badcfg", 1, 1, map[string]string{"retention.ms": "soon"}),
		topicReq("dup", 1, 1, nil), topicReq("dup", 1, 1, nil),
	))
	want := map[string]int16{
		"ok": 0, "default-parts": 0, "bad/name": kerr.InvalidTopicException.Code,
		"zero": kerr.InvalidPartitions.Code, "rf3": kerr.InvalidReplicationFactor.Code,
		"badcfg": kerr.InvalidConfig.Code, "dup": kerr.InvalidRequest.Code,
	}
	for _, rt := range resp.Topics {
		if rt.ErrorCode != want[rt.Topic] {
			t.Errorf("%s: error %d, want %d", rt.Topic, rt.ErrorCode, want[rt.Topic])
		}
		if rt.ErrorCode != 0 && (rt.ErrorMessage == nil || *rt.ErrorMessage == "") {
			t.Errorf("%s: no error message", rt.Topic)
		}
		if rt.Topic == "default-parts" && rt.NumPartitions != 3 {
			t.Errorf("default-parts: %d partitions, want num.partitions 3", rt.NumPartitions)
		}
		if rt.ErrorCode == 0 && rt.TopicID == ([16]byte{}) {
			t.Errorf("%s: no topic id", rt.Topic)
		}
	}
	again := request[*kmsg.CreateTopicsResponse](t, cl, createTopicsReq(false, topicReq("ok", 1, 1, nil)))
	if again.Topics[0].ErrorCode != kerr.TopicAlreadyExists.Code {
		t.Errorf("second create: error %d", again.Topics[0].ErrorCode)
	}
	// Kafka's words, which kafka-topics prints.
	if m := again.Topics[0].ErrorMessage; m == nil || *m != "Topic 'ok' already exists." {
		t.Errorf("second create: message %v", m)
	}
	vo := request[*kmsg.CreateTopicsResponse](t, cl, createTopicsReq(true, topicReq("only-validated", 4, 1, nil)))
	if vo.Topics[0].ErrorCode != 0 || vo.Topics[0].NumPartitions != 4 {
		t.Errorf("validate_only: %+v", vo.Topics[0])
	}
	if _, ok := g.res.Topic("only-validated"); ok {
		t.Error("validate_only created the topic")
	}
}

// DeleteTopics by name and (v6) by id; unknown ones get per-topic errors.
// CreatePartitions refuses a count that does not grow the topic with
// INVALID_PARTITIONS and Kafka's message for each case (which
// kafka-topics --alter prints); a growth still succeeds.
func TestCreatePartitionsNoIncrease(t *testing.T) {
	g := newGateway(t)
	g.createTopic("grow", 3)
	cl := g.client()
	for _, c := range []struct {
		count int32
		want  string
	}{
		{3, "Topic already has 3 partition(s)."},
		{2, "The topic grow currently has 3 partition(s); 2 would not be an increase."},
		{4, ""},
	} {
		count, want := c.count, c.want
		req := kmsg.NewPtrCreatePartitionsRequest()
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = "grow", count
		req.Topics = append(req.Topics, rt)
		got := request[*kmsg.CreatePartitionsResponse](t, cl, req).Topics[0]
		if want == "" {
			if got.ErrorCode != 0 {
				t.Errorf("grow to %d: error %d", count, got.ErrorCode)
			}
			continue
		}
		if got.ErrorCode != kerr.InvalidPartitions.Code || got.ErrorMessage == nil || *got.ErrorMessage != want {
			t.Errorf("count %d: error %d message %q, want INVALID_PARTITIONS %q", count, got.ErrorCode, deref(got.ErrorMessage), want)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestDeleteTopicsByNameAndID(t *testing.T) {
	g := newGateway(t)
	g.createTopic("by-name", 1)
	g.createTopic("by-id", 1)
	cl := g.client()
	id := topicID(t, cl, "by-id")
	req := kmsg.NewPtrDeleteTopicsRequest()
	for _, name := range []string{"by-name", "missing"} {
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic = &name
		req.Topics = append(req.Topics, rt)
	}
	byID := kmsg.NewDeleteTopicsRequestTopic()
	byID.TopicID = id
	unknownID := kmsg.NewDeleteTopicsRequestTopic()
	unknownID.TopicID = [16]byte{1, 2, 3}
	req.Topics = append(req.Topics, byID, unknownID)
	resp := request[*kmsg.DeleteTopicsResponse](t, cl, req)
	want := []int16{0, kerr.UnknownTopicOrPartition.Code, 0, kerr.UnknownTopicID.Code}
	for i, rt := range resp.Topics {
		if rt.ErrorCode != want[i] {
			t.Errorf("topic %d (%v): error %d, want %d", i, rt.Topic, rt.ErrorCode, want[i])
		}
	}
	if len(g.res.Topics()) != 0 {
		t.Errorf("topics left: %+v", g.res.Topics())
	}
}

// Metadata: the advertised address is dialable even when listening on
// 0.0.0.0; topics carry real ids; auto-creation follows the request and
// the config; names are validated.
func TestMetadata(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{listen: "0.0.0.0:0"})
	_, port, _ := net.SplitHostPort(g.addr)
	g.addr = net.JoinHostPort("127.0.0.1", port)
	g.createTopic("meta", 2)
	cl := g.client()

	req := kmsg.NewPtrMetadataRequest()
	for _, name := range []string{"meta", "not-created", "bad name"} {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = &name
		req.Topics = append(req.Topics, rt)
	}
	resp := request[*kmsg.MetadataResponse](t, cl, req)
	if len(resp.Brokers) != 1 || resp.Brokers[0].Host != "127.0.0.1" || resp.Brokers[0].NodeID != 0 || resp.ControllerID != 0 {
		t.Fatalf("brokers %+v controller %d", resp.Brokers, resp.ControllerID)
	}
	want := []int16{0, kerr.UnknownTopicOrPartition.Code, kerr.InvalidTopicException.Code}
	for i, mt := range resp.Topics {
		if mt.ErrorCode != want[i] {
			t.Errorf("topic %s: error %d, want %d", *mt.Topic, mt.ErrorCode, want[i])
		}
	}
	meta := resp.Topics[0]
	if meta.TopicID == ([16]byte{}) || len(meta.Partitions) != 2 {
		t.Fatalf("meta: %+v", meta)
	}
	for _, p := range meta.Partitions {
		if p.Leader != 0 || p.LeaderEpoch != 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 {
			t.Errorf("partition %+v", p)
		}
	}

	// By id (v10+), and auto-creation when the request allows it.
	byID := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.TopicID = meta.TopicID
	name := "created-by-metadata"
	rt2 := kmsg.NewMetadataRequestTopic()
	rt2.Topic = &name
	byID.Topics = append(byID.Topics, rt, rt2)
	byID.AllowAutoTopicCreation = true
	resp = request[*kmsg.MetadataResponse](t, cl, byID)
	if resp.Topics[0].ErrorCode != 0 || *resp.Topics[0].Topic != "meta" {
		t.Errorf("by id: %+v", resp.Topics[0])
	}
	// The request that starts an auto-creation is answered without the
	// topic, as Kafka answers; the topic appears once created.
	if resp.Topics[1].ErrorCode != kerr.UnknownTopicOrPartition.Code || len(resp.Topics[1].Partitions) != 0 {
		t.Errorf("auto-creating: %+v", resp.Topics[1])
	}
	if mt := awaitTopic(t, cl, name); mt.ErrorCode != 0 || len(mt.Partitions) != 1 {
		t.Errorf("auto-created: %+v", mt)
	}
}

func TestMetadataAutoCreateDisabled(t *testing.T) {
	g := newGatewayWith(t, gatewayOptions{noAutoCreate: true})
	req := kmsg.NewPtrMetadataRequest()
	name := "nope"
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = &name
	req.Topics, req.AllowAutoTopicCreation = append(req.Topics, rt), true
	resp := request[*kmsg.MetadataResponse](t, g.client(), req)
	if resp.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("error %d", resp.Topics[0].ErrorCode)
	}
}

// OffsetForLeaderEpoch: epoch 0 ends at the high watermark; a later epoch
// is unknown. DescribeCluster names the one broker.
func TestLeaderEpochAndDescribeCluster(t *testing.T) {
	g := newGateway(t)
	g.createTopic("epochs", 1)
	cl := g.client()
	produceRaw(t, cl, "epochs", makeBatch(batchSpec{records: 7, pid: -1, baseTime: 1}))
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = "epochs"
	for _, epoch := range []int32{0, 5} {
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.LeaderEpoch, rp.CurrentLeaderEpoch = epoch, 0
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp := request[*kmsg.OffsetForLeaderEpochResponse](t, cl, req)
	ps := resp.Topics[0].Partitions
	if ps[0].ErrorCode != 0 || ps[0].LeaderEpoch != 0 || ps[0].EndOffset != 7 {
		t.Errorf("epoch 0: %+v", ps[0])
	}
	if ps[1].LeaderEpoch != -1 || ps[1].EndOffset != -1 {
		t.Errorf("epoch 5: %+v", ps[1])
	}

	dc := request[*kmsg.DescribeClusterResponse](t, cl, kmsg.NewPtrDescribeClusterRequest())
	if dc.ErrorCode != 0 || len(dc.Brokers) != 1 || dc.Brokers[0].Host+":"+itoa(dc.Brokers[0].Port) != g.addr || dc.ClusterID == "" {
		t.Fatalf("describe cluster: %+v", dc)
	}
}

func itoa(p int32) string { return strconv.Itoa(int(p)) }

// kversionFetch11 caps Fetch at v11 (by topic name, as librdkafka 2.0
// sends it).
func kversionFetch11() *kversion.Versions {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(1, 11)
	return vs
}

// Fetch below v13 still works by name (librdkafka speaks v11), and a
// ListOffsets by timestamp finds the first record at or after it (each
// batch's records are at baseTime and baseTime+1).
func TestOlderFetchAndListOffsets(t *testing.T) {
	g := newGateway(t)
	g.createTopic("old", 1)
	cl := g.client()
	for i := int64(0); i < 3; i++ {
		produceRaw(t, cl, "old", makeBatch(batchSpec{records: 2, pid: -1, baseTime: 1000 * (i + 1)}))
	}
	old := g.client(kgo.MaxVersions(kversionFetch11()))
	req := kmsg.NewPtrFetchRequest()
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "old"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = 2, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := request[*kmsg.FetchResponse](t, old, req)
	if resp.Version != 11 {
		t.Fatalf("fetch sent at v%d", resp.Version)
	}
	p := resp.Topics[0].Partitions[0]
	if bs := batchesOf(t, p.RecordBatches); p.ErrorCode != 0 || len(bs) != 2 || bs[0].FirstOffset != 2 {
		t.Fatalf("v11 fetch: error %d, %d batches", p.ErrorCode, len(bs))
	}
	for ts, want := range map[int64]int64{-2: 0, -1: 6, 1500: 2, 1001: 1, 3002: -1, -3: 5} {
		if got := listOffset(t, cl, "old", ts); got.ErrorCode != 0 || got.Offset != want {
			t.Errorf("ListOffsets %d: offset %d error %d, want %d", ts, got.Offset, got.ErrorCode, want)
		}
	}
}
