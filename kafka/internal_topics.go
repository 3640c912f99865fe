package kafka

// Kafka's internal topics. __consumer_offsets is where Kafka keeps group
// offsets; __transaction_state is where it keeps transaction state. Here
// both live in the offset store (offsets/, kafka/txn), not in a log, so
// each internal topic is shown as Kafka shows it, with partitions that
// exist and are always empty (reserved internal topic names):
//
//   - Metadata lists it as internal, with its kept topic id and
//     internalPartitions partitions led by this node (replicas and ISR this
//     node, leader epoch 0).
//   - Fetch, ListOffsets and OffsetForLeaderEpoch answer as for an empty
//     partition: log start, high watermark and last stable offset 0, a
//     fetch at 0 is empty (a long poll waits out its max wait), any other
//     offset is OFFSET_OUT_OF_RANGE. Nothing is ever appended, so no
//     client decoding __consumer_offsets sees records that are not there.
//   - Produce is INVALID_TOPIC_EXCEPTION, as Kafka refuses appends to
//     internal topics; DeleteRecords and CreatePartitions are
//     INVALID_TOPIC_EXCEPTION too (Kafka refuses deleting records of an
//     internal topic; adding partitions here would add nothing); CreateTopics
//     answers TOPIC_ALREADY_EXISTS and DeleteTopics INVALID_TOPIC_EXCEPTION
//     (reserved internal topic names); it is never auto-created as an ordinary topic.
//   - DescribeConfigs shows the configs Kafka creates it with; AlterConfigs
//     and IncrementalAlterConfigs change them as any topic's, kept
//     durably (resolver/internal_configs.go), as Kafka lets an admin do;
//     they bound nothing on an always-empty topic.
//   - KIP-848 consumer groups match it by name or regex, as Kafka's broker
//     does (server-side regex subscriptions), and share groups subscribing to it by name
//     are assigned its partitions.
//
// Authorization is unchanged: these partitions are checked like any
// topic's (kafka/authz).

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver"
)

// internalPartitions is the partition count of every internal topic.
// Kafka gives __consumer_offsets offsets.topic.num.partitions (50) and
// __transaction_state transaction.state.log.num.partitions (50) to spread
// coordinators over brokers; the partition a group or transactional id
// maps to is the broker's business (clients ask FindCoordinator). Here one
// node coordinates everything and the partitions are always empty, so one
// partition is what a client needs: something to fetch, list and assign.
const internalPartitions = 1

// internalTopicConfigs are the configs Kafka creates each internal topic
// with (GroupCoordinatorService's and TransactionStateManager's topic
// configs), which DescribeConfigs reports as set on the topic, the rest
// at their defaults, as a real Kafka 4.4 broker describes them.
var internalTopicConfigs = map[string]map[string]string{
	resolver.OffsetsTopic: {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"},
	resolver.TransactionStateTopic: {"cleanup.policy": "compact", "compression.type": "uncompressed", "segment.bytes": "104857600",
		"min.insync.replicas": "1", "unclean.leader.election.enable": "false"},
}

// internalTopicErr is the error of a write (produce, delete records, new
// partitions) to an internal topic.
func internalTopicErr(topic string) error {
	return fmt.Errorf("%w: cannot write to internal topic %s (group offsets and transaction state are kept in the offset store)", resolver.ErrInvalidTopic, topic)
}

// internalPartitionOf checks partition of internal topic: writes are
// refused, reads find internalPartitions partitions.
func internalPartitionOf(topic string, partition int32, write bool) (int32, error) {
	if write {
		return 0, internalTopicErr(topic)
	}
	if partition < 0 || partition >= internalPartitions {
		return 0, fmt.Errorf("%w: %s partition %d", resolver.ErrUnknownTopic, topic, partition)
	}
	return internalPartitions, nil
}

// topicByID finds a topic by id, internal ones included: its name and
// partition count. It copies nothing (Fetch v13+ asks for every partition).
func (s *Server) topicByID(id [16]byte) (string, int32, bool) {
	if name, ok := s.res.InternalTopicByID(resolver.TopicID(id)); ok {
		return name, internalPartitions, true
	}
	return s.res.TopicNameByID(resolver.TopicID(id))
}

// The reads below are the resolver's for ordinary topics and an empty
// partition's answer for internal ones. Callers check the partition first
// (partitionOf).

// bounds is a partition's log start, high watermark and last stable
// offset.
func (s *Server) bounds(topic string, partition int32) (logStart, hwm, lso resolver.Offset, err error) {
	if resolver.IsInternalTopic(topic) {
		return 0, 0, 0, nil
	}
	return s.res.Bounds(topic, partition)
}

// readPartition is a cursorless read of a partition (resolver.Fetch).
func (s *Server) readPartition(topic string, partition int32, offset resolver.Offset, maxBytes int, minOne bool, iso resolver.Isolation, lease *resolver.Lease) (resolver.FetchResult, error) {
	if resolver.IsInternalTopic(topic) {
		if offset != 0 {
			return resolver.FetchResult{}, fmt.Errorf("%w: %s is outside the empty internal topic %s", resolver.ErrOffsetOutOfRange, offset, topic)
		}
		return resolver.FetchResult{}, nil
	}
	return s.res.FetchLeased(topic, partition, offset, maxBytes, minOne, iso, lease)
}

// listOffsetOf answers a ListOffsets timestamp (resolver.ListOffset). An
// empty partition has latest, earliest and earliest-local offset 0 and
// nothing else: no max timestamp, no tiered offset, no record at or after
// any time (-1, -1).
func (s *Server) listOffsetOf(topic string, partition int32, ts int64) (resolver.Offset, int64, error) {
	if resolver.IsInternalTopic(topic) {
		switch ts {
		case listLatest, listEarliest, listEarliestLocal:
			return 0, -1, nil
		}
		return -1, -1, nil
	}
	return s.res.ListOffset(topic, partition, ts)
}

// topicLookup resolves topics both ways for kafka/topicid, internal
// topics included.
type topicLookup struct{ s *Server }

func (l topicLookup) NameOf(id [16]byte) (string, bool) {
	name, _, ok := l.s.topicByID(id)
	return name, ok
}

func (l topicLookup) IDOf(name string) ([16]byte, bool) {
	if resolver.IsInternalTopic(name) {
		id, ok := l.s.res.InternalTopicID(name)
		return id, ok
	}
	t, ok := l.s.res.Topic(name)
	return t.ID, ok
}
