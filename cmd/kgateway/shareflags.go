package main

import (
	"time"

	"github.com/kgateway/kgateway/kafka/share"
)

// validateShare checks the share-group settings against Kafka's ranges.
func (c Config) validateShare(bad func(prop, format string, args ...any)) []error {
	in := func(prop string, v, lo, hi int64) {
		if v < lo || v > hi {
			bad(prop, "%d out of range [%d, %d]", v, lo, hi)
		}
	}
	in("group.share.record.lock.duration.ms", c.ShareRecordLockDurationMs, 1000, 3600000)
	in("group.share.delivery.count.limit", int64(c.ShareDeliveryCountLimit), 2, 10)
	in("group.share.partition.max.record.locks", int64(c.ShareMaxRecordLocks), 100, 10000)
	in("group.share.session.timeout.ms", c.ShareSessionTimeoutMs, 1, 1<<31-1)
	in("group.share.heartbeat.interval.ms", c.ShareHeartbeatIntervalMs, 1, 1<<31-1)
	in("group.share.max.size", int64(c.ShareMaxSize), 1, 1000)
	in("group.share.max.share.sessions", int64(c.ShareMaxSessions), 1, 1<<31-1)
	in("group.share.max.share.sessions.per.principal", int64(c.ShareMaxSessionsPerPrinc), 1, 1<<31-1)
	in("group.share.max.share.sessions.per.connection", int64(c.ShareMaxSessionsPerConn), 1, 1<<31-1)
	return nil
}

// shareConfig maps the settings onto the share coordinator's.
func (c Config) shareConfig() share.Config {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	return share.Config{
		RecordLockDuration:      ms(c.ShareRecordLockDurationMs),
		DeliveryCountLimit:      c.ShareDeliveryCountLimit,
		PartitionMaxRecordLocks: c.ShareMaxRecordLocks,
		SessionTimeout:          ms(c.ShareSessionTimeoutMs),
		HeartbeatInterval:       ms(c.ShareHeartbeatIntervalMs),
		MaxSize:                 c.ShareMaxSize,
		MaxShareSessions:        c.ShareMaxSessions,

		MaxShareSessionsPerPrincipal:  c.ShareMaxSessionsPerPrinc,
		MaxShareSessionsPerConnection: c.ShareMaxSessionsPerConn,
	}
}
