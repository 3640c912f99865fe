package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/resolver"
	"go.uber.org/zap"
)

// logOptions are the broker defaults of the topic configs, under Kafka's
// names (log.retention.ms -> --log-retention-ms, ...).
type logOptions struct {
	retentionMs, retentionBytes int64  // log.retention.ms, log.retention.bytes
	segmentBytes                int64  // log.segment.bytes
	rollMs                      int64  // log.roll.ms
	messageMaxBytes             int    // message.max.bytes
	timestampType               string // log.message.timestamp.type
	cleanupPolicy               string // log.cleanup.policy
	retentionCheckMs            int64  // log.retention.check.interval.ms
}

func (l *logOptions) register(fs *flag.FlagSet) {
	fs.Int64Var(&l.retentionMs, "log-retention-ms", 7*24*3600*1000, "default retention.ms of topics; -1 keeps data forever (log.retention.ms)")
	fs.Int64Var(&l.retentionBytes, "log-retention-bytes", -1, "default retention.bytes per partition; -1 is no limit (log.retention.bytes)")
	fs.Int64Var(&l.segmentBytes, "log-segment-bytes", 1<<30, "default segment.bytes: roll a ledger at this size (log.segment.bytes)")
	fs.Int64Var(&l.rollMs, "log-roll-ms", 7*24*3600*1000, "default segment.ms: roll a ledger at this age (log.roll.ms)")
	fs.IntVar(&l.messageMaxBytes, "message-max-bytes", 1048588, "default max.message.bytes: largest record batch (message.max.bytes)")
	fs.StringVar(&l.timestampType, "log-message-timestamp-type", "CreateTime", "default message.timestamp.type: CreateTime or LogAppendTime (log.message.timestamp.type)")
	fs.StringVar(&l.cleanupPolicy, "log-cleanup-policy", "delete", "default cleanup.policy; only delete (log.cleanup.policy)")
	fs.Int64Var(&l.retentionCheckMs, "log-retention-check-interval-ms", 300000, "how often the retention pass runs (log.retention.check.interval.ms)")
}

// validate checks what resolver.Config cannot tell from its zero values
// (0 there means "Kafka's default").
func (l logOptions) validate() error {
	var errs []error
	if l.retentionMs == 0 || l.retentionMs < -1 {
		errs = append(errs, fmt.Errorf("--log-retention-ms %d must be -1 or at least 1", l.retentionMs))
	}
	if l.retentionBytes == 0 || l.retentionBytes < -1 {
		errs = append(errs, fmt.Errorf("--log-retention-bytes %d must be -1 or at least 1", l.retentionBytes))
	}
	if l.segmentBytes < 14 || l.segmentBytes > 1<<31-1 {
		errs = append(errs, fmt.Errorf("--log-segment-bytes %d out of range [14, %d]", l.segmentBytes, 1<<31-1))
	}
	if l.rollMs < 1 || l.messageMaxBytes < 1 || l.retentionCheckMs < 1 {
		errs = append(errs, errors.New("--log-roll-ms, --message-max-bytes and --log-retention-check-interval-ms must be at least 1"))
	}
	return errors.Join(errs...)
}

// resolverConfig is the resolver's part of the flags; the resolver
// validates the rest (timestamp type, cleanup policy) at Open.
func (o options) resolverConfig(log *zap.Logger) resolver.Config {
	l := o.logs
	return resolver.Config{
		NumPartitions:          int32(o.numPartitions),
		AutoCreate:             o.autoCreate,
		MaxMessageBytes:        int32(l.messageMaxBytes),
		RetentionMs:            l.retentionMs,
		RetentionBytes:         l.retentionBytes,
		MessageTimestampType:   l.timestampType,
		CleanupPolicy:          l.cleanupPolicy,
		RetentionCheckInterval: time.Duration(l.retentionCheckMs) * time.Millisecond,
		Ledger:                 ledger.Config{SegmentBytes: l.segmentBytes, SegmentAge: time.Duration(l.rollMs) * time.Millisecond},
		Logger:                 log,
	}
}
