package share

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The share-group configs of the GROUP config resource (Kafka's
// GroupConfig), set with IncrementalAlterConfigs and kept durably in the
// offset store.
const (
	ConfigAutoOffsetReset    = "share.auto.offset.reset"
	ConfigRecordLockDuration = "share.record.lock.duration.ms"
	ConfigSessionTimeout     = "share.session.timeout.ms"
	ConfigHeartbeatInterval  = "share.heartbeat.interval.ms"
	ConfigIsolationLevel     = "share.isolation.level"
)

// share.isolation.level's values.
const (
	isolationUncommitted = "read_uncommitted"
	isolationCommitted   = "read_committed"
)

// GroupConfigEntry is one group config as DescribeConfigs reports it.
type GroupConfigEntry struct {
	Name, Value string
	IsDefault   bool
	Type        int8 // kmsg.ConfigType
}

// Config types as in DescribeConfigs (kmsg.ConfigType).
const (
	typeInt    int8 = 3
	typeString int8 = 2
)

// GroupConfigs lists the group configs of id: set values, else defaults.
func (c *Coordinator) GroupConfigs(id string) []GroupConfigEntry {
	c.mu.Lock()
	set := c.mu.configs[id]
	c.mu.Unlock()
	defaults := []GroupConfigEntry{
		{Name: ConfigAutoOffsetReset, Value: "latest", Type: typeString},
		{Name: ConfigHeartbeatInterval, Value: millis(c.cfg.HeartbeatInterval), Type: typeInt},
		{Name: ConfigIsolationLevel, Value: "read_uncommitted", Type: typeString},
		{Name: ConfigRecordLockDuration, Value: millis(c.cfg.RecordLockDuration), Type: typeInt},
		{Name: ConfigSessionTimeout, Value: millis(c.cfg.SessionTimeout), Type: typeInt},
	}
	for i := range defaults {
		if v, ok := set[defaults[i].Name]; ok {
			defaults[i].Value = v
		} else {
			defaults[i].IsDefault = true
		}
	}
	return defaults
}

// ConfigOp is one IncrementalAlterConfigs operation (set 0, delete 1).
type ConfigOp struct {
	Name  string
	Op    int8
	Value string
}

// AlterGroupConfigs applies ops to the configs of group id, durably
// unless validateOnly. Append and subtract (list configs) do not apply.
func (c *Coordinator) AlterGroupConfigs(id string, ops []ConfigOp, validateOnly bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[string]string, len(c.mu.configs[id])+len(ops))
	for k, v := range c.mu.configs[id] {
		next[k] = v
	}
	for _, op := range ops {
		switch op.Op {
		case 0:
			if err := c.checkConfig(op.Name, op.Value); err != nil {
				return err
			}
			next[op.Name] = op.Value
		case 1:
			if err := c.checkConfig(op.Name, ""); err != nil && op.Name != "" {
				if _, known := next[op.Name]; !known {
					return err
				}
			}
			delete(next, op.Name)
		default:
			return fmt.Errorf("%w: %q is not a list config", kerr.InvalidConfig, op.Name)
		}
	}
	if validateOnly {
		return nil
	}
	if err := c.store.PutGroupConfigs(id, next); err != nil {
		return err
	}
	c.mu.configs[id] = next
	return nil
}

// checkConfig validates one value ("" only checks the name).
func (c *Coordinator) checkConfig(name, value string) error {
	check := func(ok bool, want string) error {
		if value == "" || ok {
			return nil
		}
		return fmt.Errorf("%w: %s=%q: %s", kerr.InvalidConfig, name, value, want)
	}
	switch name {
	case ConfigAutoOffsetReset:
		return check(value == "latest" || value == "earliest", "latest or earliest")
	case ConfigIsolationLevel:
		return check(value == isolationUncommitted || value == isolationCommitted, "read_uncommitted or read_committed")
	case ConfigRecordLockDuration:
		d, ok := parseMillis(value)
		return check(ok && d >= c.cfg.MinRecordLockDuration && d <= c.cfg.MaxRecordLockDuration,
			fmt.Sprintf("between %s and %s", millis(c.cfg.MinRecordLockDuration), millis(c.cfg.MaxRecordLockDuration)))
	case ConfigSessionTimeout, ConfigHeartbeatInterval:
		d, ok := parseMillis(value)
		return check(ok && d > 0, "a positive number of milliseconds")
	}
	return fmt.Errorf("%w: unknown group config %q", kerr.InvalidConfig, name)
}

func millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func parseInt(s string) (int64, bool) {
	v, err := strconv.ParseInt(s, 10, 32)
	return v, err == nil && v > 0
}

func parseMillis(s string) (time.Duration, bool) {
	v, ok := parseInt(s)
	return time.Duration(v) * time.Millisecond, ok
}

// ConfiguredGroups lists, sorted, the groups with a config set
// (ListConfigResources' GROUP resources).
func (c *Coordinator) ConfiguredGroups() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for id, set := range c.mu.configs {
		if len(set) > 0 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
