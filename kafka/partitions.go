package kafka

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver"
)

// partitionOf checks that topic has partition and returns the topic's
// partition count. It never creates a topic: Produce and Fetch do not, as
// in Kafka 4 (Metadata auto-creates, asynchronously: 03_metadata.go); a
// missing topic is UNKNOWN_TOPIC_OR_PARTITION whatever its name, as Kafka
// answers. It runs for every partition of every produce and fetch, so it
// copies nothing (resolver.Partitions, not Topic with its configs).
// An internal topic has internalPartitions empty partitions to read, and
// none to write (internal_topics.go): write says which is asked.
func (s *Server) partitionOf(topic string, partition int32, write bool) (int32, error) {
	if resolver.IsInternalTopic(topic) {
		return internalPartitionOf(topic, partition, write)
	}
	n, ok := s.res.Partitions(topic)
	if !ok {
		return 0, fmt.Errorf("%w: %q", resolver.ErrUnknownTopic, topic)
	}
	if partition < 0 || partition >= n {
		return 0, fmt.Errorf("%w: %s partition %d", resolver.ErrUnknownTopic, topic, partition)
	}
	return n, nil
}
