package topicconfig

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kgateway/kgateway/recordbatch"
)

// CompactedView is the topic config (not Kafka's) that turns a
// delete-policy topic's compacted view and its companion topic on.
const CompactedView = "kgateway.compacted.view.enable"

// Kafka's defaults of the topic configs that also have broker settings.
const (
	DefaultMaxMessageBytes   = 1048588
	DefaultSegmentBytes      = 1 << 30
	DefaultSegmentAge        = 7 * 24 * time.Hour
	DefaultRetentionMs       = int64(7 * 24 * time.Hour / time.Millisecond)
	DefaultRetentionBytes    = int64(-1)
	DefaultDeleteRetentionMs = int64(24 * time.Hour / time.Millisecond)
	// DefaultTimestampAfterMs is message.timestamp.after.max.ms's default
	// since Kafka 4.0: a record at most an hour in the future.
	DefaultTimestampAfterMs = int64(time.Hour / time.Millisecond)
	// MaxRecordBody is max.decompressed.message.bytes's default and
	// largest value (Kafka's largest array, Integer.MAX_VALUE - 8): no
	// bound beyond what could be allocated anyway.
	MaxRecordBody = math.MaxInt32 - 8
	// MaxLong is Java's Long.MAX_VALUE as Kafka prints it: the default of
	// the configs that have no limit.
	MaxLong = "9223372036854775807"
)

// spec is one known topic config: Kafka's static default, the broker
// config whose value is the topic's default (empty: none), its type, and
// validation.
type spec struct {
	def    string
	broker string
	typ    Type
	check  func(v string) error
}

// noSynonym marks a topic config without a broker config whose default
// Kafka describes with no synonym at all (its default is not a broker
// setting's).
const noSynonym = "-"

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

var table = map[string]spec{
	"cleanup.policy":                          {"delete", "log.cleanup.policy", TypeList, checkCleanupPolicy},
	"compression.type":                        {"producer", "compression.type", TypeString, checkCompression},
	"compression.gzip.level":                  {"-1", "compression.gzip.level", TypeInt, checkGzipLevel},
	"compression.lz4.level":                   {"9", "compression.lz4.level", TypeInt, intBetween(1, 17)},
	"compression.zstd.level":                  {"3", "compression.zstd.level", TypeInt, intBetween(-131072, 22)},
	"delete.retention.ms":                     {itoa(DefaultDeleteRetentionMs), "log.cleaner.delete.retention.ms", TypeLong, longAtLeast(0)},
	"errors.deadletterqueue.group.enable":     {"false", noSynonym, TypeBoolean, checkBool},
	"file.delete.delay.ms":                    {"60000", "", TypeLong, longAtLeast(0)},
	"flush.messages":                          {MaxLong, "", TypeLong, longAtLeast(1)},
	"flush.ms":                                {MaxLong, "", TypeLong, longAtLeast(0)},
	"index.interval.bytes":                    {"4096", "", TypeInt, intAtLeast(0)},
	"max.compaction.lag.ms":                   {MaxLong, "log.cleaner.max.compaction.lag.ms", TypeLong, longAtLeast(1)},
	"max.message.bytes":                       {strconv.Itoa(DefaultMaxMessageBytes), "message.max.bytes", TypeInt, intAtLeast(0)},
	"max.decompressed.message.bytes":          {itoa(MaxRecordBody), "max.decompressed.message.bytes", TypeInt, intBetween(1, MaxRecordBody)},
	"message.timestamp.after.max.ms":          {itoa(DefaultTimestampAfterMs), "log.message.timestamp.after.max.ms", TypeLong, longAtLeast(0)},
	"message.timestamp.before.max.ms":         {MaxLong, "log.message.timestamp.before.max.ms", TypeLong, longAtLeast(0)},
	"message.timestamp.type":                  {"CreateTime", "log.message.timestamp.type", TypeString, checkTimestampType},
	"min.cleanable.dirty.ratio":               {"0.5", "log.cleaner.min.cleanable.ratio", TypeDouble, checkRatio},
	"min.compaction.lag.ms":                   {"0", "log.cleaner.min.compaction.lag.ms", TypeLong, longAtLeast(0)},
	"min.insync.replicas":                     {"1", "min.insync.replicas", TypeInt, checkMinISR},
	"preallocate":                             {"false", "", TypeBoolean, checkBool},
	"retention.bytes":                         {"-1", "log.retention.bytes", TypeLong, longAtLeast(-1)},
	"retention.ms":                            {itoa(DefaultRetentionMs), "log.retention.ms", TypeLong, longAtLeast(-1)},
	"segment.bytes":                           {strconv.Itoa(DefaultSegmentBytes), "log.segment.bytes", TypeInt, intAtLeast(14)},
	"segment.index.bytes":                     {"10485760", "", TypeInt, intAtLeast(4)},
	"segment.jitter.ms":                       {"0", "", TypeLong, longAtLeast(0)},
	"segment.ms":                              {itoa(DefaultSegmentAge.Milliseconds()), "log.roll.ms", TypeLong, longAtLeast(1)},
	"unclean.leader.election.enable":          {"false", "", TypeBoolean, checkBool},
	"local.retention.bytes":                   {"-2", "log.local.retention.bytes", TypeLong, longAtLeast(-2)},
	"local.retention.ms":                      {"-2", "log.local.retention.ms", TypeLong, longAtLeast(-2)},
	"remote.storage.enable":                   {"false", "", TypeBoolean, checkBool},
	"follower.replication.throttled.replicas": {"", "", TypeList, func(string) error { return nil }},
	"leader.replication.throttled.replicas":   {"", "", TypeList, func(string) error { return nil }},
	CompactedView:                             {"false", "", TypeBoolean, checkBool},
}

// topicOf maps each broker config name that is a topic config's default
// (log.retention.ms, ...) to that topic config (retention.ms).
var topicOf = func() map[string]string {
	m := map[string]string{}
	for name, spec := range table {
		if spec.broker != "" && spec.broker != noSynonym {
			m[spec.broker] = name
		}
	}
	return m
}()

// TopicConfigOf is the topic config whose default broker config
// brokerName is (log.retention.ms: retention.ms).
func TopicConfigOf(brokerName string) (string, bool) {
	name, ok := topicOf[brokerName]
	return name, ok
}

// Known reports whether name is a topic config kgateway accepts.
func Known(name string) bool {
	_, ok := table[name]
	return ok
}

// Check checks every entry of set on its own and reports every problem at
// once, wrapped in ErrInvalid.
func Check(set map[string]string) error {
	var errs []error
	names := make([]string, 0, len(set))
	for name := range set {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		spec, ok := table[name]
		if !ok {
			errs = append(errs, fmt.Errorf("unknown topic config %q", name))
			continue
		}
		if err := spec.check(set[name]); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", name, set[name], err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
}

// Validate is Check plus the checks that relate two configs, on their
// effective values (the broker's where one is not set):
// min.compaction.lag.ms must not exceed max.compaction.lag.ms (Kafka's
// LogConfig.validateValues), and a compacted view needs the delete policy
// (a compacted topic is its own compacted view).
func Validate(set map[string]string, broker Broker) error {
	if err := Check(set); err != nil {
		return err
	}
	minLag, _ := parseLong(Value(set, broker, "min.compaction.lag.ms"))
	maxLag, _ := parseLong(Value(set, broker, "max.compaction.lag.ms"))
	if minLag > maxLag {
		return fmt.Errorf("%w: conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", ErrInvalid, minLag, maxLag)
	}
	if ViewOn(set) && PolicyHas(Value(set, broker, "cleanup.policy"), "compact") {
		return fmt.Errorf("%w: %s=true needs cleanup.policy=delete (a compacted topic is its own compacted view)", ErrInvalid, CompactedView)
	}
	return nil
}

// ViewOn reports whether a topic's explicit configs turn its compacted
// view on.
func ViewOn(set map[string]string) bool { return set[CompactedView] == "true" }

// PolicyHas reports whether a cleanup.policy value names policy.
func PolicyHas(v, policy string) bool { return slices.Contains(SplitList(v), policy) }

// SplitList splits a list config's value (comma separated, spaces
// trimmed, empty items dropped).
func SplitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Codec is the codec compression.type v asks for; ok is false for
// "producer" (keep the producer's).
func Codec(v string) (c recordbatch.Codec, ok bool) {
	switch v {
	case "uncompressed":
		return recordbatch.CodecNone, true
	case "gzip":
		return recordbatch.CodecGzip, true
	case "snappy":
		return recordbatch.CodecSnappy, true
	case "lz4":
		return recordbatch.CodecLZ4, true
	case "zstd":
		return recordbatch.CodecZstd, true
	}
	return 0, false
}

// levelConfig names the compression level config of each codec that has
// levels (KIP-390).
var levelConfig = map[recordbatch.Codec]string{
	recordbatch.CodecGzip: "compression.gzip.level",
	recordbatch.CodecLZ4:  "compression.lz4.level",
	recordbatch.CodecZstd: "compression.zstd.level",
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

func intBetween(lo, hi int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return errors.New("not an int")
		}
		if n < lo || n > hi {
			return fmt.Errorf("must be between %d and %d", lo, hi)
		}
		return nil
	}
}

// checkGzipLevel is Kafka's gzip level validator: 1 to 9, or -1 (the
// codec's default).
func checkGzipLevel(v string) error {
	if strings.TrimSpace(v) == "-1" {
		return nil
	}
	if intBetween(1, 9)(v) != nil {
		return errors.New("must be between 1 and 9 or equal to -1")
	}
	return nil
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
	if len(SplitList(v)) == 0 {
		return errors.New("must be delete, compact or compact,delete (an empty policy is not supported)")
	}
	for _, p := range SplitList(v) {
		if p != "delete" && p != "compact" {
			return fmt.Errorf("%q is not a cleanup policy: must be delete, compact or both", p)
		}
	}
	return nil
}

// checkMinISR accepts only 1: there is one replica, so a larger value
// would make every acks=all produce fail.
func checkMinISR(v string) error {
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32); err != nil || n != 1 {
		return errors.New("must be 1 (one broker, one replica)")
	}
	return nil
}

// checkCompression accepts a codec (every batch is stored with it,
// recompressed where the producer used another) or "producer".
func checkCompression(v string) error {
	if _, ok := Codec(v); !ok && v != "producer" {
		return fmt.Errorf("%q is not one of uncompressed, zstd, lz4, snappy, gzip, producer", v)
	}
	return nil
}

// maxDuration caps a millisecond count so that it fits a time.Duration.
func maxDuration(ms int64) time.Duration {
	return time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
}

// CheckValue checks one value of the topic config name (its broker
// setting takes the same values).
func CheckValue(name, v string) error {
	spec, ok := table[name]
	if !ok {
		return fmt.Errorf("unknown topic config %q", name)
	}
	return spec.check(v)
}
