package retention

import (
	"time"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/tier"
	"go.uber.org/zap"
)

// Offset is a Kafka offset, the storage layer's.
type Offset = storage.Offset

// Settings are a partition's retention configs, resolved over the
// broker's (resolver/configs.go).
type Settings struct {
	// Delete: cleanup.policy has delete, so retention.ms and
	// retention.bytes apply (the cleanup policy).
	Delete         bool
	RetentionMs    int64 // -1: no time limit
	RetentionBytes int64 // -1: no size limit
	// Remote is remote.storage.enable; Local its local.retention.*.
	Remote bool
	Local  tier.LocalPolicy
}

// Partition is one topic-partition as the passes see it; the resolver's
// partitions implement it.
type Partition interface {
	Topic() string
	Index() int32
	// Log is the partition's storage log.
	Log() storage.LogID
	// RetentionSettings are the partition's settings now; an error when
	// the partition is deleted.
	RetentionSettings() (Settings, error)
	// Roll seals the partition's open ledger (the expired open ledger); the ledger's own
	// error (ledger.ErrClosed, ledger.ErrFenced) when it cannot.
	Roll() error
	// TrimTo moves the log start up to bound and removes the whole
	// ledgers below it (ledgers below the log start, the log start before the files), after what must be durable first
	// (the producer-state checkpoint, transaction recovery).
	TrimTo(info storage.LogInfo, bound Offset) error
}

// Host is what the passes need of the catalog.
type Host interface {
	// Partitions are every bound partition (none once closed).
	Partitions() []Partition
}

// Options configure the passes (the broker's configs).
type Options struct {
	// CheckInterval is log.retention.check.interval.ms; negative: no
	// background retention pass (Retention.Run still works).
	CheckInterval time.Duration
	// TierInterval is remote.log.manager.task.interval.ms; negative: no
	// background tier pass.
	TierInterval time.Duration
	// UnknownTopic is the error a partition returns once deleted: a
	// pass that meets it skips the partition silently.
	UnknownTopic error
	Now          func() time.Time
	Log          *zap.Logger
}

func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}
