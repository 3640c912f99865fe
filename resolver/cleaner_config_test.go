package resolver

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/resolver/dynconfig"
	"github.com/kgateway/kgateway/topicconfig"
)

// The compaction configs carry Kafka's names, defaults and broker
// synonyms, and DescribeConfigs reports each with its source.
func TestCompactionConfigsDescribed(t *testing.T) {
	g := newGateway(t, Config{RetentionCheckInterval: -1, Cleaner: CleanerConfig{
		Threads: -1, DeleteRetentionMs: 5000, DedupeBufferSize: 1 << 20, IOMaxBytesPerSecond: 1 << 20,
	}})
	g.create("c", 1, map[string]string{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.25"})
	m := entryMap(mustConfigs(t, g.r, "c"))
	for name, want := range map[string]struct {
		value  string
		source topicconfig.Source
		syn    string
	}{
		"cleanup.policy":            {"compact", topicconfig.SourceTopic, "log.cleanup.policy"},
		"min.cleanable.dirty.ratio": {"0.25", topicconfig.SourceTopic, "log.cleaner.min.cleanable.ratio"},
		"delete.retention.ms":       {"5000", topicconfig.SourceStaticBroker, "log.cleaner.delete.retention.ms"},
		"min.compaction.lag.ms":     {"0", topicconfig.SourceDefault, "log.cleaner.min.compaction.lag.ms"},
		"max.compaction.lag.ms":     {topicconfig.MaxLong, topicconfig.SourceDefault, "log.cleaner.max.compaction.lag.ms"},
		"segment.ms":                {"604800000", topicconfig.SourceDefault, "log.roll.ms"},
		"segment.bytes":             {"1073741824", topicconfig.SourceDefault, "log.segment.bytes"},
	} {
		e := m[name]
		if e.Value != want.value || e.Source != want.source {
			t.Errorf("%s: %+v, want %s from %d", name, e, want.value, want.source)
		}
		if syn := e.Synonyms[len(e.Synonyms)-1]; syn.Name != want.syn || syn.Source != topicconfig.SourceDefault {
			t.Errorf("%s: last synonym %+v, want %s", name, syn, want.syn)
		}
	}
	b := entryMap(g.r.BrokerConfigs())
	for name, want := range map[string]string{
		"log.cleaner.threads":                 "0",
		"log.cleaner.enable":                  "false",
		"log.cleaner.dedupe.buffer.size":      "1048576",
		"log.cleaner.io.max.bytes.per.second": "1048576.0",
		"log.cleaner.delete.retention.ms":     "5000",
		"log.cleaner.min.cleanable.ratio":     "0.5",
		"log.cleaner.backoff.ms":              "15000",
	} {
		// The cleaner's own settings are read-only; the topic defaults
		// among them are dynamic (broker_dynamic.go).
		if e := b[name]; e.Value != want || e.ReadOnly == dynconfig.Dynamic(name) {
			t.Errorf("%s: %+v, want %s", name, e, want)
		}
	}
	if e := b["log.cleaner.dedupe.buffer.size"]; e.Source != topicconfig.SourceStaticBroker || e.Type != topicconfig.TypeLong {
		t.Errorf("dedupe buffer: %+v", e)
	}
	def := entryMap(newGateway(t, Config{RetentionCheckInterval: -1}).r.BrokerConfigs())
	for name, want := range map[string]string{
		"log.cleaner.threads":                 "1",
		"log.cleaner.dedupe.buffer.size":      "134217728",
		"log.cleaner.io.max.bytes.per.second": "1.7976931348623157E308",
	} {
		if e := def[name]; e.Value != want || e.Source != topicconfig.SourceDefault {
			t.Errorf("default %s: %+v, want %s", name, e, want)
		}
	}
}

func TestCleanerConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		c   CleanerConfig
		msg string
	}{
		{CleanerConfig{DedupeBufferSize: 10}, "too small to hold one key"},
		{CleanerConfig{DedupeBufferSize: 1 << 40}, "less than or equal to 2147483647"},
		{CleanerConfig{IOMaxBytesPerSecond: -1}, "must be positive"},
		{CleanerConfig{MinCleanableRatio: 2}, "between 0 and 1"},
		{CleanerConfig{MinCompactionLagMs: 10, MaxCompactionLagMs: 5}, "must not exceed"},
	} {
		err := Config{Cleaner: tc.c}.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.msg)
		}
	}
	if err := (Config{Cleaner: CleanerConfig{Threads: 4, DedupeBufferSize: 4 << 20}}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// The key requirement: a keyless record makes the whole batch INVALID_RECORD on a
// compacted topic (compact and compact,delete), and nothing of it is
// appended; delete-only topics take it.
func TestCompactedTopicRefusesKeylessRecords(t *testing.T) {
	g := newGateway(t, Config{RetentionCheckInterval: -1, Cleaner: CleanerConfig{Threads: -1}})
	for _, policy := range []string{"compact", "compact,delete", "delete, compact"} {
		name := strings.ReplaceAll(strings.ReplaceAll(policy, ",", "-"), " ", "")
		g.create(name, 1, map[string]string{"cleanup.policy": policy})
		g.produce(name, 0, kvBatch(rec("k", "v", 1)))
		_, err := g.r.Produce(name, 0, kvBatch(rec("a", "1", 1), keyless("2", 1), rec("b", "3", 1)))
		if !errors.Is(err, ErrInvalidRecord) || !strings.Contains(err.Error(), "without key") {
			t.Fatalf("%s: keyless record: %v, want INVALID_RECORD", policy, err)
		}
		if _, hwm, _, _ := g.r.Bounds(name, 0); hwm != 1 {
			t.Fatalf("%s: high watermark %d after a refused batch, want 1", policy, hwm)
		}
		// A tombstone has a key: accepted.
		g.produce(name, 0, kvBatch(tomb("k", 2)))
	}
	g.create("d", 1, nil)
	g.produce("d", 0, kvBatch(keyless("x", 1)))
}

// The policy changes on a live topic, both ways: keys are required only
// while it has compact, and retention runs only while it has delete (the cleanup policy).
func TestCleanupPolicyAlterBothWays(t *testing.T) {
	c := fixedClock(10_000_000)
	g := newGateway(t, Config{RetentionCheckInterval: -1, Cleaner: CleanerConfig{Threads: -1}, Ledger: ledgerNow(c)})
	g.create("t", 1, map[string]string{"segment.bytes": "100", "retention.ms": "1000"})
	g.produce("t", 0, kvBatch(keyless("a", 1)))
	if err := g.r.IncrementalAlterTopicConfigs("t", []topicconfig.Op{{Name: "cleanup.policy", Op: topicconfig.OpSet, Value: "compact"}}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := g.r.Produce("t", 0, kvBatch(keyless("b", 2))); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("keyless after compact: %v", err)
	}
	g.produce("t", 0, kvBatch(rec("k", "v", 3)))
	g.produce("t", 0, kvBatch(rec("k", "w", 4)))
	// Everything is expired, but compact alone keeps data by key.
	if err := g.r.Passes().RunRetention(c.now()); err != nil {
		t.Fatal(err)
	}
	if start, _, _, _ := g.r.Bounds("t", 0); start != 0 {
		t.Fatalf("retention ran on a compact-only topic: log start %d", start)
	}
	if err := g.r.IncrementalAlterTopicConfigs("t", []topicconfig.Op{{Name: "cleanup.policy", Op: topicconfig.OpAppend, Value: "delete"}}, false); err != nil {
		t.Fatal(err)
	}
	if tp, _ := g.r.Topic("t"); tp.Configs["cleanup.policy"] != "compact,delete" {
		t.Fatalf("append delete: %q", tp.Configs["cleanup.policy"])
	}
	if err := g.r.Passes().RunRetention(c.now()); err != nil {
		t.Fatal(err)
	}
	if start, _, _, _ := g.r.Bounds("t", 0); start == 0 {
		t.Fatal("compact,delete: retention did not run")
	}
	if err := g.r.IncrementalAlterTopicConfigs("t", []topicconfig.Op{{Name: "cleanup.policy", Op: topicconfig.OpSet, Value: "delete"}}, false); err != nil {
		t.Fatal(err)
	}
	g.produce("t", 0, kvBatch(keyless("c", 5)))
	g.reopen() // the policy is durable
	if _, err := g.r.Produce("t", 0, kvBatch(keyless("d", 6))); err != nil {
		t.Fatalf("keyless after back to delete and a reopen: %v", err)
	}
}

// The compaction roll: a compacted topic's open ledger rolls at min(segment.ms,
// max.compaction.lag.ms); a delete topic's at segment.ms.
func TestCompactionLagRollsSegments(t *testing.T) {
	g := newGateway(t, Config{RetentionCheckInterval: -1, Cleaner: CleanerConfig{Threads: -1}})
	s := g.r.settings(map[string]string{"cleanup.policy": "compact", "segment.ms": "60000", "max.compaction.lag.ms": "1000"})
	if s.Ledger.SegmentAge != time.Second {
		t.Fatalf("compact: segment age %v, want 1s", s.Ledger.SegmentAge)
	}
	s = g.r.settings(map[string]string{"cleanup.policy": "delete", "segment.ms": "60000", "max.compaction.lag.ms": "1000"})
	if s.Ledger.SegmentAge != time.Minute {
		t.Fatalf("delete: segment age %v, want 1m", s.Ledger.SegmentAge)
	}
	s = g.r.settings(map[string]string{"cleanup.policy": "compact"})
	if s.Ledger.SegmentAge != 7*24*time.Hour || s.Clean.MaxLagMs != math.MaxInt64 {
		t.Fatalf("compact defaults: %v %d", s.Ledger.SegmentAge, s.Clean.MaxLagMs)
	}
	_ = ledger.Config{}
}
