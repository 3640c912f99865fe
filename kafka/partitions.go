package kafka

import (
	"fmt"

	"github.com/kgateway/kgateway/kafka/produce"
	"github.com/kgateway/kgateway/kafka/topicview"
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

// partitionCount is a topic's partition count, internal topics included;
// false when it does not exist.
func (s *Server) partitionCount(name string) (int32, bool) {
	if resolver.IsInternalTopic(name) {
		return internalPartitions, true
	}
	return s.res.Partitions(name)
}

// allTopicNames is every topic Metadata lists (topicview.AllTopicNames).
func (s *Server) allTopicNames() []string { return topicview.AllTopicNames(s.view()) }

// view is the Server as kafka/topicview reads it.
func (s *Server) view() topicview.Host { return viewHost{s} }

type viewHost struct{ s *Server }

func (h viewHost) Leader(topic string, partition int32) (node, epoch int32, ok bool) {
	return h.s.leader(topic, partition)
}
func (h viewHost) PartitionCount(name string) (int32, bool) { return h.s.partitionCount(name) }
func (h viewHost) Topic(name string) (resolver.Topic, bool) { return h.s.res.Topic(name) }
func (h viewHost) Topics() []resolver.Topic                 { return h.s.res.Topics() }
func (h viewHost) InternalTopicID(n string) (resolver.TopicID, bool) {
	return h.s.res.InternalTopicID(n)
}

// endpoints finds live nodes' addresses for KIP-951 answers, asking the
// Cluster for them once, at first use.
func (s *Server) endpoints() produce.Endpoint {
	var brokers []Broker
	return func(node int32) (string, int32, *string, bool) {
		if brokers == nil {
			brokers = s.cfg.Cluster.Brokers()
		}
		b, ok := brokerByID(brokers, node)
		return b.Host, b.Port, b.Rack, ok
	}
}
