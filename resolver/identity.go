package resolver

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"

	"github.com/kgateway/kgateway/storage"
)

// The cluster's identity, made once per data directory at the first Open
// and kept in the metadata keyspace (the durable cluster id, reserved internal topic names in doc.go):
//
//	resolver/cluster-id                cluster id, Kafka's form (below)
//	resolver/internal-topic/<name>     topic id of an internal topic
//
// Clients compare the cluster id across connections to notice that they
// reach a different cluster, so it must differ between data directories
// and survive restarts.

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

var (
	keyClusterID          = []byte("resolver/cluster-id")
	prefixInternalTopicID = []byte("resolver/internal-topic/")
)

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
func (r *Resolver) ClusterID() string { return r.clusterID }

// InternalTopicID is the topic id of an internal topic (false for any
// other name).
func (r *Resolver) InternalTopicID(name string) (TopicID, bool) {
	id, ok := r.internalIDs[name]
	return id, ok
}

// newClusterID returns a random id in Kafka's form: a version 4 UUID as
// 22 characters of unpadded base64url. Like Kafka's Uuid.randomUuid it
// never starts with '-', which a command line would take for a flag.
func newClusterID() string {
	for {
		id := newTopicID()
		s := base64.RawURLEncoding.EncodeToString(id[:])
		if s[0] != '-' {
			return s
		}
	}
}

// loadIdentity reads the cluster id and the internal topics' ids, making
// and durably storing (one synced write) whichever is missing.
func (r *Resolver) loadIdentity() error {
	var ops []storage.MetaOp
	v, err := r.store.GetMeta(keyClusterID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		r.clusterID = newClusterID()
		ops = append(ops, storage.MetaOp{Key: keyClusterID, Value: []byte(r.clusterID)})
	case err != nil:
		return storageErr("read cluster id", err)
	case len(v) == 0:
		return storageErr("read cluster id", errors.New("empty cluster id"))
	default:
		r.clusterID = string(v)
	}
	r.internalIDs = make(map[string]TopicID, len(internalTopics))
	for _, name := range internalTopics {
		key := append(append([]byte{}, prefixInternalTopicID...), name...)
		v, err := r.store.GetMeta(key)
		var id TopicID
		switch {
		case errors.Is(err, storage.ErrNotFound):
			id = newTopicID()
			ops = append(ops, storage.MetaOp{Key: key, Value: append([]byte{}, id[:]...)})
		case err != nil:
			return storageErr("read internal topic id", err)
		case len(v) != len(id):
			return storageErr("read internal topic id", fmt.Errorf("%s: %d-byte id", name, len(v)))
		default:
			copy(id[:], v)
		}
		r.internalIDs[name] = id
	}
	if len(ops) == 0 {
		return nil
	}
	if err := r.store.ApplyMeta(ops...); err != nil {
		return storageErr("persist cluster identity", err)
	}
	return nil
}
