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
)

// Topic configs. Every name Kafka defines for topics that a client may
// reasonably set is accepted and stored, so tools that set them keep
// working; only these take effect:
//   - max.message.bytes: the largest record batch Produce accepts
//   - message.timestamp.type: LogAppendTime makes Produce stamp batches
//   - segment.bytes, segment.ms: the ledger rollover policy
//
// The rest are stored and described but change nothing (retention is
// computed elsewhere; there is one replica; no compaction).

// ConfigEntry is one topic config as DescribeConfigs reports it.
type ConfigEntry struct {
	Name    string
	Value   string
	Default bool // true when not set explicitly on the topic
}

const (
	maxInt64 = math.MaxInt64
	maxLong  = "9223372036854775807"

	defaultMaxMessageBytes = 1048588
	defaultSegmentBytes    = 1 << 30
	defaultSegmentAge      = 7 * 24 * time.Hour
)

// configSpec is one known topic config: its static default (empty means
// the broker config decides, see Resolver.configDefault) and validation.
type configSpec struct {
	def   string
	check func(v string) error
}

var topicConfigs = map[string]configSpec{
	"cleanup.policy":                          {"delete", checkCleanupPolicy},
	"compression.type":                        {"producer", checkCompression},
	"delete.retention.ms":                     {"86400000", longAtLeast(0)},
	"file.delete.delay.ms":                    {"60000", longAtLeast(0)},
	"flush.messages":                          {maxLong, longAtLeast(1)},
	"flush.ms":                                {maxLong, longAtLeast(0)},
	"index.interval.bytes":                    {"4096", intAtLeast(0)},
	"max.compaction.lag.ms":                   {maxLong, longAtLeast(1)},
	"max.message.bytes":                       {"", intAtLeast(0)},
	"message.downconversion.enable":           {"true", checkBool},
	"message.timestamp.after.max.ms":          {maxLong, longAtLeast(0)},
	"message.timestamp.before.max.ms":         {maxLong, longAtLeast(0)},
	"message.timestamp.difference.max.ms":     {maxLong, longAtLeast(0)},
	"message.timestamp.type":                  {"CreateTime", oneOf("CreateTime", "LogAppendTime")},
	"min.cleanable.dirty.ratio":               {"0.5", checkRatio},
	"min.compaction.lag.ms":                   {"0", longAtLeast(0)},
	"min.insync.replicas":                     {"1", intAtLeast(1)},
	"preallocate":                             {"false", checkBool},
	"retention.bytes":                         {"-1", longAtLeast(-1)},
	"retention.ms":                            {"604800000", longAtLeast(-1)},
	"segment.bytes":                           {"", intAtLeast(14)},
	"segment.index.bytes":                     {"10485760", intAtLeast(4)},
	"segment.jitter.ms":                       {"0", longAtLeast(0)},
	"segment.ms":                              {"", longAtLeast(1)},
	"unclean.leader.election.enable":          {"false", checkBool},
	"local.retention.bytes":                   {"-2", longAtLeast(-2)},
	"local.retention.ms":                      {"-2", longAtLeast(-2)},
	"remote.storage.enable":                   {"false", oneOf("false")},
	"follower.replication.throttled.replicas": {"", func(string) error { return nil }},
	"leader.replication.throttled.replicas":   {"", func(string) error { return nil }},
}

// validateConfigs checks every entry and reports every problem at once
// (STYLE.md 7), wrapped in ErrInvalidConfig.
func validateConfigs(configs map[string]string) error {
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

func longAtLeast(min int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
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

func checkCleanupPolicy(v string) error {
	for _, p := range strings.Split(v, ",") {
		switch strings.TrimSpace(p) {
		case "delete":
		case "compact":
			return errors.New("compaction is not supported")
		default:
			return errors.New("must be delete")
		}
	}
	return nil
}

// checkCompression accepts only "producer": batches are stored as
// received and never recompressed.
func checkCompression(v string) error {
	if v != "producer" {
		return errors.New("only producer is supported (batches are stored as received)")
	}
	return nil
}

// topicSettings are the configs that take effect, resolved against the
// broker defaults.
type topicSettings struct {
	maxMessageBytes int32
	logAppendTime   bool
	ledger          ledger.Config
}

// settings resolves a topic's explicit configs (already validated) over
// the broker config.
func (r *Resolver) settings(configs map[string]string) topicSettings {
	s := topicSettings{
		maxMessageBytes: r.cfg.MaxMessageBytes,
		logAppendTime:   configs["message.timestamp.type"] == "LogAppendTime",
		ledger:          r.cfg.Ledger,
	}
	if v, ok := configs["max.message.bytes"]; ok {
		n, _ := strconv.ParseInt(v, 10, 32)
		s.maxMessageBytes = int32(n)
	}
	if v, ok := configs["segment.bytes"]; ok {
		s.ledger.SegmentBytes, _ = strconv.ParseInt(v, 10, 32)
	}
	if v, ok := configs["segment.ms"]; ok {
		ms, _ := strconv.ParseInt(v, 10, 64)
		s.ledger.SegmentAge = time.Duration(min(ms, maxInt64/int64(time.Millisecond))) * time.Millisecond
	}
	return s
}

// configDefault is the value a topic config has when not set explicitly.
func (r *Resolver) configDefault(name string) string {
	switch name {
	case "max.message.bytes":
		return strconv.Itoa(int(r.cfg.MaxMessageBytes))
	case "segment.bytes":
		if r.cfg.Ledger.SegmentBytes > 0 {
			return strconv.FormatInt(r.cfg.Ledger.SegmentBytes, 10)
		}
		return strconv.Itoa(defaultSegmentBytes)
	case "segment.ms":
		if r.cfg.Ledger.SegmentAge > 0 {
			return strconv.FormatInt(r.cfg.Ledger.SegmentAge.Milliseconds(), 10)
		}
		return strconv.FormatInt(defaultSegmentAge.Milliseconds(), 10)
	}
	return topicConfigs[name].def
}

// TopicConfigs returns every known config of the topic, sorted by name,
// with its effective value and whether it is a default (DescribeConfigs
// reports all of them, not only the ones set).
func (r *Resolver) TopicConfigs(name string) ([]ConfigEntry, error) {
	t, ok := r.Topic(name)
	if !ok {
		return nil, ErrUnknownTopic
	}
	return r.configEntries(t.Configs), nil
}

// DefaultTopicConfigs is TopicConfigs for a topic with nothing set.
func (r *Resolver) DefaultTopicConfigs() []ConfigEntry { return r.configEntries(nil) }

func (r *Resolver) configEntries(set map[string]string) []ConfigEntry {
	out := make([]ConfigEntry, 0, len(topicConfigs))
	for name := range topicConfigs {
		if v, ok := set[name]; ok {
			out = append(out, ConfigEntry{Name: name, Value: v})
		} else {
			out = append(out, ConfigEntry{Name: name, Value: r.configDefault(name), Default: true})
		}
	}
	slices.SortFunc(out, func(a, b ConfigEntry) int { return strings.Compare(a.Name, b.Name) })
	return out
}
