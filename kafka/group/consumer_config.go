package group

import (
	"fmt"
	"slices"
	"strconv"
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

// ConsumerTimeouts are the consumer protocol's session and heartbeat
// settings with their bounds (Kafka's defaults where unset): what the
// consumer.* group configs default to and are bounded by.
type ConsumerTimeouts struct {
	Session, MinSession, MaxSession       time.Duration
	Heartbeat, MinHeartbeat, MaxHeartbeat time.Duration
}

// ConsumerTimeouts returns cfg's consumer timeouts.
func (cfg Config) ConsumerTimeouts() ConsumerTimeouts {
	d := cfg.consumerDefaults()
	return ConsumerTimeouts{d.ConsumerSessionTimeout, d.ConsumerMinSessionTimeout, d.ConsumerMaxSessionTimeout,
		d.ConsumerHeartbeatInterval, d.ConsumerMinHeartbeatInterval, d.ConsumerMaxHeartbeatInterval}
}

// groupMillis is the group's own value of a millisecond group config,
// else def.
func (c *Coordinator) groupMillis(group, name string, def time.Duration) time.Duration {
	if c.cfg.GroupConfig == nil {
		return def
	}
	if ms, err := strconv.ParseInt(c.cfg.GroupConfig(group, name), 10, 32); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return def
}

// sessionTimeout is group's consumer.session.timeout.ms, else the
// broker's group.consumer.session.timeout.ms.
func (c *Coordinator) sessionTimeout(group string) time.Duration {
	return c.groupMillis(group, "consumer.session.timeout.ms", c.cfg.ConsumerSessionTimeout)
}

// heartbeatInterval is group's consumer.heartbeat.interval.ms, else the
// broker's group.consumer.heartbeat.interval.ms.
func (c *Coordinator) heartbeatInterval(group string) time.Duration {
	return c.groupMillis(group, "consumer.heartbeat.interval.ms", c.cfg.ConsumerHeartbeatInterval)
}

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
