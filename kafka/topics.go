package kafka

import (
	"fmt"

	"github.com/kgateway/kgateway/resolver"
)

// maxTopicName is Kafka's limit (249: room for a partition suffix in a
// 255-byte file name).
const maxTopicName = 249

// validTopicName reports whether name is a legal Kafka topic name:
// 1–249 characters of [a-zA-Z0-9._-], not "." or "..".
func validTopicName(name string) bool {
	if name == "" || len(name) > maxTopicName || name == "." || name == ".." {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// partitionOf checks that topic has partition, auto-creating the topic
// when create is set and the resolver's auto.create.topics.enable allows
// it, and returns the topic's partition count. It runs for every partition
// of every produce and fetch, so it copies nothing (resolver.Partitions,
// not Topic with its configs).
// An internal topic has internalPartitions empty partitions to read, and
// none to write (internal_topics.go).
func (s *Server) partitionOf(topic string, partition int32, create bool) (int32, error) {
	var cat Catalog
	if create {
		cat = s.catalog()
	}
	return s.partitionIn(cat, topic, partition)
}

// partitionIn is partitionOf auto-creating through cat (nil: never), the
// catalog of the request's principal (catalogAs), which a topic it
// creates counts against.
func (s *Server) partitionIn(cat Catalog, topic string, partition int32) (int32, error) {
	create := cat != nil
	if resolver.IsInternalTopic(topic) {
		return internalPartitionOf(topic, partition, create)
	}
	if !validTopicName(topic) {
		return 0, fmt.Errorf("%w: %q", resolver.ErrInvalidTopic, topic)
	}
	n, ok := s.res.Partitions(topic)
	if !ok && !create {
		return 0, resolver.ErrUnknownTopic
	}
	if !ok {
		t, err := cat.EnsureTopic(topic) // Topic changes through the catalog
		if err != nil {
			return 0, err
		}
		n = t.Partitions
	}
	if partition < 0 || partition >= n {
		return 0, fmt.Errorf("%w: %s partition %d", resolver.ErrUnknownTopic, topic, partition)
	}
	return n, nil
}
