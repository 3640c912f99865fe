package topicconfig

import (
	"strconv"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/recordbatch"
	"github.com/kgateway/kgateway/tier"
)

// Settings are the configs of one topic that take effect, resolved
// against the broker's values.
type Settings struct {
	MaxMessageBytes int32
	LogAppendTime   bool
	RetentionMs     int64 // -1: no time limit
	RetentionBytes  int64 // -1: no size limit
	Ledger          ledger.Config
	Clean           Clean
	// Remote is remote.storage.enable; Local its local.retention.*, -2
	// resolved to retention.* (Kafka's rule).
	Remote bool
	Local  tier.LocalPolicy
	// Codec is compression.type's codec when Recompress (it is not
	// producer): every appended batch is stored with it.
	Codec      recordbatch.Codec
	Recompress bool
	// Level is the compression.<codec>.level of Codec (KIP-390), Kafka's
	// numbering; the codec's default when it has none (snappy).
	Level int
	// Records are the checks Produce runs on each record.
	Records RecordRules
}

// Clean are the cleanup.policy and the cleaner's topic configs.
type Clean struct {
	Compact           bool // cleanup.policy has compact: the cleaner runs, keys required
	Delete            bool // cleanup.policy has delete: retention runs
	MinDirtyRatio     float64
	MinLagMs          int64
	MaxLagMs          int64
	DeleteRetentionMs int64
}

// Resolve resolves a topic's explicit configs (already validated) over the
// broker's values; base is the broker's ledger configuration, whose
// segment size and age the topic's configs replace.
func Resolve(set map[string]string, broker Broker, base ledger.Config) Settings {
	value := func(name string) string { return Value(set, broker, name) }
	num := func(name string) int64 {
		n, _ := parseLong(value(name))
		return n
	}
	s := Settings{
		MaxMessageBytes: int32(num("max.message.bytes")),
		LogAppendTime:   value("message.timestamp.type") == "LogAppendTime",
		RetentionMs:     num("retention.ms"),
		RetentionBytes:  num("retention.bytes"),
		Ledger:          base,
	}
	s.Ledger.SegmentBytes = num("segment.bytes")
	s.Codec, s.Recompress = Codec(value("compression.type"))
	if lv, ok := levelConfig[s.Codec]; ok && s.Recompress {
		s.Level = int(num(lv))
	}
	s.Records = RecordRules{
		CreateTime:     !s.LogAppendTime,
		BeforeMaxMs:    num("message.timestamp.before.max.ms"),
		AfterMaxMs:     num("message.timestamp.after.max.ms"),
		MaxRecordBytes: int32(num("max.decompressed.message.bytes")),
	}
	s.Remote = value("remote.storage.enable") == "true"
	s.Local = tier.LocalPolicy{RetentionMs: num("local.retention.ms"), RetentionBytes: num("local.retention.bytes")}
	if s.Local.RetentionMs == -2 {
		s.Local.RetentionMs = s.RetentionMs
	}
	if s.Local.RetentionBytes == -2 {
		s.Local.RetentionBytes = s.RetentionBytes
	}
	policy := value("cleanup.policy")
	s.Clean = Clean{
		Compact:           PolicyHas(policy, "compact"),
		Delete:            PolicyHas(policy, "delete"),
		MinLagMs:          num("min.compaction.lag.ms"),
		MaxLagMs:          num("max.compaction.lag.ms"),
		DeleteRetentionMs: num("delete.retention.ms"),
	}
	s.Records.Compact = s.Clean.Compact
	s.Clean.MinDirtyRatio, _ = strconv.ParseFloat(value("min.cleanable.dirty.ratio"), 64)
	ms := num("segment.ms")
	if s.Clean.Compact {
		// A compacted topic's open ledger rolls by max.compaction.lag.ms
		// too, so that what is older than it becomes cleanable (Kafka's
		// LogConfig.maxSegmentMs).
		ms = min(ms, s.Clean.MaxLagMs)
	}
	s.Ledger.SegmentAge = maxDuration(ms)
	return s
}
