package resolver

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kgateway/kgateway/ledger"
	"github.com/kgateway/kgateway/topicconfig"
)

func entryMap(es []topicconfig.Entry) map[string]topicconfig.Entry {
	m := make(map[string]topicconfig.Entry, len(es))
	for _, e := range es {
		m[e.Name] = e
	}
	return m
}

// Broker configs under Kafka's names are the defaults of the topic configs
// that name them, reported as STATIC_BROKER_CONFIG; untouched ones are
// DEFAULT_CONFIG.
func TestBrokerDefaults(t *testing.T) {
	g := newGateway(t, Config{
		RetentionMs: 3_600_000, RetentionBytes: 1 << 20, MessageTimestampType: "LogAppendTime",
		Ledger: ledger.Config{SegmentBytes: 1 << 20, SegmentAge: time.Hour}, RetentionCheckInterval: -1,
	})
	g.create("t", 1, map[string]string{"retention.ms": "1000"})
	m := entryMap(mustConfigs(t, g.r, "t"))
	for name, want := range map[string]struct {
		value  string
		source topicconfig.Source
	}{
		"retention.ms":           {"1000", topicconfig.SourceTopic},
		"retention.bytes":        {"1048576", topicconfig.SourceStaticBroker},
		"segment.bytes":          {"1048576", topicconfig.SourceStaticBroker},
		"segment.ms":             {"3600000", topicconfig.SourceStaticBroker},
		"message.timestamp.type": {"LogAppendTime", topicconfig.SourceStaticBroker},
		"max.message.bytes":      {"1048588", topicconfig.SourceDefault},
		"cleanup.policy":         {"delete", topicconfig.SourceDefault},
		"min.insync.replicas":    {"1", topicconfig.SourceDefault},
	} {
		e := m[name]
		if e.Value != want.value || e.Source != want.source || e.Default != (want.source != topicconfig.SourceTopic) {
			t.Errorf("%s: %+v, want %s from %d", name, e, want.value, want.source)
		}
	}
	if syn := m["retention.ms"].Synonyms; len(syn) != 3 || syn[1].Name != "log.retention.ms" || syn[1].Value != "3600000" || syn[2].Value != "604800000" {
		t.Errorf("retention.ms synonyms: %+v", syn)
	}
	b := entryMap(g.r.BrokerConfigs())
	if e := b["log.retention.ms"]; e.Value != "3600000" || e.Source != topicconfig.SourceStaticBroker || e.ReadOnly || !b["num.partitions"].ReadOnly {
		t.Errorf("log.retention.ms: %+v", e)
	}
	if e := b["log.cleanup.policy"]; e.Value != "delete" || e.Source != topicconfig.SourceDefault || e.Type != topicconfig.TypeList {
		t.Errorf("log.cleanup.policy: %+v", e)
	}
	// The broker default takes effect: this topic stamps LogAppendTime.
	res := g.produce("t", 0, plain(1, 5).encode())
	if res.LogAppendTime < 0 {
		t.Fatalf("log.message.timestamp.type=LogAppendTime not applied: %+v", res)
	}
}

func TestBrokerConfigValidate(t *testing.T) {
	err := Config{RetentionMs: -2, RetentionBytes: -5, MessageTimestampType: "Now", CleanupPolicy: "compact,shred"}.Validate()
	for _, want := range []string{"log.retention.ms", "log.retention.bytes", "log.message.timestamp.type", "log.cleanup.policy"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want a %s problem", err, want)
		}
	}
}

func mustConfigs(t *testing.T, r *Resolver, topic string) []topicconfig.Entry {
	t.Helper()
	es, err := r.TopicConfigs(topic)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestInvalidTopicConfigs(t *testing.T) {
	g := newGateway(t, Config{RetentionCheckInterval: -1})
	for _, tc := range []struct {
		configs map[string]string
		msg     string
	}{
		{map[string]string{"cleanup.policy": "compact,shred"}, "not a cleanup policy"},
		{map[string]string{"cleanup.policy": ""}, "must be delete, compact or compact,delete"},
		{map[string]string{"min.cleanable.dirty.ratio": "1.5"}, "between 0 and 1"},
		{map[string]string{"max.compaction.lag.ms": "0"}, "at least 1"},
		{map[string]string{"delete.retention.ms": "-1"}, "at least 0"},
		{map[string]string{"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, "min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"},
		{map[string]string{"min.insync.replicas": "2"}, "must be 1"},
		{map[string]string{"retention.ms": "-2"}, "at least -1"},
		{map[string]string{"segment.bytes": "1"}, "at least 14"},
		{map[string]string{"message.timestamp.type": "Now"}, "CreateTime, LogAppendTime"},
		{map[string]string{"no.such.config": "1"}, "unknown topic config"},
		{map[string]string{"max.message.bytes": "big"}, "not an int"},
	} {
		_, err := g.r.CreateTopic("t", 1, 1, tc.configs, false)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: %v, want INVALID_CONFIG saying %q", tc.configs, err, tc.msg)
		}
	}
	if _, ok := g.r.Topic("t"); ok {
		t.Fatal("an invalid create made a topic")
	}
}

// SET, DELETE, APPEND and SUBTRACT; APPEND/SUBTRACT only on list configs;
// a failing op changes nothing.
func TestIncrementalAlter(t *testing.T) {
	g := newGateway(t, Config{RetentionCheckInterval: -1})
	g.create("t", 1, map[string]string{"retention.ms": "1000", "segment.ms": "5000"})
	alter := func(ops ...topicconfig.Op) error { return g.r.IncrementalAlterTopicConfigs("t", ops, false) }
	if err := alter(topicconfig.Op{Name: "retention.bytes", Op: topicconfig.OpSet, Value: "100"}, topicconfig.Op{Name: "segment.ms", Op: topicconfig.OpDelete}); err != nil {
		t.Fatal(err)
	}
	tp, _ := g.r.Topic("t")
	if len(tp.Configs) != 2 || tp.Configs["retention.ms"] != "1000" || tp.Configs["retention.bytes"] != "100" {
		t.Fatalf("after set/delete: %v", tp.Configs)
	}
	if err := alter(topicconfig.Op{Name: "leader.replication.throttled.replicas", Op: topicconfig.OpAppend, Value: "0:0"}); err != nil {
		t.Fatal(err)
	}
	if err := alter(topicconfig.Op{Name: "leader.replication.throttled.replicas", Op: topicconfig.OpAppend, Value: "1:0,0:0"}); err != nil {
		t.Fatal(err)
	}
	if tp, _ = g.r.Topic("t"); tp.Configs["leader.replication.throttled.replicas"] != "0:0,1:0" {
		t.Fatalf("append: %v", tp.Configs)
	}
	if err := alter(topicconfig.Op{Name: "leader.replication.throttled.replicas", Op: topicconfig.OpSubtract, Value: "0:0"}); err != nil {
		t.Fatal(err)
	}
	if tp, _ = g.r.Topic("t"); tp.Configs["leader.replication.throttled.replicas"] != "1:0" {
		t.Fatalf("subtract: %v", tp.Configs)
	}
	// APPEND starts from the default: delete + shred is refused.
	if err := alter(topicconfig.Op{Name: "cleanup.policy", Op: topicconfig.OpAppend, Value: "shred"}); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "not a cleanup policy") {
		t.Fatalf("append shred: %v", err)
	}
	if err := alter(topicconfig.Op{Name: "cleanup.policy", Op: topicconfig.OpAppend, Value: "delete"}); err != nil {
		t.Fatalf("append delete: %v", err)
	}
	if err := alter(topicconfig.Op{Name: "retention.ms", Op: topicconfig.OpAppend, Value: "5"}); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "not a list config") {
		t.Fatalf("append to a long: %v", err)
	}
	if err := alter(topicconfig.Op{Name: "retention.ms", Op: topicconfig.OpSet, Value: "7"}, topicconfig.Op{Name: "segment.bytes", Op: topicconfig.OpSubtract, Value: "5"}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("subtract from an int: %v", err)
	}
	if tp, _ = g.r.Topic("t"); tp.Configs["retention.ms"] != "1000" {
		t.Fatalf("a failed alter changed configs: %v", tp.Configs)
	}
	if err := g.r.IncrementalAlterTopicConfigs("t", []topicconfig.Op{{Name: "retention.ms", Op: topicconfig.OpSet, Value: "9"}}, true); err != nil {
		t.Fatal(err)
	}
	if tp, _ = g.r.Topic("t"); tp.Configs["retention.ms"] != "1000" {
		t.Fatalf("validate-only changed configs: %v", tp.Configs)
	}
	g.reopen()
	if tp, _ = g.r.Topic("t"); tp.Configs["leader.replication.throttled.replicas"] != "1:0" || tp.Configs["cleanup.policy"] != "delete" {
		t.Fatalf("after reopen: %v", tp.Configs)
	}
}
