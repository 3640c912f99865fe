package share

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kgateway/kgateway/topicconfig"
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
	// The dead-letter queue configs (KIP-1191, dlq.go): the DLQ topic
	// ("" or unset: none) and whether its records copy the original key
	// and value (else they carry the context headers only).
	ConfigDLQTopic      = "errors.deadletterqueue.topic.name"
	ConfigDLQCopyRecord = "errors.deadletterqueue.copy.record.enable"
)

// share.isolation.level's values.
const (
	isolationUncommitted = "read_uncommitted"
	isolationCommitted   = "read_committed"
)

// Kafka's consumer-group configs of the GROUP resource (KIP-848): a
// group's own session timeout and heartbeat interval, which the group
// coordinator reads through kafka/ (group.Config.GroupConfig). They are
// kept here with the share-group configs: one store of group configs.
const (
	ConfigConsumerSessionTimeout    = "consumer.session.timeout.ms"
	ConfigConsumerHeartbeatInterval = "consumer.heartbeat.interval.ms"
)

// ConsumerConfig are the broker's consumer-group settings the consumer
// group configs default to and are bounded by
// (group.consumer.*.session.timeout.ms, group.consumer.*.heartbeat.interval.ms);
// kafka/ converts them from the group coordinator's
// (group.ConsumerTimeouts, the same fields).
type ConsumerConfig struct {
	Session, MinSession, MaxSession       time.Duration
	Heartbeat, MinHeartbeat, MaxHeartbeat time.Duration
}

// groupConfig is one GROUP config: its type and broker default.
type groupConfigSpec struct {
	name string
	typ  topicconfig.Type
	def  string
	// own: no broker config is its default (the DLQ configs): the
	// default's synonym is the config itself.
	own bool
}

func (c *Coordinator) groupConfigSpecs() []groupConfigSpec {
	return []groupConfigSpec{
		{ConfigConsumerHeartbeatInterval, topicconfig.TypeInt, millis(c.cfg.Consumer.Heartbeat), false},
		{ConfigConsumerSessionTimeout, topicconfig.TypeInt, millis(c.cfg.Consumer.Session), false},
		{ConfigDLQCopyRecord, topicconfig.TypeBoolean, "false", true},
		{ConfigDLQTopic, topicconfig.TypeString, "", true},
		{ConfigAutoOffsetReset, topicconfig.TypeString, "latest", false},
		{ConfigHeartbeatInterval, topicconfig.TypeInt, millis(c.cfg.HeartbeatInterval), false},
		{ConfigIsolationLevel, topicconfig.TypeString, "read_uncommitted", false},
		{ConfigRecordLockDuration, topicconfig.TypeInt, millis(c.cfg.RecordLockDuration), false},
		{ConfigSessionTimeout, topicconfig.TypeInt, millis(c.cfg.SessionTimeout), false},
	}
}

// GroupConfigs describes the GROUP configs of id as Kafka's
// DescribeConfigs does, sorted by name: a set value is
// DYNAMIC_GROUP_CONFIG, else the broker's default (DEFAULT_CONFIG), whose
// synonym is named by the broker config (group.<name>); a group never
// configured lists every default.
func (c *Coordinator) GroupConfigs(id string) []topicconfig.Entry {
	c.mu.Lock()
	set := c.mu.configs[id]
	c.mu.Unlock()
	var out []topicconfig.Entry
	for _, sp := range c.groupConfigSpecs() {
		e := topicconfig.Entry{Name: sp.name, Type: sp.typ, Default: true}
		if v, ok := set[sp.name]; ok {
			e.Synonyms = append(e.Synonyms, topicconfig.Synonym{Name: sp.name, Value: v, Source: topicconfig.SourceDynamicGroup})
			e.Default = false
		}
		def := "group." + sp.name
		if sp.own {
			def = sp.name
		}
		e.Synonyms = append(e.Synonyms, topicconfig.Synonym{Name: def, Value: sp.def, Source: topicconfig.SourceDefault})
		e.Value, e.Source = e.Synonyms[0].Value, e.Synonyms[0].Source
		out = append(out, e)
	}
	return out
}

// GroupConfig is a dynamic config of group id, "" when unset (the
// group coordinator's consumer.* settings). It takes none of the
// coordinator's locks (it reads the published copy).
func (c *Coordinator) GroupConfig(id, name string) string {
	if set, ok := c.published.Load(id); ok {
		return set.(map[string]string)[name]
	}
	return ""
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
			if b, ok := parseBool(op.Value); ok && op.Name == ConfigDLQCopyRecord {
				next[op.Name] = strconv.FormatBool(b) // kept as Kafka keeps a BOOLEAN: true or false
			}
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
	if err := c.checkSessionExceedsHeartbeat(next); err != nil {
		return err
	}
	if validateOnly {
		return nil
	}
	if err := c.store.PutGroupConfigs(id, next); err != nil {
		return err
	}
	c.mu.configs[id] = next
	c.published.Store(id, next)
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
	case ConfigConsumerSessionTimeout:
		return c.checkBounds(name, value, c.cfg.Consumer.MinSession, c.cfg.Consumer.MaxSession)
	case ConfigConsumerHeartbeatInterval:
		return c.checkBounds(name, value, c.cfg.Consumer.MinHeartbeat, c.cfg.Consumer.MaxHeartbeat)
	case ConfigSessionTimeout, ConfigHeartbeatInterval:
		d, ok := parseMillis(value)
		return check(ok && d > 0, "a positive number of milliseconds")
	case ConfigDLQTopic:
		if strings.HasPrefix(value, "__") {
			return fmt.Errorf("%w: %s: DLQ topic name must not start with '__'", kerr.InvalidConfig, name)
		}
		return nil
	case ConfigDLQCopyRecord:
		_, ok := parseBool(value)
		return check(ok, "true or false")
	}
	return fmt.Errorf("%w: unknown group config %q", kerr.InvalidConfig, name)
}

// checkBounds checks a millisecond value against the broker's bounds
// (Kafka's GroupConfig ranges, from the broker's min and max).
func (c *Coordinator) checkBounds(name, value string, lo, hi time.Duration) error {
	if d, ok := parseMillis(value); value == "" || ok && d >= lo && d <= hi {
		return nil
	}
	return fmt.Errorf("%w: %s=%q: must be between %s and %s", kerr.InvalidConfig, name, value, millis(lo), millis(hi))
}

// checkSessionExceedsHeartbeat is Kafka's GroupConfig check of a group's
// configs as a whole: its consumer session timeout (its own, else the
// broker's) must exceed its heartbeat interval.
func (c *Coordinator) checkSessionExceedsHeartbeat(set map[string]string) error {
	eff := func(name string, def time.Duration) time.Duration {
		if d, ok := parseMillis(set[name]); ok {
			return d
		}
		return def
	}
	session, hb := eff(ConfigConsumerSessionTimeout, c.cfg.Consumer.Session), eff(ConfigConsumerHeartbeatInterval, c.cfg.Consumer.Heartbeat)
	if session <= hb {
		return fmt.Errorf("%w: %s must be greater than %s", kerr.InvalidConfig, ConfigConsumerSessionTimeout, ConfigConsumerHeartbeatInterval)
	}
	return nil
}

// parseBool reads a BOOLEAN config as Kafka's ConfigDef does: true or
// false, in any case, around blanks.
func parseBool(s string) (v, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
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
