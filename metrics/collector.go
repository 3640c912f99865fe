package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// PartitionStat is one partition's storage view at scrape time.
type PartitionStat struct {
	Topic         string
	Partition     int32
	LogStart      int64
	HighWatermark int64
	Ledgers       int
	Entries       int64
	Bytes         int64 // segment file bytes of its ledgers
}

// GroupOffset is one committed offset of a consumer group.
type GroupOffset struct {
	Group     string
	Topic     string
	Partition int32
	Committed int64
}

// Snapshot is everything the scrape-time collector reports (nothing on the hot path).
type Snapshot struct {
	Partitions  []PartitionStat
	Groups      []GroupOffset
	DiskBytes   int64 // everything under the data directory
	Connections int
	InFlight    int64
	Cleaner     CleanerStat
	Tier        TierStat
	Cluster     *ClusterStat // nil on a single node
}

// Source produces a Snapshot; package server wires it to the resolver, the
// offset store and the server. It is called once per scrape.
type Source func() Snapshot

var (
	descTopics     = desc("topics", "Topics.")
	descPartitions = desc("partitions", "Partitions of all topics.")
	descLedgers    = desc("partition_ledgers", "Ledgers (segments) of a partition.", "topic", "partition")
	descEntries    = desc("partition_entries", "Entries (record batches) held by a partition's ledgers.", "topic", "partition")
	descPartBytes  = desc("partition_bytes", "Segment file bytes of a partition.", "topic", "partition")
	descHWM        = desc("partition_high_watermark", "High watermark (end of the last durable entry).", "topic", "partition")
	descLogStart   = desc("partition_log_start_offset", "Log start offset.", "topic", "partition")
	descLedgersAll = desc("ledgers", "Ledgers (segments) of all partitions.")
	descDisk       = desc("disk_bytes", "Bytes under the data directory (segments, index, offsets).")
	descConns      = desc("connections", "Open Kafka client connections.")
	descInFlight   = desc("requests_in_flight", "Requests whose handler is running.")
	descCommitted  = desc("consumer_group_committed_offset", "Committed offset of a group on a partition.", "group", "topic", "partition")
	descLag        = desc("consumer_group_lag", "High watermark minus committed offset (0 when the commit is at or past it).", "group", "topic", "partition")
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
}

type collector struct{ src Source }

// Register adds the scrape-time collector over src to m's registry.
func (m *Metrics) Register(src Source) error {
	return m.Registry.Register(collector{src})
}

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTopics, descPartitions, descLedgers, descEntries, descPartBytes,
		descHWM, descLogStart, descLedgersAll, descDisk, descConns, descInFlight, descCommitted, descLag} {
		ch <- d
	}
	for _, d := range cleanerDescs {
		ch <- d
	}
	describeTier(ch)
	for _, d := range clusterGaugeDescs {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.src()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	topics := make(map[string]bool)
	hwm := make(map[[2]string]int64, len(s.Partitions))
	ledgers := 0
	for _, p := range s.Partitions {
		topics[p.Topic] = true
		part := itoa(p.Partition)
		hwm[[2]string{p.Topic, part}] = p.HighWatermark
		ledgers += p.Ledgers
		gauge(descLedgers, float64(p.Ledgers), p.Topic, part)
		gauge(descEntries, float64(p.Entries), p.Topic, part)
		gauge(descPartBytes, float64(p.Bytes), p.Topic, part)
		gauge(descHWM, float64(p.HighWatermark), p.Topic, part)
		gauge(descLogStart, float64(p.LogStart), p.Topic, part)
	}
	gauge(descTopics, float64(len(topics)))
	gauge(descPartitions, float64(len(s.Partitions)))
	gauge(descLedgersAll, float64(ledgers))
	gauge(descDisk, float64(s.DiskBytes))
	gauge(descConns, float64(s.Connections))
	gauge(descInFlight, float64(s.InFlight))
	collectCleaner(ch, s.Cleaner)
	collectTier(ch, s.Tier)
	collectCluster(ch, s.Cluster)
	for _, g := range s.Groups {
		part := itoa(g.Partition)
		gauge(descCommitted, float64(g.Committed), g.Group, g.Topic, part)
		if end, ok := hwm[[2]string{g.Topic, part}]; ok {
			gauge(descLag, float64(max(end-g.Committed, 0)), g.Group, g.Topic, part)
		}
	}
}
