package kafka

// Kafka's internal topics. __consumer_offsets is where Kafka keeps group
// offsets; here they live in the offset store (offsets/), not in a log. So
// Metadata describes the topic honestly: it exists, is_internal (regex
// consumers skip it, Kafka's tools list it as internal), has its kept
// topic id, and has no partitions: there is nothing to fetch, and a client
// that reads __consumer_offsets to decode commits would get records that
// do not exist if partitions were shown. A produce to it is refused with
// INVALID_TOPIC_EXCEPTION, as Kafka refuses appends to internal topics;
// reads answer UNKNOWN_TOPIC_OR_PARTITION; it is never auto-created as an
// ordinary topic (resolver N2). __transaction_state, where Kafka keeps
// transaction state, is the same: here that state is in the offset store
// too (kafka/txn), served by DescribeTransactions and ListTransactions.

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// internalTopicErr is the error of a produce (write) or a read of an
// internal topic's partition.
func internalTopicErr(topic string, write bool) error {
	if write {
		return fmt.Errorf("%w: cannot append to internal topic %s", resolver.ErrInvalidTopic, topic)
	}
	return fmt.Errorf("%w: internal topic %s has no partitions here (group offsets and transaction state are kept in the offset store)", resolver.ErrUnknownTopic, topic)
}

// metadataInternal describes an internal topic: no partitions.
func (s *Server) metadataInternal(name string) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = &name
	mt.TopicID, _ = s.res.InternalTopicID(name)
	mt.IsInternal = true
	mt.AuthorizedOperations = authOpsNotRequested
	mt.Partitions = []kmsg.MetadataResponseTopicPartition{}
	return mt
}

// internalTopicByID finds an internal topic by its id.
func (s *Server) internalTopicByID(id [16]byte) (string, bool) {
	for _, name := range resolver.InternalTopics() {
		if tid, ok := s.res.InternalTopicID(name); ok && tid == id {
			return name, true
		}
	}
	return "", false
}
