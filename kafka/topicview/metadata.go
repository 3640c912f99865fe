package topicview

import (
	"slices"

	"github.com/kgateway/kgateway/kafka/authz"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MetadataTopic describes an existing topic: every partition with its
// leader, which is its only replica (leaders at their epochs). A compacted
// view's companion topic (the companion topic) is internal, as Kafka marks
// its own derived topics: clients that leave internal topics out of
// pattern subscriptions (exclude.internal.topics, franz-go's regex
// consumer) do not consume it twice beside its source.
func MetadataTopic(h Host, t resolver.Topic) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	mt.Topic = &name
	mt.TopicID = t.ID
	mt.IsInternal = t.Companion
	mt.AuthorizedOperations = authz.OperationsNotRequested
	mt.Partitions = make([]kmsg.MetadataResponseTopicPartition, t.Partitions)
	for i := range mt.Partitions {
		mt.Partitions[i] = metadataPartition(h, name, int32(i))
	}
	return mt
}

// metadataPartition is one partition: its leader and leader epoch, the
// leader alone as replicas and ISR; LEADER_NOT_AVAILABLE with leader -1
// and no replicas while a cluster's partition has no owner (leaders at
// their epochs).
func metadataPartition(h Host, topic string, partition int32) kmsg.MetadataResponseTopicPartition {
	p := kmsg.NewMetadataResponseTopicPartition()
	p.Partition = partition
	node, epoch, ok := h.Leader(topic, partition)
	if !ok {
		p.ErrorCode = kerr.LeaderNotAvailable.Code
		p.Leader, p.LeaderEpoch = -1, -1
		p.Replicas, p.ISR = []int32{}, []int32{}
		return p
	}
	p.Leader, p.LeaderEpoch = node, epoch
	replicas := []int32{node}
	p.Replicas, p.ISR = replicas, replicas
	return p
}

// AllTopicNames is every topic Metadata lists, internal ones included,
// in name order.
func AllTopicNames(h Host) []string {
	var names []string
	for _, t := range h.Topics() {
		if !resolver.IsInternalTopic(t.Name) {
			names = append(names, t.Name)
		}
	}
	names = append(names, resolver.InternalTopics()...)
	slices.Sort(names)
	return names
}
