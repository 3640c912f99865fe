package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"1024", 1024}, {"50MB", 50e6}, {"5GB", 5e9}, {"5gb", 5e9},
		{"1MiB", 1 << 20}, {"2KiB", 2048}, {"1.5G", 1.5e9}, {" 7 MB ", 7e6},
	} {
		got, err := parseBytes(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "MB", "-1", "x5"} {
		if _, err := parseBytes(bad); err == nil {
			t.Errorf("parseBytes(%q) succeeded", bad)
		}
	}
}

func TestParseFlagsReportsEveryProblem(t *testing.T) {
	_, err := parseFlags([]string{"--systems", "kafka-zk", "--workloads", "0,16", "--records", "1", "--probes", "0",
		"--rebalance-members", "10,0", "--share-partitions", "1", "--group-heartbeat", "10s",
		"--rebalance-protocols", "848,sticky", "--rebalance-trace", "-1s"})
	if !errors.Is(err, errConfig) {
		t.Fatalf("want errConfig, got %v", err)
	}
	for _, want := range []string{`"kafka-zk"`, "workload 0", "workload 16", "--records", "--probes",
		"--rebalance-members", "--share-partitions", "--group-heartbeat", `"sticky"`, "--rebalance-trace"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	cfg, err := parseFlags([]string{"--partitions-scale", "5", "--big-bytes", "50MB"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TopicsScale != 5 || cfg.BigBytes != 50e6 || len(cfg.Systems) != len(allSystems) {
		t.Errorf("unexpected config %+v", cfg)
	}
}

// --compression names franz-go's codecs; the payload becomes compressible.
func TestCompressionFlag(t *testing.T) {
	if _, err := parseFlags([]string{"--compression", "brotli"}); !errors.Is(err, errConfig) || !strings.Contains(err.Error(), "brotli") {
		t.Fatalf("unknown codec: %v", err)
	}
	for name := range compressionCodecs {
		cfg, err := parseFlags([]string{"--compression", name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b := &bench{cfg: cfg}
		if got, want := b.codec(), compressionCodecs[name]; got != want {
			t.Fatalf("%s: codec %v, want %v", name, got, want)
		}
	}
	plain, zipped := newBench(&config{RecordSize: 64}, nil), newBench(&config{RecordSize: 64, Compression: "zstd"}, nil)
	for _, c := range zipped.payload {
		if c < 'a' || c >= 'a'+16 {
			t.Fatalf("compressed runs' payload %q is not text", zipped.payload)
		}
	}
	if len(plain.payload) != 64 {
		t.Fatal(len(plain.payload))
	}
}

func TestPercentilesNearestRank(t *testing.T) {
	var s []time.Duration
	for i := 1000; i >= 1; i-- { // unsorted on purpose
		s = append(s, time.Duration(i)*time.Millisecond)
	}
	got := percentiles("ack", s, 0.5, 0.99, 0.999)
	want := []Percentile{{"ack p50", 500}, {"ack p99", 990}, {"ack p99.9", 999}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("percentile %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if percentiles("x", nil, 0.5) != nil {
		t.Error("no samples must give no figures")
	}
}

// TestReportOutputs checks that error cells survive into the table, the
// JSON and the chart without failing the run (invariant 1).
func TestReportOutputs(t *testing.T) {
	results := []Result{
		{System: "kfake", Workload: workloadNames[0], MBps: 300, RecordsPerSec: 3e5},
		{System: "kfake", Workload: workloadNames[3], Latency: []Percentile{{"ack p50", 4}}},
		{System: "kgateway", Workload: workloadNames[0], Error: "start: boom | bad"},
	}
	var sb strings.Builder
	writeTable(&sb, results)
	if !strings.Contains(sb.String(), "| kgateway | 1 produce 1p×1 | ERROR | ERROR | – | – | – | error: start: boom \\| bad |") {
		t.Errorf("table:\n%s", sb.String())
	}
	dir := t.TempDir()
	rep := newReport(&config{})
	rep.Results = results
	if err := writeJSON(filepath.Join(dir, "r.json"), rep); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "r.png")
	if err := writeChart(png, results); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() == 0 {
		t.Fatalf("chart not written: %v", err)
	}
	again := filepath.Join(dir, "again.png")
	if code := render(&config{Render: filepath.Join(dir, "r.json"), Chart: again}); code != 0 {
		t.Fatalf("render exit code %d", code)
	}
	if _, err := os.Stat(again); err != nil {
		t.Fatalf("render drew no chart: %v", err)
	}
}

// TestLoadReport re-renders both a file from before --rounds (no summary,
// no rounds, no disk) and a new one, whose summary is shown as written.
func TestLoadReport(t *testing.T) {
	dir := t.TempDir()
	old := `{"config": {"systems": ["kgateway", "kfake"]}, "results": [
		{"system": "kfake", "workload": "1 produce 1p×1", "mb_per_s": 244, "seconds": 4},
		{"system": "kgateway", "workload": "1 produce 1p×1", "mb_per_s": 692, "seconds": 1.5}]}`
	rep := &Report{
		Host:    hostInfo{Disk: &diskInfo{Sync4kP50Ms: 1, Sync4kP99Ms: 2, SyncWriteMBps: 400}},
		Config:  &config{Systems: []string{"kfake"}},
		Results: []Result{{System: "kfake", Workload: workloadNames[0], MBps: 1}, {System: "kfake", Workload: workloadNames[0], Round: 1, MBps: 3}},
		Summary: []Result{{System: "kfake", Workload: workloadNames[0], MBps: 2, Notes: "2 rounds: MB/s 1.0–3.0"}},
	}
	newPath := filepath.Join(dir, "new.json")
	if err := writeJSON(newPath, rep); err != nil {
		t.Fatal(err)
	}
	oldPath := filepath.Join(dir, "old.json")
	if err := os.WriteFile(oldPath, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path      string
		want, not []string
		wantRows  int
		first     string // the configured order, not the results', comes first
	}{
		{oldPath, []string{"| kgateway | 1 produce 1p×1 | 692 |", "| kfake | 1 produce 1p×1 | 244 |"}, []string{"disk"}, 2, "kgateway"},
		{newPath, []string{"disk (work dir): 4 KiB", "| kfake | 1 produce 1p×1 | 2.0 |", "2 rounds: MB/s 1.0–3.0"}, nil, 1, "kfake"},
	} {
		got, err := loadReport(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		printReport(&sb, got)
		out := sb.String()
		if len(got.Summary) != tc.wantRows || got.Summary[0].System != tc.first {
			t.Errorf("%s: summary %+v, want %d rows, %s first", tc.path, got.Summary, tc.wantRows, tc.first)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.path, w, out)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out, n) {
				t.Errorf("%s: output has %q:\n%s", tc.path, n, out)
			}
		}
	}
}

// --fetch-partition-bytes sets workload 3's per-partition fetch size
// (sizes as --big-bytes takes them); unset it is 0, franz-go's default,
// and a size below 1 KiB is refused.
func TestFetchPartitionBytesFlag(t *testing.T) {
	cfg, err := parseFlags(nil)
	if err != nil || cfg.FetchPartitionBytes != 0 {
		t.Fatalf("default: %d, %v", cfg.FetchPartitionBytes, err)
	}
	if cfg, err = parseFlags([]string{"--fetch-partition-bytes", "8MiB"}); err != nil || cfg.FetchPartitionBytes != 8<<20 {
		t.Fatalf("8MiB: %d, %v", cfg.FetchPartitionBytes, err)
	}
	if _, err := parseFlags([]string{"--fetch-partition-bytes", "100"}); err == nil {
		t.Fatal("a 100-byte fetch size was accepted")
	}
}
