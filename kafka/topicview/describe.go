package topicview

import (
	"slices"

	"github.com/kgateway/kgateway/kafka/paging"
	"github.com/kgateway/kgateway/kafka/topicadmin"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeError is a DescribeTopicPartitions topic answered with code
// alone: no id, no partitions.
func describeError(name string, code int16) kmsg.DescribeTopicPartitionsResponseTopic {
	t := kmsg.NewDescribeTopicPartitionsResponseTopic()
	t.Topic, t.ErrorCode = kmsg.StringPtr(name), code
	return t
}

// describeEntry describes one page entry of DescribeTopicPartitions: its
// partitions as Metadata describes them; a missing topic is
// UNKNOWN_TOPIC_OR_PARTITION, or INVALID_TOPIC_EXCEPTION for an invalid
// name.
func describeEntry(h Host, e paging.Entry) kmsg.DescribeTopicPartitionsResponseTopic {
	if e.Missing {
		code := kerr.UnknownTopicOrPartition.Code
		if !topicadmin.ValidName(e.Topic) {
			code = kerr.InvalidTopicException.Code
		}
		return describeError(e.Topic, code)
	}
	t := kmsg.NewDescribeTopicPartitionsResponseTopic()
	t.Topic = kmsg.StringPtr(e.Topic)
	t.IsInternal = resolver.IsInternalTopic(e.Topic)
	if t.IsInternal {
		t.TopicID, _ = h.InternalTopicID(e.Topic)
	} else if rt, ok := h.Topic(e.Topic); ok {
		t.TopicID, t.IsInternal = rt.ID, rt.Companion // as in Metadata
	}
	t.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
	for p := e.From; p < e.To; p++ {
		t.Partitions = append(t.Partitions, describePartition(h, e.Topic, p))
	}
	return t
}

func describePartition(h Host, topic string, partition int32) kmsg.DescribeTopicPartitionsResponseTopicPartition {
	p := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
	p.Partition = partition
	p.EligibleLeaderReplicas, p.LastKnownELR = []int32{}, []int32{}
	node, epoch, ok := h.Leader(topic, partition)
	if !ok {
		p.LeaderID, p.LeaderEpoch = -1, -1
		p.Replicas, p.ISR = []int32{}, []int32{}
		return p
	}
	p.LeaderID, p.LeaderEpoch = node, epoch
	p.Replicas, p.ISR = []int32{node}, []int32{node}
	return p
}

// maxRequestPartitionSizeLimit is Kafka's max.request.partition.size.limit.
const maxRequestPartitionSizeLimit = 2000

// DescribePage answers DescribeTopicPartitions r into resp: the named
// topics (none: every topic Metadata lists) in name order, the ones the
// principal may describe (describe) cut into a page (kafka/paging) with
// their authorized operations (ops), then the named ones it may not,
// TOPIC_AUTHORIZATION_FAILED; a cursor outside the named topics, or with
// a negative partition, is INVALID_REQUEST for every named topic.
func DescribePage(h Host, r *kmsg.DescribeTopicPartitionsRequest, resp *kmsg.DescribeTopicPartitionsResponse,
	describe func(topic string) bool, ops func(topic string) int32) {
	all := len(r.Topics) == 0
	var names []string
	if all {
		names = AllTopicNames(h)
	} else {
		for _, t := range r.Topics {
			names = append(names, t.Topic)
		}
	}
	var cursor *paging.Mark
	if c := r.Cursor; c != nil {
		cursor = &paging.Mark{Topic: c.Topic, Partition: c.Partition}
		if (!all && !slices.Contains(names, c.Topic)) || c.Partition < 0 {
			for _, name := range names {
				resp.Topics = append(resp.Topics, describeError(name, kerr.InvalidRequest.Code))
			}
			return
		}
	}
	var allowed, refused []string
	for _, name := range names {
		switch {
		case cursor != nil && name < cursor.Topic:
		case describe(name):
			allowed = append(allowed, name)
		case !all:
			refused = append(refused, name)
		}
	}
	page := paging.Cut(allowed, h.PartitionCount, cursor, paging.Limit(r.ResponsePartitionLimit, maxRequestPartitionSizeLimit), all)
	for _, e := range page.Entries {
		t := describeEntry(h, e)
		t.AuthorizedOperations = ops(e.Topic)
		resp.Topics = append(resp.Topics, t)
	}
	if page.Next != nil {
		resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: page.Next.Topic, Partition: page.Next.Partition}
	}
	slices.Sort(refused)
	for _, name := range slices.Compact(refused) {
		resp.Topics = append(resp.Topics, describeError(name, kerr.TopicAuthorizationFailed.Code))
	}
}
