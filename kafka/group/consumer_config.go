package group

import (
	"fmt"
	"slices"
	"time"
)

// Kafka's defaults and bounds of the consumer protocol's settings.
const (
	DefaultConsumerSessionTimeout       = 45 * time.Second // group.consumer.session.timeout.ms
	DefaultConsumerMinSessionTimeout    = 45 * time.Second // group.consumer.min.session.timeout.ms
	DefaultConsumerMaxSessionTimeout    = 60 * time.Second // group.consumer.max.session.timeout.ms
	DefaultConsumerHeartbeatInterval    = 5 * time.Second  // group.consumer.heartbeat.interval.ms
	DefaultConsumerMinHeartbeatInterval = 5 * time.Second  // group.consumer.min.heartbeat.interval.ms
	DefaultConsumerMaxHeartbeatInterval = 15 * time.Second // group.consumer.max.heartbeat.interval.ms
)

func (cfg Config) consumerDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.ConsumerSessionTimeout, DefaultConsumerSessionTimeout)
	def(&cfg.ConsumerMinSessionTimeout, DefaultConsumerMinSessionTimeout)
	def(&cfg.ConsumerMaxSessionTimeout, DefaultConsumerMaxSessionTimeout)
	def(&cfg.ConsumerHeartbeatInterval, DefaultConsumerHeartbeatInterval)
	def(&cfg.ConsumerMinHeartbeatInterval, DefaultConsumerMinHeartbeatInterval)
	def(&cfg.ConsumerMaxHeartbeatInterval, DefaultConsumerMaxHeartbeatInterval)
	if len(cfg.ConsumerAssignors) == 0 {
		cfg.ConsumerAssignors = DefaultConsumerAssignors
	}
	return cfg
}

// validateConsumer checks the consumer protocol's settings as Kafka does:
// each within its bounds, the heartbeat interval below the session
// timeout, and only known assignors.
func (cfg Config) validateConsumer() []error {
	var errs []error
	d := cfg.consumerDefaults()
	if d.ConsumerSessionTimeout < d.ConsumerMinSessionTimeout || d.ConsumerSessionTimeout > d.ConsumerMaxSessionTimeout {
		errs = append(errs, fmt.Errorf("group: config: group.consumer.session.timeout.ms %v must be within [%v, %v]",
			d.ConsumerSessionTimeout, d.ConsumerMinSessionTimeout, d.ConsumerMaxSessionTimeout))
	}
	if d.ConsumerHeartbeatInterval < d.ConsumerMinHeartbeatInterval || d.ConsumerHeartbeatInterval > d.ConsumerMaxHeartbeatInterval {
		errs = append(errs, fmt.Errorf("group: config: group.consumer.heartbeat.interval.ms %v must be within [%v, %v]",
			d.ConsumerHeartbeatInterval, d.ConsumerMinHeartbeatInterval, d.ConsumerMaxHeartbeatInterval))
	}
	if d.ConsumerHeartbeatInterval >= d.ConsumerSessionTimeout {
		errs = append(errs, fmt.Errorf("group: config: group.consumer.heartbeat.interval.ms %v must be below group.consumer.session.timeout.ms %v",
			d.ConsumerHeartbeatInterval, d.ConsumerSessionTimeout))
	}
	for i, a := range cfg.ConsumerAssignors {
		if !knownAssignor(a) || slices.Index(cfg.ConsumerAssignors, a) != i {
			errs = append(errs, fmt.Errorf("group: config: group.consumer.assignors: unknown or repeated assignor %q (known: uniform, range)", a))
		}
	}
	return errs
}
