package topicview

import (
	"slices"

	"github.com/kgateway/kgateway/kafka/authz"
	"github.com/kgateway/kgateway/kafka/topicadmin"
	"github.com/kgateway/kgateway/kafka/topicid"
	"github.com/kgateway/kgateway/resolver"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataTopic describes an existing topic: every partition with its
// leader, which is its only replica (leaders at their epochs). A compacted
// view's companion topic (the companion topic) is internal, as Kafka marks
// its own derived topics: clients that leave internal topics out of
// pattern subscriptions (exclude.internal.topics, franz-go's regex
// consumer) do not consume it twice beside its source.
func metadataTopic(h Host, t resolver.Topic) kmsg.MetadataResponseTopic {
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

// MetadataHost is what Metadata's topic answers read beyond Host, for one
// request.
type MetadataHost interface {
	Host
	// TopicByID and InternalTopicByID find a topic by id.
	TopicByID(id [16]byte) (resolver.Topic, bool)
	InternalTopicByID(id [16]byte) (string, bool)
	// Existing is a valid, not internal, named topic: the resolver's, or
	// why the request gets none (it may auto-create it meanwhile).
	Existing(name string) (resolver.Topic, error)
	// Code is an error's Kafka code.
	Code(err error) int16
}

// MetadataTopics answers a Metadata request's topics: null topics (v0:
// an empty list) are every topic, the internal ones last; else each
// requested one once (a topic named twice is answered once, as Kafka
// does: the decoded-request bound), by name or (v10+) by id.
func MetadataTopics(h MetadataHost, r *kmsg.MetadataRequest) []kmsg.MetadataResponseTopic {
	var out []kmsg.MetadataResponseTopic
	if r.Topics == nil || (r.Version == 0 && len(r.Topics) == 0) {
		for _, t := range h.Topics() {
			if !resolver.IsInternalTopic(t.Name) { // a binding from before reserved internal topic names
				out = append(out, metadataTopic(h, t))
			}
		}
		for _, name := range resolver.InternalTopics() {
			out = append(out, metadataInternal(h, name))
		}
		return out
	}
	type key struct {
		name   string
		byName bool
		id     [16]byte
	}
	seen := make(map[key]struct{}, min(len(r.Topics), 1024))
	for _, rt := range r.Topics {
		k := key{id: rt.TopicID}
		if !topicid.RequestedByID(&rt) {
			k = key{name: *rt.Topic, byName: true}
		}
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		out = append(out, metadataRequested(h, rt))
	}
	return out
}

// metadataRequested answers one requested topic, by name or (v10+) by id.
func metadataRequested(h MetadataHost, rt kmsg.MetadataRequestTopic) kmsg.MetadataResponseTopic {
	if topicid.RequestedByID(&rt) {
		if name, ok := h.InternalTopicByID(rt.TopicID); ok {
			return metadataInternal(h, name)
		}
		t, ok := h.TopicByID(rt.TopicID)
		if !ok {
			mt := kmsg.NewMetadataResponseTopic()
			mt.TopicID = rt.TopicID
			mt.ErrorCode = kerr.UnknownTopicID.Code
			mt.AuthorizedOperations = authz.OperationsNotRequested
			return mt
		}
		return metadataTopic(h, t)
	}
	name := *rt.Topic
	if resolver.IsInternalTopic(name) {
		return metadataInternal(h, name)
	}
	t, err := resolver.Topic{}, error(resolver.ErrInvalidTopic)
	if topicadmin.ValidName(name) {
		t, err = h.Existing(name)
	}
	if err != nil {
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic = &name
		mt.ErrorCode = h.Code(err)
		mt.AuthorizedOperations = authz.OperationsNotRequested
		return mt
	}
	return metadataTopic(h, t)
}

// metadataInternal describes an internal topic: its always-empty
// partitions, led as Host says, its kept id.
func metadataInternal(h Host, name string) kmsg.MetadataResponseTopic {
	id, _ := h.InternalTopicID(name)
	n, _ := h.PartitionCount(name)
	mt := metadataTopic(h, resolver.Topic{Name: name, ID: id, Partitions: n})
	mt.IsInternal = true
	return mt
}
