package main

import (
	"time"

	"github.com/kgateway/kgateway/server"
)

// validateLog checks the broker defaults of the topic configs: what
// server.ResolverConfig cannot tell from its zero values (0 there means
// "Kafka's default"). The resolver validates the rest (timestamp type, cleanup
// policy) through resolverConfig().Validate.
func (c Config) validateLog(bad func(prop, format string, args ...any)) []error {
	if c.LogRetentionMs == 0 || c.LogRetentionMs < -1 {
		bad("log.retention.ms", "%d must be -1 or at least 1", c.LogRetentionMs)
	}
	if c.LogRetentionBytes == 0 || c.LogRetentionBytes < -1 {
		bad("log.retention.bytes", "%d must be -1 or at least 1", c.LogRetentionBytes)
	}
	if c.LogSegmentBytes < 14 || c.LogSegmentBytes > 1<<31-1 {
		bad("log.segment.bytes", "%d out of range [14, %d]", c.LogSegmentBytes, 1<<31-1)
	}
	if c.LogRollMs < 1 {
		bad("log.roll.ms", "%d must be at least 1", c.LogRollMs)
	}
	if c.MessageMaxBytes < 1 {
		bad("message.max.bytes", "%d must be at least 1", c.MessageMaxBytes)
	}
	if c.LogRetentionCheckMs < 1 {
		bad("log.retention.check.interval.ms", "%d must be at least 1", c.LogRetentionCheckMs)
	}
	if c.LogCleanerThreads < 0 {
		bad("log.cleaner.threads", "%d must be at least 0", c.LogCleanerThreads)
	}
	if c.LogCleanerBackoffMs < 1 {
		bad("log.cleaner.backoff.ms", "%d must be at least 1", c.LogCleanerBackoffMs)
	}
	if c.LogLocalRetentionMs < -2 || c.LogLocalRetentionBytes < -2 {
		bad("log.local.retention.ms", "local retention must be -2 (retention.*), -1 (none) or at least 0")
	}
	if c.RemoteCopyThreads < 1 || c.RemoteCopyBytesPerSec < 0 {
		bad("remote.log.manager.copier.thread.pool.size", "upload threads must be at least 1 and bandwidth at least 0")
	}
	if c.RemoteLogTaskMs < 1 {
		bad("remote.log.manager.task.interval.ms", "%d must be at least 1", c.RemoteLogTaskMs)
	}
	if c.ProducerIDExpirationMs < 1 {
		bad("producer.id.expiration.ms", "%d must be at least 1", c.ProducerIDExpirationMs)
	}
	if err := c.resolverConfig().Validate(); err != nil {
		return []error{err}
	}
	return nil
}

// resolverConfig is the resolver's part of the configuration.
func (c Config) resolverConfig() server.ResolverConfig {
	return server.ResolverConfig{
		NumPartitions:          int32(c.NumPartitions),
		AutoCreate:             c.AutoCreate,
		MaxMessageBytes:        int32(c.MessageMaxBytes),
		RetentionMs:            c.LogRetentionMs,
		RetentionBytes:         c.LogRetentionBytes,
		MessageTimestampType:   c.LogTimestampType,
		CleanupPolicy:          c.LogCleanupPolicy,
		RetentionCheckInterval: time.Duration(c.LogRetentionCheckMs) * time.Millisecond,
		Cleaner:                c.cleanerConfig(),
		ProducerIDExpiration:   time.Duration(c.ProducerIDExpirationMs) * time.Millisecond,
		Ledger:                 server.LedgerConfig{SegmentBytes: c.LogSegmentBytes, SegmentAge: time.Duration(c.LogRollMs) * time.Millisecond},
		LocalRetentionMs:       c.LogLocalRetentionMs,
		LocalRetentionBytes:    c.LogLocalRetentionBytes,
		TierInterval:           time.Duration(c.RemoteLogTaskMs) * time.Millisecond,
	}
}

// cleanerConfig is the log cleaner's part of the configuration: 0 threads
// (Kafka's way to turn it off) is the resolver's negative.
func (c Config) cleanerConfig() server.CleanerConfig {
	cc := server.CleanerConfig{Threads: c.LogCleanerThreads, DedupeBufferSize: c.LogCleanerDedupeBufferSize,
		IOMaxBytesPerSecond: c.LogCleanerIOMaxBytesPerSec, Backoff: time.Duration(c.LogCleanerBackoffMs) * time.Millisecond}
	if cc.Threads == 0 {
		cc.Threads = -1
	}
	return cc
}
