package resolver

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kgateway/kgateway/resolver/dynconfig"
	"github.com/kgateway/kgateway/topicconfig"
)

// Broker configs: the resolver's Config under Kafka's broker names, for
// DescribeConfigs on the BROKER resource and as the defaults of the topic
// configs that name them (configSpec.broker). Set by flags at start; the
// dynamic ones can change at run time (broker_dynamic.go), the rest are
// read-only to AlterConfigs.

// brokerSpec is one described broker config: Kafka's default, its type
// and how to read it from a (defaulted) Config.
type brokerSpec struct {
	def   string
	typ   topicconfig.Type
	value func(c Config) string
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

var brokerConfigs = map[string]brokerSpec{
	"auto.create.topics.enable":           {"true", topicconfig.TypeBoolean, func(c Config) string { return strconv.FormatBool(c.AutoCreate) }},
	"compression.type":                    {"producer", topicconfig.TypeString, func(Config) string { return "producer" }},
	"log.cleanup.policy":                  {"delete", topicconfig.TypeList, func(c Config) string { return c.CleanupPolicy }},
	"log.cleaner.backoff.ms":              {itoa(defaultCleanerBackoff.Milliseconds()), topicconfig.TypeLong, func(c Config) string { return itoa(c.Cleaner.Backoff.Milliseconds()) }},
	"log.cleaner.dedupe.buffer.size":      {itoa(defaultDedupeBufferSize), topicconfig.TypeLong, func(c Config) string { return itoa(c.Cleaner.DedupeBufferSize) }},
	"log.cleaner.delete.retention.ms":     {itoa(topicconfig.DefaultDeleteRetentionMs), topicconfig.TypeLong, func(c Config) string { return itoa(c.Cleaner.DeleteRetentionMs) }},
	"log.cleaner.enable":                  {"true", topicconfig.TypeBoolean, func(c Config) string { return strconv.FormatBool(c.Cleaner.Threads > 0) }},
	"log.cleaner.io.max.bytes.per.second": {javaDouble(math.MaxFloat64), topicconfig.TypeDouble, func(c Config) string { return javaDouble(c.Cleaner.IOMaxBytesPerSecond) }},
	"log.cleaner.max.compaction.lag.ms":   {topicconfig.MaxLong, topicconfig.TypeLong, func(c Config) string { return itoa(c.Cleaner.MaxCompactionLagMs) }},
	"log.cleaner.min.cleanable.ratio":     {"0.5", topicconfig.TypeDouble, func(c Config) string { return strconv.FormatFloat(c.Cleaner.MinCleanableRatio, 'f', -1, 64) }},
	"log.cleaner.min.compaction.lag.ms":   {"0", topicconfig.TypeLong, func(c Config) string { return itoa(c.Cleaner.MinCompactionLagMs) }},
	"log.cleaner.threads":                 {"1", topicconfig.TypeInt, func(c Config) string { return itoa(int64(max(c.Cleaner.Threads, 0))) }},
	"log.local.retention.bytes":           {"-2", topicconfig.TypeLong, func(c Config) string { return itoa(c.LocalRetentionBytes) }},
	"log.local.retention.ms":              {"-2", topicconfig.TypeLong, func(c Config) string { return itoa(c.LocalRetentionMs) }},
	"remote.log.storage.system.enable":    {"false", topicconfig.TypeBoolean, func(c Config) string { return strconv.FormatBool(c.Tier != nil) }},
	"remote.log.manager.task.interval.ms": {itoa(defaultTierInterval.Milliseconds()), topicconfig.TypeLong, func(c Config) string { return itoa(c.TierInterval.Milliseconds()) }},
	"log.message.timestamp.type":          {"CreateTime", topicconfig.TypeString, func(c Config) string { return c.MessageTimestampType }},
	"log.retention.bytes":                 {itoa(topicconfig.DefaultRetentionBytes), topicconfig.TypeLong, func(c Config) string { return itoa(c.RetentionBytes) }},
	"log.retention.check.interval.ms":     {itoa(defaultRetentionCheckInterval.Milliseconds()), topicconfig.TypeLong, func(c Config) string { return itoa(c.RetentionCheckInterval.Milliseconds()) }},
	"log.retention.ms":                    {itoa(topicconfig.DefaultRetentionMs), topicconfig.TypeLong, func(c Config) string { return itoa(c.RetentionMs) }},
	"log.roll.ms":                         {itoa(topicconfig.DefaultSegmentAge.Milliseconds()), topicconfig.TypeLong, func(c Config) string { return itoa(c.Ledger.SegmentAge.Milliseconds()) }},
	"log.segment.bytes":                   {itoa(topicconfig.DefaultSegmentBytes), topicconfig.TypeInt, func(c Config) string { return itoa(c.Ledger.SegmentBytes) }},
	"message.max.bytes":                   {itoa(topicconfig.DefaultMaxMessageBytes), topicconfig.TypeInt, func(c Config) string { return itoa(int64(c.MaxMessageBytes)) }},
	"min.insync.replicas":                 {"1", topicconfig.TypeInt, func(Config) string { return "1" }},
	"num.partitions":                      {"1", topicconfig.TypeInt, func(c Config) string { return itoa(int64(c.NumPartitions)) }},
}

// brokerValues maps each broker config name to its effective value: a
// dynamic one (package dynconfig) over the flag's.
func (r *Resolver) brokerValues() map[string]string {
	return dynconfig.Values(r.StaticBrokerConfigs(), r.BrokerLayers())
}

// BrokerConfigs describes the broker configs, sorted by name, each with
// its synonyms in precedence order: DYNAMIC_BROKER_CONFIG and
// DYNAMIC_DEFAULT_BROKER_CONFIG (broker_dynamic.go), STATIC_BROKER_CONFIG
// when a flag set it apart from Kafka's default, DEFAULT_CONFIG. Only the
// dynamic ones are writable.
func (r *Resolver) BrokerConfigs() []topicconfig.Entry {
	out := make([]topicconfig.Entry, 0, len(brokerConfigs))
	for name, spec := range brokerConfigs {
		e := topicconfig.Entry{Name: name, Default: true, ReadOnly: !dynconfig.Dynamic(name), Type: spec.typ}
		e.Synonyms = r.brokerSynonyms(name)
		e.Default = len(e.Synonyms) == 0
		e.Synonyms = append(e.Synonyms, topicconfig.Synonym{Name: name, Value: spec.def, Source: topicconfig.SourceDefault})
		e.Value, e.Source = e.Synonyms[0].Value, e.Synonyms[0].Source
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b topicconfig.Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}
