package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func value(t *testing.T, scrape, series string) float64 {
	t.Helper()
	v, ok := metricValue(scrape, series)
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s: %v", series, err)
	}
	return f
}

// laneSum sums a group commit series over its lanes.
func laneSum(t *testing.T, scrape, series string) float64 {
	t.Helper()
	var sum float64
	for _, lane := range []string{"files", "bulk", "journal", "replicated"} {
		sum += value(t, scrape, series+`{lane="`+lane+`"}`)
	}
	return sum
}

// Metrics move as traffic flows: request counters, bytes per topic,
// storage gauges, and consumer lag per group and partition after a commit.
func TestMetricsFollowTraffic(t *testing.T) {
	g := startTest(t, t.TempDir())
	if code, body := httpGet(t, g, "/healthz"); code != 200 {
		t.Fatalf("healthz %d %s", code, body)
	}
	if code, body := httpGet(t, g, "/readyz"); code != 200 {
		t.Fatalf("readyz %d %s", code, body)
	}
	_, before := httpGet(t, g, "/metrics")
	if value(t, before, `kgateway_requests_total{api="Produce"}`) != 0 {
		t.Fatal("produce counted before any produce")
	}

	cl := newClient(t, g, kgo.ConsumeTopics("m"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	produce(t, cl, "m", "a", "bb", "ccc", "dddd", "eeeee")
	fetched := 0
	for fetched < 5 {
		fs := cl.PollFetches(testCtx(t))
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		fetched += fs.NumRecords()
	}
	adm := kadm.NewClient(cl)
	offs := kadm.Offsets{}
	offs.AddOffset("m", 0, 2, -1)
	if _, err := adm.CommitOffsets(testCtx(t), "grp", offs); err != nil {
		t.Fatal(err)
	}

	_, after := httpGet(t, g, "/metrics")
	for _, series := range []string{"kgateway_cleaner_passes_total", "kgateway_cleaner_written_bytes_total", "kgateway_cleaner_max_dirty_ratio"} {
		if _, ok := metricValue(after, series); !ok {
			t.Errorf("%s missing from the scrape", series)
		}
	}
	checks := []struct {
		series string
		min    float64
	}{
		{`kgateway_requests_total{api="Produce"}`, 5},
		{`kgateway_requests_total{api="Fetch"}`, 1},
		{`kgateway_requests_total{api="OffsetCommit"}`, 1},
		{`kgateway_request_bytes_total{api="Produce"}`, 5 * 60},
		{`kgateway_response_bytes_total{api="Fetch"}`, 1},
		{`kgateway_request_duration_seconds_count{api="Produce"}`, 5},
		{`kgateway_produce_bytes_total{topic="m"}`, 5 * 61},
		{`kgateway_fetch_bytes_total{topic="m"}`, 5 * 61},
		{`kgateway_partition_entries{partition="0",topic="m"}`, 5},
		{`kgateway_partition_high_watermark{partition="0",topic="m"}`, 5},
		{`kgateway_partitions`, 1},
		{`kgateway_ledgers`, 1},
		{`kgateway_disk_bytes`, 1},
		{`kgateway_connections`, 1},
		{`kgateway_consumer_group_committed_offset{group="grp",partition="0",topic="m"}`, 2},
	}
	for _, c := range checks {
		if v := value(t, after, c.series); v < c.min {
			t.Errorf("%s = %v, want >= %v", c.series, v, c.min)
		}
	}
	// Five synchronous produces: five group commits at least (the
	// topic's creation syncs no segment file), their bytes counted, each
	// under the lane that made it durable.
	if v := laneSum(t, after, `kgateway_group_commit_sync_seconds_count`); v < 5 {
		t.Errorf("group commits = %v, want >= 5", v)
	}
	if v := laneSum(t, after, `kgateway_group_commit_bytes_sum`); v < 5*61 {
		t.Errorf("group commit bytes = %v, want >= %v", v, 5*61)
	}
	if v := value(t, after, `kgateway_consumer_group_lag{group="grp",partition="0",topic="m"}`); v != 3 {
		t.Errorf("lag = %v, want 5-2 = 3\n", v)
	}

	// Lag is computed at scrape time: two more records raise it.
	produce(t, cl, "m", "f", "g")
	_, later := httpGet(t, g, "/metrics")
	if v := value(t, later, `kgateway_consumer_group_lag{group="grp",partition="0",topic="m"}`); v != 5 {
		t.Errorf("lag after produce = %v, want 7-2 = 5", v)
	}
}

// Several servers in one process: each has its own registry (a registry per server).
func TestMetricsRegistryPerServer(t *testing.T) {
	a, b := startTest(t, t.TempDir()), startTest(t, t.TempDir())
	produce(t, newClient(t, a), "only-a", "x")
	_, sa := httpGet(t, a, "/metrics")
	_, sb := httpGet(t, b, "/metrics")
	if value(t, sa, `kgateway_produce_bytes_total{topic="only-a"}`) == 0 {
		t.Fatal("a lacks its produce")
	}
	if _, ok := metricValue(sb, `kgateway_produce_bytes_total{topic="only-a"}`); ok {
		t.Fatal("b reports a's produce")
	}
}

// The profiler is served on the metrics listener only when
// debug.pprof.enable is set: off by default, the paths are not found;
// on, a CPU profile can be taken and the metrics are still served.
func TestDebugPprofOptIn(t *testing.T) {
	off := startTest(t, t.TempDir())
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/profile?seconds=1"} {
		if code, _ := httpGet(t, off, path); code != 404 {
			t.Fatalf("pprof off: %s answered %d, want 404", path, code)
		}
	}
	on := startTestWith(t, t.TempDir(), func(c *Config) { c.DebugPprof = true })
	if code, body := httpGet(t, on, "/debug/pprof/"); code != 200 || !strings.Contains(body, "goroutine") {
		t.Fatalf("pprof index: %d %.200s", code, body)
	}
	code, body := httpGet(t, on, "/debug/pprof/profile?seconds=1")
	// A CPU profile is a gzipped protocol buffer.
	if code != 200 || len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
		t.Fatalf("cpu profile: %d, %d bytes", code, len(body))
	}
	if code, body := httpGet(t, on, "/metrics"); code != 200 || !strings.Contains(body, "kgateway_") {
		t.Fatalf("metrics beside pprof: %d", code)
	}
}
