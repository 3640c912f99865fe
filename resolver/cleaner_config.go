package resolver

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kgateway/kgateway/cleaner"
	"github.com/kgateway/kgateway/topicconfig"
)

// CleanerConfig is the log cleaner's broker configuration (Kafka's
// log.cleaner.* names). The zero value of each field means Kafka's
// default; the four topic-config defaults (min.cleanable.dirty.ratio,
// delete.retention.ms, min/max.compaction.lag.ms) are set to 0 on a topic,
// not here.
type CleanerConfig struct {
	// Threads is log.cleaner.threads (default 1): how many partitions are
	// cleaned at once. Negative: no background cleaner (RunCleaner still
	// cleans, for tests and tools).
	Threads int
	// DedupeBufferSize is log.cleaner.dedupe.buffer.size (default 128 MiB),
	// shared by the threads: each pass builds its key -> offset map in
	// DedupeBufferSize/Threads bytes and no more (the dedupe budget).
	DedupeBufferSize int64
	// IOMaxBytesPerSecond is log.cleaner.io.max.bytes.per.second (default
	// unlimited): what all cleaner threads together read and write (the cleaner throttle).
	IOMaxBytesPerSecond float64
	// Backoff is log.cleaner.backoff.ms (default 15 s): how long a thread
	// sleeps when no partition needs cleaning.
	Backoff time.Duration
	// MinCleanableRatio is log.cleaner.min.cleanable.ratio (default 0.5).
	MinCleanableRatio float64
	// DeleteRetentionMs is log.cleaner.delete.retention.ms (default 1 day).
	DeleteRetentionMs int64
	// MinCompactionLagMs is log.cleaner.min.compaction.lag.ms (default 0).
	MinCompactionLagMs int64
	// MaxCompactionLagMs is log.cleaner.max.compaction.lag.ms (default
	// MaxInt64).
	MaxCompactionLagMs int64
}

const (
	defaultCleanerThreads    = 1
	defaultDedupeBufferSize  = 128 << 20
	defaultCleanerBackoff    = 15 * time.Second
	defaultMinCleanableRatio = 0.5
	dedupeSlotBytes          = cleaner.SlotBytes
)

func (c CleanerConfig) withDefaults() CleanerConfig {
	if c.Threads == 0 {
		c.Threads = defaultCleanerThreads
	}
	if c.DedupeBufferSize == 0 {
		c.DedupeBufferSize = defaultDedupeBufferSize
	}
	if c.IOMaxBytesPerSecond == 0 {
		c.IOMaxBytesPerSecond = math.MaxFloat64
	}
	if c.Backoff == 0 {
		c.Backoff = defaultCleanerBackoff
	}
	if c.MinCleanableRatio == 0 {
		c.MinCleanableRatio = defaultMinCleanableRatio
	}
	if c.DeleteRetentionMs == 0 {
		c.DeleteRetentionMs = topicconfig.DefaultDeleteRetentionMs
	}
	if c.MaxCompactionLagMs == 0 {
		c.MaxCompactionLagMs = math.MaxInt64
	}
	return c
}

// perThreadBuffer is the dedupe memory of one cleaner thread.
func (c CleanerConfig) perThreadBuffer() int64 {
	return c.DedupeBufferSize / int64(max(c.Threads, 1))
}

// validate reports every problem of an already defaulted config, in
// Kafka's words where Kafka has them.
func (c CleanerConfig) validate() []error {
	var errs []error
	if c.DedupeBufferSize < 0 {
		errs = append(errs, fmt.Errorf("log.cleaner.dedupe.buffer.size %d must not be negative", c.DedupeBufferSize))
	}
	if per := c.perThreadBuffer(); per > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("log.cleaner.dedupe.buffer.size / log.cleaner.threads must be less than or equal to %d", math.MaxInt32))
	} else if c.DedupeBufferSize >= 0 && float64(per/dedupeSlotBytes)*0.9 < 1 {
		errs = append(errs, fmt.Errorf("log.cleaner.dedupe.buffer.size %d is too small to hold one key per cleaner thread, so cleaning would never make progress", c.DedupeBufferSize))
	}
	if !(c.IOMaxBytesPerSecond > 0) {
		errs = append(errs, fmt.Errorf("log.cleaner.io.max.bytes.per.second %v must be positive", c.IOMaxBytesPerSecond))
	}
	if c.Backoff < 0 {
		errs = append(errs, fmt.Errorf("log.cleaner.backoff.ms %d must not be negative", c.Backoff.Milliseconds()))
	}
	if c.MinCleanableRatio < 0 || c.MinCleanableRatio > 1 {
		errs = append(errs, fmt.Errorf("log.cleaner.min.cleanable.ratio %v must be between 0 and 1", c.MinCleanableRatio))
	}
	if c.DeleteRetentionMs < 0 || c.MinCompactionLagMs < 0 || c.MaxCompactionLagMs < 1 {
		errs = append(errs, fmt.Errorf("log.cleaner delete retention %d and min compaction lag %d must not be negative, max compaction lag %d must be at least 1",
			c.DeleteRetentionMs, c.MinCompactionLagMs, c.MaxCompactionLagMs))
	}
	if c.MinCompactionLagMs > c.MaxCompactionLagMs {
		errs = append(errs, fmt.Errorf("log.cleaner.min.compaction.lag.ms %d must not exceed log.cleaner.max.compaction.lag.ms %d", c.MinCompactionLagMs, c.MaxCompactionLagMs))
	}
	return errs
}

// javaDouble formats a double as Kafka (Java's Double.toString) describes
// it: 0.5, 1048576.0, 1.7976931348623157E308.
func javaDouble(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e7 {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	if math.Abs(v) >= 1e-3 && math.Abs(v) < 1e7 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strings.Replace(strconv.FormatFloat(v, 'E', -1, 64), "E+", "E", 1)
}
