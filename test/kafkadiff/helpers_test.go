package kafkadiff

import (
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// createTopic creates topic with parts partitions and configs (recorded
// as step "create topic"), then waits until its partitions have leaders.
func (r *run) createTopic(topic string, parts int32, configs ...string) {
	req := kmsg.NewPtrCreateTopicsRequest()
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = topic, parts, 1
	for i := 0; i+1 < len(configs); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = configs[i], kmsg.StringPtr(configs[i+1])
		t.Configs = append(t.Configs, c)
	}
	req.Topics = append(req.Topics, t)
	req.TimeoutMillis = 30000
	// Only the topic's outcome: the configs CreateTopics v5+ lists are
	// compared once, by the configs cases.
	r.filter = func(flat map[string]string) {
		for p := range flat {
			if strings.Contains(p, ".Configs[") {
				delete(flat, p)
			}
		}
	}
	r.do("create topic "+topic, req)
	r.filter = nil
	r.awaitLeaders(topic, parts)
}

// awaitLeaders waits until Metadata shows parts partitions of topic, each
// with a leader.
func (r *run) awaitLeaders(topic string, parts int32) {
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	md.Topics = append(md.Topics, mt)
	r.await("leaders of "+topic, md, func(resp kmsg.Response) bool {
		ts := resp.(*kmsg.MetadataResponse).Topics
		if len(ts) != 1 || ts[0].ErrorCode != 0 || int32(len(ts[0].Partitions)) != parts {
			return false
		}
		for _, p := range ts[0].Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				return false
			}
		}
		return true
	})
}

// produceReq builds a produce request of one batch to topic/partition.
func produceReq(topic string, part int32, acks int16, txnID *string, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis, req.TransactionID = acks, 30000, txnID
	t := kmsg.NewProduceRequestTopic()
	t.Topic = topic
	p := kmsg.NewProduceRequestTopicPartition()
	p.Partition, p.Records = part, batch
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// produce records step name: one batch to topic/partition with acks=-1.
func (r *run) produce(name, topic string, part int32, b Batch) *kmsg.ProduceResponse {
	resp, _ := r.do(name, produceReq(topic, part, -1, nil, b.Bytes())).(*kmsg.ProduceResponse)
	return resp
}

// fetchReq builds a fetch of one partition from offset.
func fetchReq(topic string, part int32, offset int64, maxBytes, partMax int32, isolation int8) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = -1, 0, 0, maxBytes
	req.IsolationLevel, req.SessionEpoch = isolation, -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic = topic
	p := kmsg.NewFetchRequestTopicPartition()
	p.Partition, p.FetchOffset, p.PartitionMaxBytes, p.CurrentLeaderEpoch, p.LogStartOffset = part, offset, partMax, -1, -1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

// fetchTopicIDs fills the topic ids a fetch of v13+ names topics by.
func (r *run) fetchTopicIDs(req *kmsg.FetchRequest) {
	for i := range req.Topics {
		req.Topics[i].TopicID = r.topicID(req.Topics[i].Topic)
	}
}

// lastNameVersion is, for each request that names topics by id from some
// version (Produce v13, OffsetCommit v10, OffsetFetch v10, TxnOffsetCommit
// v6, KIP-516), the last version that names them by name.
var lastNameVersion = map[int16]int16{0: 12, 8: 9, 9: 9, 28: 5}

// byIDs readies req when its version names topics by id but the case
// named them by name: each side's id for each name is filled in, so the
// request means on the wire what the case wrote. When a name has no id on
// this side (a missing or invalid topic: the case is about names), the
// request goes at the last version naming topics by name instead.
func (r *run) byIDs(req kmsg.Request) {
	last, ok := lastNameVersion[req.Key()]
	if !ok || req.GetVersion() <= last {
		return
	}
	var refs []topicRef
	switch q := req.(type) {
	case *kmsg.ProduceRequest:
		for i := range q.Topics {
			refs = append(refs, topicRef{&q.Topics[i].Topic, &q.Topics[i].TopicID})
		}
	case *kmsg.OffsetCommitRequest:
		for i := range q.Topics {
			refs = append(refs, topicRef{&q.Topics[i].Topic, &q.Topics[i].TopicID})
		}
	case *kmsg.TxnOffsetCommitRequest:
		for i := range q.Topics {
			refs = append(refs, topicRef{&q.Topics[i].Topic, &q.Topics[i].TopicID})
		}
	case *kmsg.OffsetFetchRequest:
		for g := range q.Groups {
			for i := range q.Groups[g].Topics {
				refs = append(refs, topicRef{&q.Groups[g].Topics[i].Topic, &q.Groups[g].Topics[i].TopicID})
			}
		}
		if len(q.Groups) == 0 && q.Topics != nil {
			req.SetVersion(last) // the one-group form (v<8) only
			return
		}
	}
	for _, ref := range refs {
		if *ref.id != [16]byte{} || *ref.name == "" {
			continue // named by id already
		}
		id := r.existingTopicID(*ref.name)
		if id == [16]byte{} {
			req.SetVersion(last)
			return
		}
		*ref.id = id
	}
}

// topicRef is one request topic's name and id fields.
type topicRef struct {
	name *string
	id   *[16]byte
}

// existingTopicID asks Metadata (unrecorded, never creating) for topic's
// id; zero when this side has no such topic.
func (r *run) existingTopicID(topic string) [16]byte {
	md := kmsg.NewPtrMetadataRequest()
	md.AllowAutoTopicCreation = false
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	md.Topics = append(md.Topics, mt)
	resp, _ := r.setup(md).(*kmsg.MetadataResponse)
	if resp == nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		return [16]byte{}
	}
	return resp.Topics[0].TopicID
}

// topicID asks Metadata (unrecorded) for topic's id.
func (r *run) topicID(topic string) [16]byte {
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	md.Topics = append(md.Topics, mt)
	resp, _ := r.setup(md).(*kmsg.MetadataResponse)
	if resp == nil || len(resp.Topics) != 1 {
		return [16]byte{}
	}
	return resp.Topics[0].TopicID
}

// fetch records step name: a fetch at version v (-1: the common one).
func (r *run) fetch(name string, v int16, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	if v < 0 {
		v = common[req.Key()]
	}
	req.SetVersion(v)
	if v >= 13 {
		r.fetchTopicIDs(req)
	}
	resp, _ := r.doV(name, -1, req).(*kmsg.FetchResponse)
	return resp
}

// listOffsets records step name: ListOffsets of topic/partition at ts.
func (r *run) listOffsets(name string, v int16, topic string, part int32, ts int64, isolation int8) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID, req.IsolationLevel = -1, isolation
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = topic
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition, p.Timestamp, p.CurrentLeaderEpoch, p.MaxNumOffsets = part, ts, -1, 1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	if v < 0 {
		v = common[req.Key()]
	}
	r.doV(name, v, req)
}

// initProducer records InitProducerId for txnID (nil: idempotent only)
// and returns the producer id and epoch (-1, -1 on error).
func (r *run) initProducer(name string, txnID *string, pid int64, epoch int16) (int64, int16) {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = txnID, 60000, pid, epoch
	resp, _ := r.do(name, req).(*kmsg.InitProducerIDResponse)
	if resp == nil || resp.ErrorCode != 0 {
		return -1, -1
	}
	return resp.ProducerID, resp.ProducerEpoch
}

// findCoordinator waits (unrecorded) until key's coordinator of type kt
// answers.
func (r *run) awaitCoordinator(kt int8, key string) {
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKeys = kt, []string{key}
	r.await("coordinator of "+key, fc, func(resp kmsg.Response) bool {
		cs := resp.(*kmsg.FindCoordinatorResponse).Coordinators
		return len(cs) == 1 && cs[0].ErrorCode == 0
	})
	if kt != 1 {
		return
	}
	// Kafka names a transaction coordinator as soon as its partition has a
	// leader, and may answer NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS
	// until it has loaded that partition: wait until it answers for key.
	dt := kmsg.NewPtrDescribeTransactionsRequest()
	dt.TransactionalIDs = []string{key}
	r.await("transaction coordinator of "+key+" loaded", dt, func(resp kmsg.Response) bool {
		s := resp.(*kmsg.DescribeTransactionsResponse).TransactionStates
		if len(s) != 1 {
			return false
		}
		switch s[0].ErrorCode {
		case kerr.NotCoordinator.Code, kerr.CoordinatorLoadInProgress.Code, kerr.CoordinatorNotAvailable.Code:
			return false
		}
		return true
	})
}

// addPartitionsV3 records a TV1 AddPartitionsToTxn (v3) of topic's
// partitions.
func (r *run) addPartitionsV3(name, txnID string, pid int64, epoch int16, topic string, parts ...int32) {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = txnID, pid, epoch
	t := kmsg.NewAddPartitionsToTxnRequestTopic()
	t.Topic, t.Partitions = topic, parts
	req.Topics = append(req.Topics, t)
	r.doV(name, 3, req)
}

// endTxn records EndTxn at version v.
func (r *run) endTxn(name string, v int16, txnID string, pid int64, epoch int16, commit bool) *kmsg.EndTxnResponse {
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = txnID, pid, epoch, commit
	resp, _ := r.doV(name, v, req).(*kmsg.EndTxnResponse)
	return resp
}

// txnBatch is a transactional batch of n records for pid/epoch from seq.
func txnBatch(prefix string, n int, pid int64, epoch int16, seq int32) Batch {
	return Batch{Records: Recs(prefix, n), ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq, Transactional: true}
}

func str(s string) *string { return &s }

// awaitReadable waits (unrecorded) until a fetch of topic/part from 0
// returns batches up to the high watermark: Kafka answers a transaction
// marker's offset in the high watermark a moment before a fetch reads the
// marker itself.
func (r *run) awaitReadable(topic string, part int32) {
	for {
		req := fetchReq(topic, part, 0, 1<<20, 1<<20, 0)
		req.SetVersion(12) // by name: no topic id to look up
		resp, err := r.send(req)
		if err == nil && readable(resp.(*kmsg.FetchResponse)) {
			return
		}
		select {
		case <-r.ctx.Done():
			r.t.Errorf("%s: waiting for %s/%d readable to its high watermark: %v", r.side.name, topic, part, r.ctx.Err())
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// readable reports whether a one-partition fetch from 0 returned whole
// batches up to the high watermark.
func readable(resp *kmsg.FetchResponse) bool {
	{
		ts := resp.Topics
		if len(ts) != 1 || len(ts[0].Partitions) != 1 {
			return false
		}
		p := ts[0].Partitions[0]
		bs := decodeBatches(p.RecordBatches)
		if len(bs) == 0 {
			return p.HighWatermark == 0
		}
		last := bs[len(bs)-1]
		return !last.Partial && last.FirstOffset+int64(last.LastOffsetDelta)+1 == p.HighWatermark
	}
}
