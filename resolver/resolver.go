package resolver

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgateway/kgateway/resolver/dynconfig"
	"github.com/kgateway/kgateway/resolver/identity"
	"github.com/kgateway/kgateway/resolver/producerid"
	"github.com/kgateway/kgateway/topicconfig"

	"go.uber.org/zap"

	"github.com/kgateway/kgateway/storage"
)

// Resolver holds the partition bindings and serves produce and fetch.
//
// Lock order: adminMu, then mu, then a partition's ckptMu, app, mu (see
// partition). the producer-id counter's lock (producerid) is independent of all of them; retention.mu is taken
// before any partition lock and never with adminMu.
type Resolver struct {
	store *storage.Store
	cfg   Config
	log   *zap.Logger
	now   func() time.Time

	// adminMu serializes catalog changes (create, delete, alter) and
	// guards nextLog. Reads of the catalog take only mu.
	adminMu sync.Mutex
	nextLog storage.LogID

	// dynBroker is the dynamic broker config layers in effect
	// (broker_dynamic.go), replaced whole under adminMu, read without
	// locks; dynConfigs keeps them in the store on a single node.
	dynBroker  atomic.Pointer[dynconfig.Layers]
	dynConfigs *dynconfig.Local

	// id is the cluster id and the internal topics' ids, set by Open and
	// never changed (the durable cluster id, reserved internal topic
	// names; package identity).
	id identity.Identity

	// mu is the catalog in memory (bindings.go): its lookups, and the
	// lock every reader of the catalog takes.
	mu bindings

	// bg tracks background checkpoints; Close waits for them.
	bg sync.WaitGroup

	// states keeps partitions' producer and transaction state beside
	// their logs (state_store.go).
	states *stateStore

	// pids is the durable producer-id counter (InitProducerID, package
	// producerid), under its own lock.
	pids *producerid.IDs

	// passes are the background retention, tiering and cleaner passes
	// (passes.go).
	passes *Passes
}

// topic is one binding. Its fields never change after it is published in
// Resolver.mu; an alter replaces the configs under Resolver.mu.
type topic struct {
	name    string
	id      TopicID
	configs map[string]string
	parts   []*partition
	creator string // Topic.Creator, persisted in the topic's record
}

func (t *topic) public() Topic {
	cfgs := make(map[string]string, len(t.configs))
	for k, v := range t.configs {
		cfgs[k] = v
	}
	return Topic{Name: t.name, ID: t.id, Partitions: int32(len(t.parts)), Configs: cfgs, Creator: t.creator}
}

// withDefaults fills the zero fields of cfg with Kafka's defaults.
func (c Config) withDefaults() Config {
	if c.NumPartitions == 0 {
		c.NumPartitions = 1
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = topicconfig.DefaultMaxMessageBytes
	}
	if c.RetentionMs == 0 {
		c.RetentionMs = topicconfig.DefaultRetentionMs
	}
	if c.RetentionBytes == 0 {
		c.RetentionBytes = topicconfig.DefaultRetentionBytes
	}
	if c.MessageTimestampType == "" {
		c.MessageTimestampType = "CreateTime"
	}
	if c.CleanupPolicy == "" {
		c.CleanupPolicy = "delete"
	}
	if c.RetentionCheckInterval == 0 {
		c.RetentionCheckInterval = defaultRetentionCheckInterval
	}
	if c.ProducerIDExpiration == 0 {
		c.ProducerIDExpiration = defaultProducerIDExpiration
	}
	if c.MaxProducers == 0 {
		c.MaxProducers = defaultMaxProducers
	}
	if c.Ledger.SegmentBytes == 0 {
		c.Ledger.SegmentBytes = topicconfig.DefaultSegmentBytes
	}
	if c.Ledger.SegmentAge == 0 {
		c.Ledger.SegmentAge = topicconfig.DefaultSegmentAge
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.LocalRetentionMs == 0 {
		c.LocalRetentionMs = -2
	}
	if c.LocalRetentionBytes == 0 {
		c.LocalRetentionBytes = -2
	}
	if c.TierInterval == 0 {
		c.TierInterval = defaultTierInterval
	}
	// Every ledger reads offloaded ledgers through the tier, whatever its
	// topic's remote.storage.enable says now.
	c.Ledger.Tier = c.Tier
	c.Cleaner = c.Cleaner.withDefaults()
	return c
}

// Validate reports every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	if c.NumPartitions < 0 {
		errs = append(errs, fmt.Errorf("num.partitions %d must be at least 1", c.NumPartitions))
	}
	if c.MaxMessageBytes < 0 {
		errs = append(errs, fmt.Errorf("message.max.bytes %d must not be negative", c.MaxMessageBytes))
	}
	if c.Ledger.SegmentBytes < 0 || c.Ledger.SegmentAge < 0 {
		errs = append(errs, errors.New("segment size and age must not be negative"))
	}
	if c.Ledger.SegmentBytes > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("log.segment.bytes %d must fit an int", c.Ledger.SegmentBytes))
	}
	if c.ProducerIDExpiration < 0 {
		errs = append(errs, fmt.Errorf("producer.id.expiration.ms %d must not be negative", c.ProducerIDExpiration.Milliseconds()))
	}
	if c.MaxProducers < 0 {
		errs = append(errs, fmt.Errorf("producers per partition %d must not be negative", c.MaxProducers))
	}
	if c.RetentionMs < -1 {
		errs = append(errs, fmt.Errorf("log.retention.ms %d must be -1 or more", c.RetentionMs))
	}
	if c.RetentionBytes < -1 {
		errs = append(errs, fmt.Errorf("log.retention.bytes %d must be -1 or more", c.RetentionBytes))
	}
	if c.MessageTimestampType != "" {
		if err := topicconfig.CheckValue("message.timestamp.type", c.MessageTimestampType); err != nil {
			errs = append(errs, fmt.Errorf("log.message.timestamp.type %q: %w", c.MessageTimestampType, err))
		}
	}
	if err := topicconfig.CheckValue("cleanup.policy", c.CleanupPolicy); c.CleanupPolicy != "" && err != nil {
		errs = append(errs, fmt.Errorf("log.cleanup.policy %q: %w", c.CleanupPolicy, err))
	}
	errs = append(errs, c.Cleaner.withDefaults().validate()...)
	return errors.Join(errs...)
}

// Open loads every topic binding from store, finishes interrupted topic
// deletions, opens each partition's managed ledger and recovers its
// producer state (checkpoint plus the few entries after it).
func Open(store *storage.Store, cfg Config) (*Resolver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	cfg = cfg.withDefaults()
	r := &Resolver{store: store, cfg: cfg, log: cfg.Logger, now: time.Now}
	if cfg.Ledger.Now != nil {
		r.now = cfg.Ledger.Now
	}
	r.states = &stateStore{store: store, log: r.log, now: r.now, background: r.background,
		limits: producerLimits{expiryMs: cfg.ProducerIDExpiration.Milliseconds(), max: cfg.MaxProducers}}
	r.mu = newBindings()
	if err := r.loadCounters(); err != nil {
		return nil, err
	}
	var err error
	if r.id, err = loadIdentity(store); err != nil {
		return nil, err
	}
	if err := r.loadBrokerConfigs(); err != nil {
		return nil, err
	}
	if err := r.finishDeletes(); err != nil {
		return nil, err
	}
	if err := r.loadTopics(); err != nil {
		r.closePartitions()
		return nil, err
	}
	if err := syncViews(r.store, &r.mu); err != nil { // View removal: views of deleted topics, or turned off
		r.closePartitions()
		return nil, err
	}
	r.passes = newPasses(r)
	r.passes.start()
	return r, nil
}

// Close checkpoints every partition's producer state and closes the
// managed ledgers (not the store). Later calls fail.
func (r *Resolver) Close() error {
	r.mu.Lock()
	if r.mu.closed {
		r.mu.Unlock()
		return nil
	}
	r.mu.closed = true
	r.mu.Unlock()
	r.passes.stop()
	r.bg.Wait()
	return r.closePartitions()
}

// background runs f in the background unless the resolver is closing
// (Close waits for it), and reports whether it does.
func (r *Resolver) background(f func()) bool {
	r.mu.RLock()
	closed := r.mu.closed
	if !closed {
		r.bg.Add(1)
	}
	r.mu.RUnlock()
	if closed {
		return false
	}
	go func() {
		defer r.bg.Done()
		f()
	}()
	return true
}

func (r *Resolver) closePartitions() error {
	r.mu.RLock()
	var parts []*partition
	for _, t := range r.mu.topics {
		parts = append(parts, t.parts...)
	}
	r.mu.RUnlock()
	var errs []error
	for _, p := range parts {
		if err := r.states.checkpoint(p); err != nil {
			errs = append(errs, err)
		}
		if err := p.close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Topic looks a topic up by name; TopicByID by id.
func (r *Resolver) Topic(name string) (Topic, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.mu.topics[name]
	if !ok {
		if t, ok := r.mu.companionLocked(name); ok {
			return companionOf(t), true // The companion topic
		}
		return Topic{}, false
	}
	return t.public(), true
}

// Partitions is the topic's partition count, false when there is no such
// topic. Unlike Topic it copies nothing: the request handlers call it for
// every partition of every request.
func (r *Resolver) Partitions(name string) (int32, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.mu.topics[name]
	if !ok {
		if t, ok = r.mu.companionLocked(name); !ok {
			return 0, false
		}
	}
	return int32(len(t.parts)), true
}

// TopicNameByID is the name and partition count of the topic with id
// (its companion's when id is a companion's), false when there is none.
// Unlike TopicByID it copies nothing: Fetch v13+ names every partition
// of every request by id.
func (r *Resolver) TopicNameByID(id TopicID) (name string, partitions int32, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.mu.byID[id]
	if ok {
		return t.name, int32(len(t.parts)), true
	}
	if t, ok := r.mu.companionByIDLocked(id); ok {
		return CompanionName(t.name), int32(len(t.parts)), true
	}
	return "", 0, false
}

func (r *Resolver) TopicByID(id TopicID) (Topic, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.mu.byID[id]
	if !ok {
		if t, ok := r.mu.companionByIDLocked(id); ok {
			return companionOf(t), true // The companion topic
		}
		return Topic{}, false
	}
	return t.public(), true
}

// Topics lists every topic, sorted by name.
func (r *Resolver) Topics() []Topic {
	r.mu.RLock()
	out := make([]Topic, 0, len(r.mu.topics))
	for _, t := range r.mu.topics {
		out = append(out, t.public())
		if topicconfig.ViewOn(t.configs) {
			out = append(out, companionOf(t)) // The companion topic
		}
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b Topic) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// storageErr wraps an error from the layers below as ErrStorage, keeping
// the cause for logs and errors.Is.
func storageErr(op string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrStorage, op, err)
}
