package topicadmin

// The checks of CreateTopics and CreatePartitions before the catalog
// acts: a name listed twice in one request is INVALID_REQUEST; a manual
// replica assignment must put every partition on this broker alone
// (INVALID_REPLICA_ASSIGNMENT), as the only replica; a null config value
// is INVALID_CONFIG; a partition count that does not grow the topic is
// INVALID_PARTITIONS in Kafka's own words.

import (
	"fmt"

	"github.com/kgateway/kgateway/kafka/config"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// worded is an error whose message is Kafka's own wording for the same
// refusal (what Kafka's tools print), while errors.Is still finds the
// sentinel that gives its code.
type worded struct {
	Sentinel error
	Msg      string
}

func (e worded) Error() string { return e.Msg }
func (e worded) Unwrap() error { return e.Sentinel }

// Repeated is the error of a topic listed more than once in a request
// whose names are counted in seen; nil if it is listed once.
func Repeated(seen map[string]int, topic string) error {
	if seen[topic] > 1 {
		return fmt.Errorf("%w: topic %q is listed more than once", kerr.InvalidRequest, topic)
	}
	return nil
}

// Create checks one CreateTopics entry and creates (or, validateOnly,
// checks) it through cat; node is this broker, every replica's.
func Create(cat config.Catalog, node int32, rt kmsg.CreateTopicsRequestTopic, validateOnly bool) (resolver.Topic, error) {
	partitions, replication := rt.NumPartitions, rt.ReplicationFactor
	if len(rt.ReplicaAssignment) > 0 {
		if partitions != -1 || replication != -1 {
			return resolver.Topic{}, fmt.Errorf("%w: replica assignment needs partitions and replication factor -1", kerr.InvalidRequest)
		}
		for _, a := range rt.ReplicaAssignment {
			if len(a.Replicas) != 1 || a.Replicas[0] != node {
				return resolver.Topic{}, fmt.Errorf("%w: partition %d must be on broker %d alone", kerr.InvalidReplicaAssignment, a.Partition, node)
			}
		}
		partitions, replication = int32(len(rt.ReplicaAssignment)), 1
	}
	configs := make(map[string]string, len(rt.Configs))
	for _, c := range rt.Configs {
		if c.Value == nil {
			return resolver.Topic{}, fmt.Errorf("%w: null value for %q", resolver.ErrInvalidConfig, c.Name)
		}
		configs[c.Name] = *c.Value
	}
	if !ValidName(rt.Topic) {
		return resolver.Topic{}, fmt.Errorf("%w: %q", resolver.ErrInvalidTopic, rt.Topic)
	}
	return cat.CreateTopic(rt.Topic, partitions, replication, configs, validateOnly)
}

// Grow checks one CreatePartitions entry of an existing, valid, not
// internal topic name and grows (or, validateOnly, checks) it through
// cat; node is this broker, every new replica's.
func Grow(cat config.Catalog, topics Topics, node int32, rt kmsg.CreatePartitionsRequestTopic, validateOnly bool) error {
	t, ok := topics.Topic(rt.Topic)
	if !ok {
		return fmt.Errorf("%w: %q", resolver.ErrUnknownTopic, rt.Topic)
	}
	// Kafka's words for a count that does not grow the topic (the catalog
	// refuses it too, under the lock that orders concurrent growth).
	switch {
	case rt.Count == t.Partitions:
		return worded{resolver.ErrInvalidPartitions, fmt.Sprintf("Topic already has %d partition(s).", t.Partitions)}
	case rt.Count < t.Partitions:
		return worded{resolver.ErrInvalidPartitions, fmt.Sprintf(
			"The topic %s currently has %d partition(s); %d would not be an increase.", rt.Topic, t.Partitions, rt.Count)}
	}
	if rt.Assignment != nil {
		if want := int(rt.Count - t.Partitions); want > 0 && len(rt.Assignment) != want {
			return fmt.Errorf("%w: %d assignments for %d new partitions", kerr.InvalidReplicaAssignment, len(rt.Assignment), want)
		}
		for _, a := range rt.Assignment {
			if len(a.Replicas) != 1 || a.Replicas[0] != node {
				return fmt.Errorf("%w: new partitions must be on broker %d alone", kerr.InvalidReplicaAssignment, node)
			}
		}
	}
	return cat.CreatePartitions(rt.Topic, rt.Count, validateOnly)
}
