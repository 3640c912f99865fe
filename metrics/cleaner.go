package metrics

import "github.com/prometheus/client_golang/prometheus"

// CleanerStat is the log cleaner's work (resolver CleanerStats), in a
// Snapshot.
type CleanerStat struct {
	Passes, BytesRead, BytesWritten int64
	Recopy, MaxDirtyRatio           float64
	MaxLagMs                        int64
	LastPassSeconds, PassSeconds    float64
}

var (
	descCleanerPasses  = desc("cleaner_passes_total", "Log cleaner passes completed.")
	descCleanerRead    = desc("cleaner_read_bytes_total", "Record batch bytes the log cleaner read.")
	descCleanerWritten = desc("cleaner_written_bytes_total", "Record batch bytes the log cleaner wrote to new generations.")
	descCleanerRecopy  = desc("cleaner_recopy_ratio", "Bytes written over bytes of the range rewritten, last pass.")
	descCleanerRatio   = desc("cleaner_max_dirty_ratio", "Largest dirty ratio of a compacted partition.")
	descCleanerLag     = desc("cleaner_max_compaction_lag_seconds", "Age of the oldest uncleaned entry of a compacted partition.")
	descCleanerLast    = desc("cleaner_last_pass_seconds", "Duration of the last pass.")
	descCleanerTime    = desc("cleaner_pass_seconds_total", "Time spent in passes.")
)

var cleanerDescs = []*prometheus.Desc{descCleanerPasses, descCleanerRead, descCleanerWritten, descCleanerRecopy,
	descCleanerRatio, descCleanerLag, descCleanerLast, descCleanerTime}

func collectCleaner(ch chan<- prometheus.Metric, s CleanerStat) {
	m := func(d *prometheus.Desc, t prometheus.ValueType, v float64) {
		ch <- prometheus.MustNewConstMetric(d, t, v)
	}
	m(descCleanerPasses, prometheus.CounterValue, float64(s.Passes))
	m(descCleanerRead, prometheus.CounterValue, float64(s.BytesRead))
	m(descCleanerWritten, prometheus.CounterValue, float64(s.BytesWritten))
	m(descCleanerRecopy, prometheus.GaugeValue, s.Recopy)
	m(descCleanerRatio, prometheus.GaugeValue, s.MaxDirtyRatio)
	m(descCleanerLag, prometheus.GaugeValue, float64(s.MaxLagMs)/1000)
	m(descCleanerLast, prometheus.GaugeValue, s.LastPassSeconds)
	m(descCleanerTime, prometheus.CounterValue, s.PassSeconds)
}
