package topicview

import (
	"github.com/kgateway/kgateway/kafka/paging"
	"github.com/kgateway/kgateway/kafka/topicadmin"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeError is a DescribeTopicPartitions topic answered with code
// alone: no id, no partitions.
func DescribeError(name string, code int16) kmsg.DescribeTopicPartitionsResponseTopic {
	t := kmsg.NewDescribeTopicPartitionsResponseTopic()
	t.Topic, t.ErrorCode = kmsg.StringPtr(name), code
	return t
}

// Describe describes one page entry of DescribeTopicPartitions: its
// partitions as Metadata describes them; a missing topic is
// UNKNOWN_TOPIC_OR_PARTITION, or INVALID_TOPIC_EXCEPTION for an invalid
// name.
func Describe(h Host, e paging.Entry) kmsg.DescribeTopicPartitionsResponseTopic {
	if e.Missing {
		code := kerr.UnknownTopicOrPartition.Code
		if !topicadmin.ValidName(e.Topic) {
			code = kerr.InvalidTopicException.Code
		}
		return DescribeError(e.Topic, code)
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
