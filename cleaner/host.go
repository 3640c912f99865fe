package cleaner

import (
	"time"

	"github.com/kgateway/kgateway/storage"
	"go.uber.org/zap"
)

// Offset is a Kafka offset, the storage layer's.
type Offset = storage.Offset

// Settings are a partition's cleanup.policy and the cleaner's topic
// configs, resolved over the broker's (resolver/configs.go).
type Settings struct {
	Compact           bool // cleanup.policy has compact: the cleaner runs (the cleanable range)
	MinDirtyRatio     float64
	MinLagMs          int64
	MaxLagMs          int64
	DeleteRetentionMs int64
	// MaxMessageBytes bounds a batch's decompressed records (the decompression bound).
	MaxMessageBytes int32
}

// Aborted is one entry of a partition's aborted-transaction index: the
// producer, the transaction's first offset and its ABORT marker's offset.
type Aborted struct {
	PID         int64
	First, Last Offset
}

// Partition is one topic-partition as the cleaner sees it. The resolver's
// partitions implement it; the cleaner compares them by identity (a
// partition is busy while a pass holds it).
type Partition interface {
	Topic() string
	Index() int32
	// Log is the partition's storage log.
	Log() storage.LogID
	// CleanSettings are the partition's settings now; an error when the
	// partition is deleted.
	CleanSettings() (Settings, error)
	// LastStable is the last stable offset under the bounds (the LSO): a
	// pass cleans nothing at or past it (the LSO bound on cleaning).
	LastStable(start, end Offset) Offset
	// AbortedBefore is the aborted-index entries whose transaction
	// starts before end.
	AbortedBefore(end Offset) []Aborted
	// ForgetAborted removes the index entries of the ABORT markers a
	// pass drops, from the read view and durably, before the pass's swap
	// (marker removal); an error when the removal is not durable.
	ForgetAborted(gone []Aborted) error
	// OpenView creates the partition's compacted view log if need be and
	// has reads see it (the view log); it returns the view's log.
	OpenView() (storage.LogID, error)
}

// Host is what the cleaner needs of the catalog.
type Host interface {
	// Partitions are every bound partition (none once closed).
	Partitions() []Partition
	// ViewPartitions are the partitions of the topics with a view on.
	ViewPartitions() []Partition
	// ViewStillOn reports that p's topic is bound with its view on.
	ViewStillOn(p Partition) bool
	// SyncViews removes the view logs of topics deleted or turned off
	// (view removal).
	SyncViews() error
	// ViewFailed reports a view pass that failed.
	ViewFailed(p Partition, err error)
}

// Options configure a Cleaner (the broker's log.cleaner.* configs).
type Options struct {
	// Threads is how many background passes run at once; none when 0 or
	// negative (Run still works).
	Threads int
	// BufferPerThread is the budget of one pass's offset map (the dedupe budget).
	BufferPerThread int64
	// IOMaxBytesPerSecond paces reads and writes of all threads (the cleaner throttle).
	IOMaxBytesPerSecond float64
	// Backoff is how long a thread that found no work sleeps.
	Backoff time.Duration
	// UnknownTopic is the error a partition returns once deleted: a pass
	// that meets it is dropped silently (the topic went meanwhile).
	UnknownTopic error
	Now          func() time.Time
	Log          *zap.Logger
}
