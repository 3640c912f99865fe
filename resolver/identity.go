package resolver

import (
	"slices"

	"github.com/kgateway/kgateway/resolver/identity"
	"github.com/kgateway/kgateway/storage"
)

// The cluster's identity (the durable cluster id, reserved internal
// topic names in doc.go): the names here, the durable ids in package
// identity, loaded once by Open.

// OffsetsTopic is Kafka's internal topic of group offsets. Here it has no
// log: offsets live in the offset store, so kafka/ shows it (internal)
// with one partition that is always empty, and no client can create,
// delete or produce to it (reserved internal topic names).
const OffsetsTopic = "__consumer_offsets"

// TransactionStateTopic is Kafka's internal topic of transaction state.
// Here transactions are kept in the offset store too (kafka/txn), so it
// has no log either and is reserved like OffsetsTopic.
const TransactionStateTopic = "__transaction_state"

// internalTopics are the names reserved for Kafka's internal topics.
var internalTopics = []string{OffsetsTopic, TransactionStateTopic}

// InternalTopics returns the names of Kafka's internal topics (reserved internal topic names).
func InternalTopics() []string { return slices.Clone(internalTopics) }

// IsInternalTopic reports whether name is one of Kafka's internal topics.
func IsInternalTopic(name string) bool {
	for _, n := range internalTopics {
		if n == name {
			return true
		}
	}
	return false
}

// ClusterID is this data directory's cluster id.
func (r *Resolver) ClusterID() string { return r.id.ClusterID }

// InternalTopicID is the topic id of an internal topic (false for any
// other name).
func (r *Resolver) InternalTopicID(name string) (TopicID, bool) {
	id, ok := r.id.TopicIDs[name]
	return id, ok
}

// InternalTopicByID is the name of the internal topic with id (false for
// any other id).
func (r *Resolver) InternalTopicByID(id TopicID) (string, bool) {
	for name, tid := range r.id.TopicIDs {
		if tid == id {
			return name, true
		}
	}
	return "", false
}

// loadIdentity is identity.Load over the reserved names (one synced
// write at a data directory's first Open).
func loadIdentity(store *storage.Store) (identity.Identity, error) {
	newID := func() [16]byte { return newTopicID() }
	return identity.Load(store, internalTopics, newID, storageErr)
}
