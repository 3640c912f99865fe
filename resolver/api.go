package resolver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/bufpool"
	"github.com/kgateway/kgateway/recordbatch"
	"github.com/kgateway/kgateway/resolver/txnstate"
	"github.com/kgateway/kgateway/topicconfig"

	"go.uber.org/zap"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
)

// This file is the resolver contract that kafka/ codes against. Change a
// signature only together with its callers. kafka/ never imports the
// layers below (ledger/, storage/): what it needs of them is re-exported
// here. Every error comes back as one of the sentinel errors below, an
// error of a lower layer wrapped in ErrStorage (storageErr); kafka/errors.go
// maps the sentinels to Kafka error codes in one place.

// Offset is a Kafka offset.
type Offset = storage.Offset

// Backing describes a request frame whose slices several partitions'
// batches are (Partition.ProduceAsync): the tail cache charges the frame once,
// at its whole size, not each slice (storage C5).
type Backing = storage.Backing

// NewBacking describes a frame of size bytes.
func NewBacking(size int) *Backing { return storage.NewBacking(size) }

// NewPooledBacking describes a pooled frame (storage "Pooled frames").
func NewPooledBacking(frame *bufpool.Shared) *Backing { return storage.NewPooledBacking(frame) }

// TopicID is a topic's UUID (Metadata v10+, Fetch v13+).
type TopicID [16]byte

func (id TopicID) String() string {
	b := id[:]
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Topic is one topic binding: name, id, partition count and configs.
type Topic struct {
	Name       string
	ID         TopicID
	Partitions int32
	Configs    map[string]string // only the ones set explicitly
	// Creator is the principal whose request created the topic, for the
	// per-principal partition bound (kafka/tenancy); "" when unknown:
	// created without an authorizer, or before creators were recorded.
	Creator string
	// Companion marks the read-only companion topic of a topic's
	// compacted view (doc.go "Compacted view", the companion topic).
	Companion bool
}

// Isolation is the fetch isolation level.
type Isolation int8

const (
	ReadUncommitted Isolation = 0
	ReadCommitted   Isolation = 1
)

// Sentinel errors (each maps to one Kafka error code in kafka/errors.go).
var (
	ErrUnknownTopic          = errors.New("resolver: unknown topic or partition")
	ErrTopicExists           = errors.New("resolver: topic already exists")
	ErrInvalidTopic          = errors.New("resolver: invalid topic name")
	ErrInvalidPartitions     = errors.New("resolver: invalid partition count")
	ErrInvalidReplication    = errors.New("resolver: invalid replication factor")
	ErrInvalidConfig         = topicconfig.ErrInvalid
	ErrOffsetOutOfRange      = errors.New("resolver: offset out of range")
	ErrCorruptBatch          = recordbatch.ErrCorruptBatch
	ErrUnsupportedMagic      = recordbatch.ErrUnsupportedMagic
	ErrInvalidRecord         = recordbatch.ErrInvalidRecord
	ErrInvalidTimestamp      = topicconfig.ErrTimestamp
	ErrRecordBody            = topicconfig.ErrRecordBody // wraps ErrInvalidRecord
	ErrMessageTooLarge       = errors.New("resolver: record batch too large")
	ErrOutOfOrderSequence    = errors.New("resolver: out of order sequence number")
	ErrInvalidProducerEpoch  = txnstate.ErrInvalidProducerEpoch
	ErrUnknownProducerID     = errors.New("resolver: unknown producer id")
	ErrStorage               = errors.New("resolver: storage error")
	ErrTopicDeletionDisabled = errors.New("resolver: topic deletion disabled")
	// ErrNotLeader: this node no longer serves the partition (cluster
	// mode: the store's Replicator refused the write, storage
	// ErrNotLeader), or the partition's local copy was replaced while the
	// request was in flight (the old copy's retirement, NOT_LEADER_OR_FOLLOWER after a refused write). The client retries elsewhere.
	ErrNotLeader = errors.New("resolver: not the partition's leader")
)

// Config configures a Resolver. Names follow Kafka's broker configs; the
// topic configs of the same meaning (retention.ms, segment.bytes, ...)
// default to them. The zero value of each field means Kafka's default.
type Config struct {
	NumPartitions   int32 // num.partitions (default 1)
	AutoCreate      bool  // auto.create.topics.enable
	MaxMessageBytes int32 // message.max.bytes (default 1048588)
	// RetentionMs is log.retention.ms (default 7 days); -1 keeps data
	// forever.
	RetentionMs int64
	// RetentionBytes is log.retention.bytes per partition (default -1, no
	// limit).
	RetentionBytes int64
	// MessageTimestampType is log.message.timestamp.type: CreateTime
	// (default) or LogAppendTime.
	MessageTimestampType string
	// CleanupPolicy is log.cleanup.policy: delete (default), compact or
	// compact,delete.
	CleanupPolicy string
	// Cleaner is the log cleaner's configuration (log.cleaner.*).
	Cleaner CleanerConfig
	// RetentionCheckInterval is log.retention.check.interval.ms (default 5
	// minutes): how often the background retention pass runs. Negative
	// disables the background pass (tests call RunRetention themselves).
	RetentionCheckInterval time.Duration
	// Ledger is the default rollover policy: SegmentBytes is
	// log.segment.bytes, SegmentAge log.roll.ms. Its Now is the resolver's
	// clock too (LogAppendTime, retention).
	Ledger ledger.Config
	// ProducerIDExpiration is producer.id.expiration.ms (default 1 day):
	// the state of an idempotent producer that has not appended to a
	// partition for this long is dropped (producer expiry).
	ProducerIDExpiration time.Duration
	// MaxProducers is how many producers' state a partition keeps
	// (default 1000); beyond it the least recently appended is dropped
	// (the producer cap).
	MaxProducers int
	// Tier keeps sealed ledgers of topics with remote.storage.enable=true
	// in an object store (object.store.url; package retention). nil: local only,
	// and remote.storage.enable=true is refused.
	Tier *tier.Tier
	// LocalRetentionMs and LocalRetentionBytes are
	// log.local.retention.ms and .bytes: how much of a tiered topic stays
	// on local disk. Kafka's default, and the zero value, is -2: as
	// retention.ms and retention.bytes.
	LocalRetentionMs, LocalRetentionBytes int64
	// TierInterval is remote.log.manager.task.interval.ms (default 30
	// s): how often uploads, local removal and object deletion run.
	// Negative: never in the background (tests call RunTiering).
	TierInterval time.Duration
	Logger       *zap.Logger
	// ProducerIDs, when set, allocates every producer id InitProducerID
	// hands out to a producer without a transactional id (cluster mode: a
	// counter shared by the nodes); each comes with epoch 0 and there is
	// no local counter and no local epoch bump (shared producer ids).
	ProducerIDs func(ctx context.Context) (int64, error)
	// Diskless refuses the topic configs a node of a cluster cannot serve
	// (remote.storage.enable=true, kgateway.compacted.view.enable=true)
	// as ErrInvalidConfig, at create and at alter (no tier or view on a cache).
	Diskless bool
}

// ProduceResult is what a produce of one batch to one partition returns.
type ProduceResult struct {
	BaseOffset    Offset
	LogAppendTime int64 // -1 unless the topic uses LogAppendTime
	LogStart      Offset
	// Duplicate is set when an idempotent retry matched an already-written
	// batch (D4); BaseOffset is then the original offset.
	Duplicate bool
}

// Lease holds the pins and pooled buffers of a leased fetch (FetchLeased)
// until its batches are sent (storage "Leased reads"); FileSpan says where
// such a batch lies in its ledger file.
type (
	Lease    = storage.Lease
	FileSpan = storage.FileSpan
)

// NewLease returns an empty lease for FetchLeased; with pins the batches
// read from files name their ranges there (FetchResult.Srcs), which stay
// valid until the lease is released (storage NewLease).
func NewLease(pins bool) *Lease { return storage.NewLease(pins) }

// FetchResult is one partition's part of a fetch.
type FetchResult struct {
	HighWatermark Offset
	LastStable    Offset
	LogStart      Offset
	// Batches are whole, validated record batches, in offset order. The
	// first may start before the fetch offset (a fetch inside a batch
	// returns the whole batch); clients skip the records before it.
	Batches [][]byte
	Bytes   int // sum of len(Batches[i])
	// Srcs, for a leased fetch (FetchLeased), says where each batch lies
	// in its ledger file (Srcs[i] for Batches[i]; zero for a batch from
	// memory); nil when no batch was read from a file.
	Srcs []FileSpan
	// Aborted lists, under ReadCommitted, the aborted transactions that
	// overlap the returned batches (Kafka's AbortedTransactions), in
	// first-offset order; nil when there are none.
	Aborted []AbortedTxn
}
