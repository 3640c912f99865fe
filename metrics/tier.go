package metrics

import "github.com/prometheus/client_golang/prometheus"

// TierStat is the object tier's work (tier Stats), in a Snapshot;
// all counters since the server opened. Zero without an object store.
type TierStat struct {
	Uploads, UploadBytes, UploadFailures int64
	Offloads, Deletes, Orphans           int64
	ReadBytes, CacheHits, CacheMisses    int64
	Retries, Failures, Corrupt, Stale    int64
}

var tierCounters = []struct {
	desc *prometheus.Desc
	of   func(TierStat) int64
}{
	{desc("tier_uploads_total", "Ledgers uploaded and published to the object store."), func(s TierStat) int64 { return s.Uploads }},
	{desc("tier_upload_bytes_total", "Object bytes published."), func(s TierStat) int64 { return s.UploadBytes }},
	{desc("tier_upload_failures_total", "Upload attempts that failed (their object is deleted)."), func(s TierStat) int64 { return s.UploadFailures }},
	{desc("tier_offloads_total", "Ledgers whose local file was removed after publication."), func(s TierStat) int64 { return s.Offloads }},
	{desc("tier_deletes_total", "Objects deleted after retention or deletion."), func(s TierStat) int64 { return s.Deletes }},
	{desc("tier_orphans_total", "Orphan objects (crashed or abandoned uploads) deleted."), func(s TierStat) int64 { return s.Orphans }},
	{desc("tier_read_bytes_total", "Frame bytes served from objects."), func(s TierStat) int64 { return s.ReadBytes }},
	{desc("tier_cache_hits_total", "Object chunk reads served from the cache."), func(s TierStat) int64 { return s.CacheHits }},
	{desc("tier_cache_misses_total", "Object chunks fetched from the store."), func(s TierStat) int64 { return s.CacheMisses }},
	{desc("tier_retries_total", "Object-store calls tried again (errors, timeouts, throttling)."), func(s TierStat) int64 { return s.Retries }},
	{desc("tier_failures_total", "Object-store calls that failed."), func(s TierStat) int64 { return s.Failures }},
	{desc("tier_corrupt_total", "Corrupt or truncated objects found (never served)."), func(s TierStat) int64 { return s.Corrupt }},
	{desc("tier_stale_total", "Object candidates found changed after pinning (the next was tried)."), func(s TierStat) int64 { return s.Stale }},
}

func describeTier(ch chan<- *prometheus.Desc) {
	for _, c := range tierCounters {
		ch <- c.desc
	}
}

func collectTier(ch chan<- prometheus.Metric, s TierStat) {
	for _, c := range tierCounters {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(c.of(s)))
	}
}
