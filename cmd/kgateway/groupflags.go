package main

import (
	"time"

	"github.com/kgateway/kgateway/kafka/group"
)

// validateGroup checks the consumer group protocol's settings (KIP-848)
// with the coordinator's own rules: Kafka's bounds (the session timeout
// and heartbeat interval within their min and max settings, by default
// [45000, 60000] and [5000, 15000] ms, the interval below the session
// timeout) and known assignors.
func (c Config) validateGroup(bad func(prop, format string, args ...any)) []error {
	if c.GroupMaxSize < 1 {
		bad("group.max.size", "%d must be at least 1", c.GroupMaxSize)
	}
	if c.GroupMinSessionTimeoutMs < 1 || c.GroupMaxSessionTimeoutMs < c.GroupMinSessionTimeoutMs {
		bad("group.min.session.timeout.ms", "%d must be at least 1 and at most group.max.session.timeout.ms %d",
			c.GroupMinSessionTimeoutMs, c.GroupMaxSessionTimeoutMs)
	}
	if c.OffsetsRetentionMinutes < 1 {
		bad("offsets.retention.minutes", "%d must be at least 1", c.OffsetsRetentionMinutes)
	}
	if err := c.groupConfig().Validate(); err != nil {
		bad("group.consumer.*, group.streams.*", "%v", err)
	}
	return nil
}

// groupConfig maps the settings onto the coordinator's.
func (c Config) groupConfig() group.Config {
	ms := func(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
	return group.Config{
		InitialRebalanceDelay: ms(c.GroupInitialRebalanceDelayMs),
		MaxGroupSize:          c.GroupMaxSize,
		MinSessionTimeout:     ms(c.GroupMinSessionTimeoutMs),
		MaxSessionTimeout:     ms(c.GroupMaxSessionTimeoutMs),

		ConsumerSessionTimeout:    ms(c.GroupConsumerSessionTimeoutMs),
		ConsumerHeartbeatInterval: ms(c.GroupConsumerHeartbeatIntervalMs),
		ConsumerAssignors:         splitList(c.GroupConsumerAssignors),
		ConsumerMigrationPolicy:   c.GroupConsumerMigrationPolicy,

		ConsumerMinSessionTimeout:    ms(c.GroupConsumerMinSessionTimeoutMs),
		ConsumerMaxSessionTimeout:    ms(c.GroupConsumerMaxSessionTimeoutMs),
		ConsumerMinHeartbeatInterval: ms(c.GroupConsumerMinHeartbeatIntervalMs),
		ConsumerMaxHeartbeatInterval: ms(c.GroupConsumerMaxHeartbeatIntervalMs),

		StreamsSessionTimeout:        ms(c.GroupStreamsSessionTimeoutMs),
		StreamsHeartbeatInterval:     ms(c.GroupStreamsHeartbeatIntervalMs),
		StreamsNumStandby:            c.GroupStreamsNumStandbyReplicas,
		StreamsInitialRebalanceDelay: ms(c.GroupStreamsInitialRebalanceDelayMs),
	}
}
