package resolver

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/storage/tier"
)

// Topic configs. Every name Kafka defines for topics that a client may
// reasonably set is accepted, validated and stored (durably, with the
// binding), so tools that set them keep working; these take effect:
//   - max.message.bytes: the largest record batch Produce accepts
//   - message.timestamp.type: LogAppendTime makes Produce stamp batches
//   - segment.bytes, segment.ms: the ledger rollover policy
//   - retention.ms, retention.bytes: the retention pass (package retention)
//   - cleanup.policy: delete (retention), compact (package cleaner)
//     or both; compact refuses keyless records (L1)
//   - min.cleanable.dirty.ratio, min.compaction.lag.ms,
//     max.compaction.lag.ms, delete.retention.ms: the cleaner (L2-L6)
//   - min.insync.replicas: 1 (one broker; a larger value could never be met)
//   - kgateway.compacted.view.enable (not Kafka's): the compacted view of a
//     delete-policy topic and its companion topic (doc.go "Compacted
//     view")
//
// The rest are stored and described but change nothing (one replica, no
// flush policy: every acknowledged append is fsync'd).
//
// A topic config that is not set takes its broker default: the broker
// config named by configSpec.broker (Config, set from flags with Kafka's
// names), else Kafka's static default.

// ConfigSource says where a described config value comes from. The values
// are Kafka's (DescribeConfigs v1+ config_source).
type ConfigSource int8

const (
	SourceTopic        ConfigSource = 1 // DYNAMIC_TOPIC_CONFIG: set on the topic
	SourceStaticBroker ConfigSource = 4 // STATIC_BROKER_CONFIG: a broker flag
	SourceDefault      ConfigSource = 5 // DEFAULT_CONFIG: Kafka's default
)

// ConfigType is a config's value type. The values are Kafka's
// (DescribeConfigs v3+ config_type).
type ConfigType int8

const (
	TypeBoolean ConfigType = 1
	TypeString  ConfigType = 2
	TypeInt     ConfigType = 3
	TypeLong    ConfigType = 5
	TypeDouble  ConfigType = 6
	TypeList    ConfigType = 7
)

// ConfigSynonym is one value a config could take, in precedence order
// (DescribeConfigs v1+ synonyms): the topic's own, the broker flag's,
// Kafka's default.
type ConfigSynonym struct {
	Name   string
	Value  string
	Source ConfigSource
}

// ConfigEntry is one config as DescribeConfigs reports it.
type ConfigEntry struct {
	Name     string
	Value    string
	Default  bool // true when not set explicitly on the topic
	Source   ConfigSource
	ReadOnly bool // broker configs are static (flags); topic configs are not
	Type     ConfigType
	Synonyms []ConfigSynonym
}

const (
	maxInt64 = math.MaxInt64
	maxLong  = "9223372036854775807"

	defaultMaxMessageBytes        = 1048588
	defaultSegmentBytes           = 1 << 30
	defaultSegmentAge             = 7 * 24 * time.Hour
	defaultRetentionMs            = int64(7 * 24 * time.Hour / time.Millisecond)
	defaultRetentionBytes         = int64(-1)
	defaultRetentionCheckInterval = 5 * time.Minute
)

// configSpec is one known topic config: Kafka's static default, the broker
// config whose value is the topic's default (empty: none), its type, and
// validation.
type configSpec struct {
	def    string
	broker string
	typ    ConfigType
	check  func(v string) error
}

func (s configSpec) list() bool { return s.typ == TypeList }

var topicConfigs = map[string]configSpec{
	"cleanup.policy":                          {"delete", "log.cleanup.policy", TypeList, checkCleanupPolicy},
	"compression.type":                        {"producer", "compression.type", TypeString, checkCompression},
	"delete.retention.ms":                     {itoa(defaultDeleteRetentionMs), "log.cleaner.delete.retention.ms", TypeLong, longAtLeast(0)},
	"file.delete.delay.ms":                    {"60000", "", TypeLong, longAtLeast(0)},
	"flush.messages":                          {maxLong, "", TypeLong, longAtLeast(1)},
	"flush.ms":                                {maxLong, "", TypeLong, longAtLeast(0)},
	"index.interval.bytes":                    {"4096", "", TypeInt, intAtLeast(0)},
	"max.compaction.lag.ms":                   {maxLong, "log.cleaner.max.compaction.lag.ms", TypeLong, longAtLeast(1)},
	"max.message.bytes":                       {strconv.Itoa(defaultMaxMessageBytes), "message.max.bytes", TypeInt, intAtLeast(0)},
	"message.downconversion.enable":           {"true", "", TypeBoolean, checkBool},
	"message.timestamp.after.max.ms":          {maxLong, "", TypeLong, longAtLeast(0)},
	"message.timestamp.before.max.ms":         {maxLong, "", TypeLong, longAtLeast(0)},
	"message.timestamp.difference.max.ms":     {maxLong, "", TypeLong, longAtLeast(0)},
	"message.timestamp.type":                  {"CreateTime", "log.message.timestamp.type", TypeString, checkTimestampType},
	"min.cleanable.dirty.ratio":               {"0.5", "log.cleaner.min.cleanable.ratio", TypeDouble, checkRatio},
	"min.compaction.lag.ms":                   {"0", "log.cleaner.min.compaction.lag.ms", TypeLong, longAtLeast(0)},
	"min.insync.replicas":                     {"1", "min.insync.replicas", TypeInt, checkMinISR},
	"preallocate":                             {"false", "", TypeBoolean, checkBool},
	"retention.bytes":                         {"-1", "log.retention.bytes", TypeLong, longAtLeast(-1)},
	"retention.ms":                            {strconv.FormatInt(defaultRetentionMs, 10), "log.retention.ms", TypeLong, longAtLeast(-1)},
	"segment.bytes":                           {strconv.Itoa(defaultSegmentBytes), "log.segment.bytes", TypeInt, intAtLeast(14)},
	"segment.index.bytes":                     {"10485760", "", TypeInt, intAtLeast(4)},
	"segment.jitter.ms":                       {"0", "", TypeLong, longAtLeast(0)},
	"segment.ms":                              {strconv.FormatInt(defaultSegmentAge.Milliseconds(), 10), "log.roll.ms", TypeLong, longAtLeast(1)},
	"unclean.leader.election.enable":          {"false", "", TypeBoolean, checkBool},
	"local.retention.bytes":                   {"-2", "log.local.retention.bytes", TypeLong, longAtLeast(-2)},
	"local.retention.ms":                      {"-2", "log.local.retention.ms", TypeLong, longAtLeast(-2)},
	"remote.storage.enable":                   {"false", "", TypeBoolean, checkBool},
	"follower.replication.throttled.replicas": {"", "", TypeList, func(string) error { return nil }},
	"leader.replication.throttled.replicas":   {"", "", TypeList, func(string) error { return nil }},
	// Not Kafka's: the compacted view of a delete-policy topic (W1-W7).
	ViewConfig: {"false", "", TypeBoolean, checkBool},
}

// validateConfigs is checkConfigs plus the checks that relate two configs,
// on their effective values (the broker default where one is not set):
// min.compaction.lag.ms must not exceed max.compaction.lag.ms (Kafka's
// LogConfig.validateValues).
func (r *Resolver) validateConfigs(configs map[string]string) error {
	if err := checkConfigs(configs); err != nil {
		return err
	}
	minLag, _ := parseLong(r.value(configs, "min.compaction.lag.ms"))
	maxLag, _ := parseLong(r.value(configs, "max.compaction.lag.ms"))
	if minLag > maxLag {
		return fmt.Errorf("%w: conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", ErrInvalidConfig, minLag, maxLag)
	}
	if r.cfg.Diskless { // N7
		for _, name := range []string{"remote.storage.enable", ViewConfig} {
			if r.value(configs, name) == "true" {
				return fmt.Errorf("%w: %s=true is not served in cluster mode", ErrInvalidConfig, name)
			}
		}
	}
	if r.value(configs, "remote.storage.enable") == "true" {
		// Kafka's checks: tiered storage must be on in the broker, and
		// a tiered topic is not compacted.
		if r.cfg.Tier == nil {
			return fmt.Errorf("%w: remote.storage.enable=true needs the broker's object.store.url", ErrInvalidConfig)
		}
		if policyHas(r.value(configs, "cleanup.policy"), "compact") {
			return fmt.Errorf("%w: remote.storage.enable=true is not supported with cleanup.policy=compact", ErrInvalidConfig)
		}
		if viewOn(configs) {
			// The cleaner copies a view from local ledgers only.
			return fmt.Errorf("%w: remote.storage.enable=true is not supported with %s=true", ErrInvalidConfig, ViewConfig)
		}
	}
	return checkViewPolicy(configs, r.value(configs, "cleanup.policy"))
}

// checkConfigs checks every entry and reports every problem at once,
// wrapped in ErrInvalidConfig.
func checkConfigs(configs map[string]string) error {
	var errs []error
	names := make([]string, 0, len(configs))
	for name := range configs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		spec, ok := topicConfigs[name]
		if !ok {
			errs = append(errs, fmt.Errorf("unknown topic config %q", name))
			continue
		}
		if err := spec.check(configs[name]); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", name, configs[name], err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidConfig, errors.Join(errs...))
}

func parseLong(v string) (int64, error) { return strconv.ParseInt(strings.TrimSpace(v), 10, 64) }

func longAtLeast(min int64) func(string) error {
	return func(v string) error {
		n, err := parseLong(v)
		if err != nil {
			return errors.New("not a long")
		}
		if n < min {
			return fmt.Errorf("must be at least %d", min)
		}
		return nil
	}
}

func intAtLeast(min int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return errors.New("not an int")
		}
		if n < min {
			return fmt.Errorf("must be at least %d", min)
		}
		return nil
	}
}

func oneOf(allowed ...string) func(string) error {
	return func(v string) error {
		if slices.Contains(allowed, v) {
			return nil
		}
		return fmt.Errorf("must be one of %s", strings.Join(allowed, ", "))
	}
}

func checkBool(v string) error {
	if v != "true" && v != "false" {
		return errors.New("must be true or false")
	}
	return nil
}

func checkRatio(v string) error {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1 {
		return errors.New("must be a number between 0 and 1")
	}
	return nil
}

var checkTimestampType = oneOf("CreateTime", "LogAppendTime")

// checkCleanupPolicy accepts Kafka's values: a list of delete and compact
// (in any order). An empty policy (Kafka 4.1's "no cleanup") is refused.
func checkCleanupPolicy(v string) error {
	if len(splitList(v)) == 0 {
		return errors.New("must be delete, compact or compact,delete (an empty policy is not supported)")
	}
	for _, p := range splitList(v) {
		if p != "delete" && p != "compact" {
			return fmt.Errorf("%q is not a cleanup policy: must be delete, compact or both", p)
		}
	}
	return nil
}

// policyHas reports whether a cleanup.policy value names policy.
func policyHas(v, policy string) bool { return slices.Contains(splitList(v), policy) }

// checkMinISR accepts only 1: there is one replica, so a larger value
// would make every acks=all produce fail.
func checkMinISR(v string) error {
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32); err != nil || n != 1 {
		return errors.New("must be 1 (one broker, one replica)")
	}
	return nil
}

// checkCompression accepts only "producer": batches are stored as
// received and never recompressed.
func checkCompression(v string) error {
	if _, ok := topicCodec(v); !ok && v != "producer" {
		return fmt.Errorf("%q is not one of uncompressed, zstd, lz4, snappy, gzip, producer", v)
	}
	return nil
}

// splitList splits a list config's value (comma separated, spaces
// trimmed, empty items dropped).
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// topicSettings are the configs that take effect, resolved against the
// broker defaults.
type topicSettings struct {
	maxMessageBytes int32
	logAppendTime   bool
	retentionMs     int64 // -1: no time limit
	retentionBytes  int64 // -1: no size limit
	ledger          ledger.Config
	clean           cleanSettings
	// remote is remote.storage.enable; local its local.retention.*, -2
	// resolved to retention.* (Kafka's rule).
	remote bool
	local  tier.LocalPolicy
	// codec is compression.type's codec when recompress (it is not
	// producer): every appended batch is stored with it (recompress.go).
	codec      Codec
	recompress bool
}

// cleanSettings are the cleanup.policy and the cleaner's topic configs.
type cleanSettings struct {
	compact           bool // cleanup.policy has compact: the cleaner runs, keys required (L1)
	delete            bool // cleanup.policy has delete: retention runs (T1-T6)
	minDirtyRatio     float64
	minLagMs          int64
	maxLagMs          int64
	deleteRetentionMs int64
}

// value is a topic config's effective value: set on the topic, else the
// broker default.
func (r *Resolver) value(configs map[string]string, name string) string {
	if v, ok := configs[name]; ok {
		return v
	}
	return r.configDefault(name)
}

// settings resolves a topic's explicit configs (already validated) over
// the broker config.
func (r *Resolver) settings(configs map[string]string) topicSettings {
	num := func(name string) int64 {
		n, _ := parseLong(r.value(configs, name))
		return n
	}
	s := topicSettings{
		maxMessageBytes: int32(num("max.message.bytes")),
		logAppendTime:   r.value(configs, "message.timestamp.type") == "LogAppendTime",
		retentionMs:     num("retention.ms"),
		retentionBytes:  num("retention.bytes"),
		ledger:          r.cfg.Ledger,
	}
	s.ledger.SegmentBytes = num("segment.bytes")
	s.codec, s.recompress = topicCodec(r.value(configs, "compression.type"))
	s.remote = r.value(configs, "remote.storage.enable") == "true"
	s.local = tier.LocalPolicy{RetentionMs: num("local.retention.ms"), RetentionBytes: num("local.retention.bytes")}
	if s.local.RetentionMs == -2 {
		s.local.RetentionMs = s.retentionMs
	}
	if s.local.RetentionBytes == -2 {
		s.local.RetentionBytes = s.retentionBytes
	}
	policy := r.value(configs, "cleanup.policy")
	s.clean = cleanSettings{
		compact:           policyHas(policy, "compact"),
		delete:            policyHas(policy, "delete"),
		minLagMs:          num("min.compaction.lag.ms"),
		maxLagMs:          num("max.compaction.lag.ms"),
		deleteRetentionMs: num("delete.retention.ms"),
	}
	s.clean.minDirtyRatio, _ = strconv.ParseFloat(r.value(configs, "min.cleanable.dirty.ratio"), 64)
	ms := num("segment.ms")
	if s.clean.compact {
		// L6: a compacted topic's open ledger rolls by
		// max.compaction.lag.ms too, so that what is older than it
		// becomes cleanable (Kafka's LogConfig.maxSegmentMs).
		ms = min(ms, s.clean.maxLagMs)
	}
	s.ledger.SegmentAge = time.Duration(min(ms, maxInt64/int64(time.Millisecond))) * time.Millisecond
	return s
}

// configDefault is the value a topic config has when not set explicitly:
// its broker config's value, else Kafka's default.
func (r *Resolver) configDefault(name string) string {
	spec := topicConfigs[name]
	if spec.broker != "" {
		if v, ok := r.brokerValues()[spec.broker]; ok {
			return v
		}
	}
	return spec.def
}

// TopicConfigs returns every known config of the topic, sorted by name,
// with its effective value, source and synonyms (DescribeConfigs reports
// all of them, not only the ones set).
//
// A companion topic is described by its source's configs (W1).
func (r *Resolver) TopicConfigs(name string) ([]ConfigEntry, error) {
	if src, ok := r.CompanionSource(name); ok {
		name = src
	}
	t, ok := r.Topic(name)
	if !ok {
		return nil, ErrUnknownTopic
	}
	return r.configEntries(t.Configs), nil
}

// DefaultTopicConfigs is TopicConfigs for a topic with nothing set.
func (r *Resolver) DefaultTopicConfigs() []ConfigEntry { return r.configEntries(nil) }

// ConfigsFor is TopicConfigs for a topic with set configured explicitly
// (CreateTopics v5+ describes a topic that validate_only never created).
func (r *Resolver) ConfigsFor(set map[string]string) []ConfigEntry { return r.configEntries(set) }

func (r *Resolver) configEntries(set map[string]string) []ConfigEntry {
	broker := r.brokerValues()
	out := make([]ConfigEntry, 0, len(topicConfigs))
	for name, spec := range topicConfigs {
		e := ConfigEntry{Name: name, Type: spec.typ}
		if v, ok := set[name]; ok {
			e.Synonyms = append(e.Synonyms, ConfigSynonym{Name: name, Value: v, Source: SourceTopic})
		}
		syn := name
		if spec.broker != "" {
			syn = spec.broker
			if v := broker[spec.broker]; v != spec.def {
				e.Synonyms = append(e.Synonyms, ConfigSynonym{Name: syn, Value: v, Source: SourceStaticBroker})
			}
		}
		e.Synonyms = append(e.Synonyms, ConfigSynonym{Name: syn, Value: spec.def, Source: SourceDefault})
		e.Value, e.Source = e.Synonyms[0].Value, e.Synonyms[0].Source
		e.Default = e.Source != SourceTopic
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b ConfigEntry) int { return strings.Compare(a.Name, b.Name) })
	return out
}
