package resolver

import (
	"context"

	"github.com/kgateway/kgateway/storage"
)

// STUB: the resolver helper replaces every body in this file.

// Resolver holds the partition bindings and serves produce and fetch.
type Resolver struct{}

// Open loads every topic binding from store.
func Open(store *storage.Store, cfg Config) (*Resolver, error) { return nil, ErrStorage }

// Close closes the managed ledgers (not the store).
func (r *Resolver) Close() error { return nil }

// CreateTopic validates and creates a topic; with validateOnly it only
// validates. replication must be -1 or 1.
func (r *Resolver) CreateTopic(name string, partitions int32, replication int16, configs map[string]string, validateOnly bool) (Topic, error) {
	return Topic{}, ErrStorage
}

// DeleteTopic removes the binding and every partition's log.
func (r *Resolver) DeleteTopic(name string) error { return ErrStorage }

// Topic looks a topic up by name; TopicByID by id.
func (r *Resolver) Topic(name string) (Topic, bool)    { return Topic{}, false }
func (r *Resolver) TopicByID(id TopicID) (Topic, bool) { return Topic{}, false }
func (r *Resolver) Topics() []Topic                    { return nil }

// EnsureTopic returns the topic, auto-creating it when the config allows
// (ErrUnknownTopic otherwise, ErrInvalidTopic for a bad name).
func (r *Resolver) EnsureTopic(name string) (Topic, error) { return Topic{}, ErrStorage }

// Produce validates one record batch and appends it durably (D1), with
// idempotent-producer checks (D4).
func (r *Resolver) Produce(topic string, partition int32, batch []byte) (ProduceResult, error) {
	return ProduceResult{}, ErrStorage
}

// Fetch reads from offset under one snapshot (S1–S4). With minOne the first
// batch is returned whole even past maxBytes (KIP-74).
func (r *Resolver) Fetch(topic string, partition int32, offset Offset, maxBytes int, iso Isolation, minOne bool) (FetchResult, error) {
	return FetchResult{}, ErrStorage
}

// Watch returns a channel closed by the next durable append to the
// partition (long-poll fetch waits on it; nothing polls).
func (r *Resolver) Watch(topic string, partition int32) (<-chan struct{}, error) {
	return nil, ErrStorage
}

// ListOffset: ts -1 latest, -2 earliest, -3 max timestamp, otherwise the
// first offset whose batch max timestamp >= ts; (-1, -1) when none.
func (r *Resolver) ListOffset(topic string, partition int32, ts int64) (off Offset, timestamp int64, err error) {
	return -1, -1, ErrStorage
}

// Bounds returns log start, high watermark and last stable offset.
func (r *Resolver) Bounds(topic string, partition int32) (logStart, hwm, lso Offset, err error) {
	return 0, 0, 0, ErrStorage
}

// InitProducerID allocates a new producer id (epoch 0), or bumps the epoch
// of an existing one when producerID >= 0 (KIP-360). Durable.
func (r *Resolver) InitProducerID(ctx context.Context, producerID int64, epoch int16) (int64, int16, error) {
	return -1, -1, ErrStorage
}
