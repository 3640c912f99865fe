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

// partitionOf resolves topic and partition, auto-creating the topic when
// create is set (a produce) and the resolver's auto.create.topics.enable
// allows it. Internal topics have no partition to read or write here.
func (s *Server) partitionOf(topic string, partition int32, create bool) (resolver.Topic, error) {
	if resolver.IsInternalTopic(topic) {
		return resolver.Topic{}, internalTopicErr(topic, create)
	}
	if !validTopicName(topic) {
		return resolver.Topic{}, fmt.Errorf("%w: %q", resolver.ErrInvalidTopic, topic)
	}
	var t resolver.Topic
	if create {
		var err error
		if t, err = s.res.EnsureTopic(topic); err != nil {
			return resolver.Topic{}, err
		}
	} else {
		var ok bool
		if t, ok = s.res.Topic(topic); !ok {
			return resolver.Topic{}, resolver.ErrUnknownTopic
		}
	}
	if partition < 0 || partition >= t.Partitions {
		return resolver.Topic{}, fmt.Errorf("%w: %s partition %d", resolver.ErrUnknownTopic, topic, partition)
	}
	return t, nil
}
