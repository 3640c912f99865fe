// Package topicview is how topics and partitions are shown to clients by
// Metadata, DescribeTopicPartitions, ElectLeaders and
// AlterPartitionReassignments, for a node whose
// partitions each have one replica, its leader.
//
// Rules it keeps:
//
//   - A partition with a leader shows it at its leader epoch, with the
//     leader alone as replicas and ISR (and, in DescribeTopicPartitions,
//     empty eligible and last-known ELR: no other replica is eligible).
//     One with none (a cluster partition between owners, leaders at
//     their epochs) shows leader -1, epoch -1 and no replicas; in
//     Metadata it is LEADER_NOT_AVAILABLE.
//   - A compacted view's companion topic is shown internal, as Kafka
//     marks its own derived topics, and so are the reserved internal
//     topics (__consumer_offsets, __transaction_state).
//   - Every topic is listed in name order, the internal ones included
//     (AllTopicNames).
//   - ElectLeaders answers each named partition (kafka/replicas.Elect),
//     or UNKNOWN_TOPIC_OR_PARTITION in Kafka's words; an election of all
//     partitions lists every topic with only the partitions whose
//     election was needed. AlterPartitionReassignments answers each
//     named partition as kafka/replicas.Reassign judges its target.
//   - DescribeTopicPartitions pages (kafka/paging) the topics the
//     principal may describe, then answers the named ones it may not
//     TOPIC_AUTHORIZATION_FAILED, outside the page.
//   - Metadata answers every topic, the internal ones last, or each
//     requested one once, by name or (v10+) by id; a requested topic
//     that does not exist may be auto-created meanwhile (kafka/'s
//     MetadataHost.Existing).
//
// It reads the topics and their leaders through Host (kafka/ implements
// it over the resolver and its Cluster) and may import resolver's types,
// kafka/authz's constants, kafka/paging, kafka/replicas, kafka/topicid
// and kafka/topicadmin's name check, nothing else; who may see a topic
// (authorization) and auto-creation are kafka/'s.
package topicview

import "github.com/kgateway/kgateway/resolver"

// Host is the topic catalog and its leaders as the views read them.
type Host interface {
	// Leader is the partition's leader and leader epoch; false while it
	// has none.
	Leader(topic string, partition int32) (node, epoch int32, ok bool)
	// PartitionCount is a topic's partition count, internal topics
	// included; false when it does not exist.
	PartitionCount(name string) (int32, bool)
	// Topic and Topics are the resolver's (no internal topic).
	Topic(name string) (resolver.Topic, bool)
	Topics() []resolver.Topic
	// InternalTopicID is an internal topic's kept id.
	InternalTopicID(name string) (resolver.TopicID, bool)
}
