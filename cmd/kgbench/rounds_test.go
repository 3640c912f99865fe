package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRoundOrder(t *testing.T) {
	systems := []string{"kgateway", "kfake", "kfake-durable"}
	for _, tc := range []struct {
		systems []string
		round   int
		want    []string
	}{
		{systems, 0, []string{"kgateway", "kfake", "kfake-durable"}},
		{systems, 1, []string{"kfake", "kfake-durable", "kgateway"}},
		{systems, 2, []string{"kfake-durable", "kgateway", "kfake"}},
		{systems, 3, []string{"kgateway", "kfake", "kfake-durable"}},
		{[]string{"kfake"}, 5, []string{"kfake"}},
		{nil, 1, []string{}},
	} {
		if got := roundOrder(tc.systems, tc.round); !slices.Equal(got, tc.want) {
			t.Errorf("roundOrder(%v, %d) = %v, want %v", tc.systems, tc.round, got, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5}, // even: mean of the two middle values
		{[]float64{10, 10}, 10},
		{[]float64{5, 1, 100, 2, 3}, 3},
	} {
		in := slices.Clone(tc.in)
		if got := median(in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("median(%v) reordered its input to %v", tc.in, in)
		}
	}
}

func TestSummarize(t *testing.T) {
	w1, w4 := workloadNames[0], workloadNames[3]
	lat := func(p50, p99 float64) []Percentile { return []Percentile{{"ack p50", p50}, {"ack p99", p99}} }
	for _, tc := range []struct {
		name    string
		systems []string
		in      []Result
		want    []Result
	}{{
		name:    "one round is returned as it is",
		systems: []string{"a", "b"},
		in: []Result{
			{System: "a", Workload: w1, Records: 10, MBps: 300, RecordsPerSec: 3e5, Seconds: 1, ServerCPUSeconds: 0.5, Notes: "n"},
			{System: "b", Workload: w1, Error: "start: boom"},
		},
		want: []Result{
			{System: "a", Workload: w1, Records: 10, MBps: 300, RecordsPerSec: 3e5, Seconds: 1, ServerCPUSeconds: 0.5, Notes: "n"},
			{System: "b", Workload: w1, Error: "start: boom"},
		},
	}, {
		name:    "odd count: medians, configured order despite rotation",
		systems: []string{"a", "b"},
		in: []Result{
			{System: "a", Workload: w1, Round: 0, MBps: 412, RecordsPerSec: 4, Records: 8, ServerCPUSeconds: 3, RSSBytes: 30, PeakRSSBytes: 60},
			{System: "b", Workload: w1, Round: 0, MBps: 1},
			{System: "b", Workload: w1, Round: 1, MBps: 2},
			{System: "a", Workload: w1, Round: 1, MBps: 455, RecordsPerSec: 5, Records: 8, ServerCPUSeconds: 1, RSSBytes: 10, PeakRSSBytes: 20},
			{System: "a", Workload: w1, Round: 2, MBps: 420, RecordsPerSec: 6, Records: 8, ServerCPUSeconds: 2, RSSBytes: 20, PeakRSSBytes: 40},
			{System: "b", Workload: w1, Round: 2, MBps: 3},
		},
		want: []Result{
			{System: "a", Workload: w1, MBps: 420, RecordsPerSec: 5, Records: 8, ServerCPUSeconds: 2, RSSBytes: 20, PeakRSSBytes: 40,
				Notes: "3 rounds: MB/s 412–455"},
			{System: "b", Workload: w1, MBps: 2, Notes: "3 rounds: MB/s 1.0–3.0"},
		},
	}, {
		name:    "even count: mean of the middle two; latency per percentile",
		systems: []string{"a"},
		in: []Result{
			{System: "a", Workload: w4, Round: 0, Latency: lat(1, 10), Notes: "offered"},
			{System: "a", Workload: w4, Round: 1, Latency: lat(2, 30), Notes: "offered again"},
		},
		want: []Result{
			{System: "a", Workload: w4, Latency: lat(1.5, 20), Notes: "offered; 2 rounds: ack p50 1.00–2.00 ms"},
		},
	}, {
		name:    "errored rounds are left out of the medians",
		systems: []string{"a"},
		in: []Result{
			{System: "a", Workload: w1, Round: 0, Error: "timeout"},
			{System: "a", Workload: w1, Round: 1, MBps: 100},
			{System: "a", Workload: w1, Round: 2, MBps: 300},
		},
		want: []Result{
			{System: "a", Workload: w1, Round: 1, MBps: 200, Notes: "2 of 3 rounds ok: MB/s 100–300"},
		},
	}, {
		name:    "every round errored: the first error",
		systems: []string{"a"},
		in: []Result{
			{System: "a", Workload: w1, Round: 0, Error: "first"},
			{System: "a", Workload: w1, Round: 1, Error: "second"},
		},
		want: []Result{{System: "a", Workload: w1, Round: 0, Error: "first"}},
	}, {
		name:    "systems missing from the list follow it",
		systems: []string{"b"},
		in: []Result{
			{System: "c", Workload: w1, MBps: 1},
			{System: "b", Workload: w1, MBps: 2},
		},
		want: []Result{{System: "b", Workload: w1, MBps: 2}, {System: "c", Workload: w1, MBps: 1}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := summarize(tc.systems, tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestServerArgs(t *testing.T) {
	for _, tc := range []struct {
		name, extra string
		lead, want  []string
	}{
		{"kgateway", "", nil, []string{"--listen", "A", "--data-dir", "D", "--metrics-addr", "127.0.0.1:0"}},
		{"kgateway", " --log-level  warn ", nil, []string{"--listen", "A", "--data-dir", "D", "--metrics-addr", "127.0.0.1:0", "--log-level", "warn"}},
		{"kfake-durable", "--log-level warn", []string{serveKfakeCmd, "--durable"},
			[]string{serveKfakeCmd, "--durable", "--listen", "A", "--data-dir", "D"}},
		// {addr} places the address kgbench dials: then the args, not
		// kgbench's --listen, say how to listen there.
		{"kgateway", "--listeners SASL_SSL://{addr} --advertised-listeners=SASL_SSL://{addr}", nil,
			[]string{"--data-dir", "D", "--metrics-addr", "127.0.0.1:0", "--listeners", "SASL_SSL://A", "--advertised-listeners=SASL_SSL://A"}},
		{"kfake", "--listeners SASL_SSL://{addr}", []string{serveKfakeCmd}, []string{serveKfakeCmd, "--listen", "A", "--data-dir", "D"}},
	} {
		got := serverArgs(&config{KgatewayArgs: tc.extra}, tc.name, tc.lead, "A", "D")
		if !slices.Equal(got, tc.want) {
			t.Errorf("serverArgs(%s, %q) = %q, want %q", tc.name, tc.extra, got, tc.want)
		}
	}
}

func TestParseFlagsRoundsAndArgs(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
		check   func(*config) bool
	}{
		{nil, "", func(c *config) bool { return c.Rounds == 1 && c.DiskProbe && c.KgatewayArgs == "" }},
		{[]string{"--rounds", "3", "--disk-probe=false", "--kgateway-args", "--log-level warn"}, "",
			func(c *config) bool { return c.Rounds == 3 && !c.DiskProbe && c.KgatewayArgs == "--log-level warn" }},
		{[]string{"--rounds", "0"}, "--rounds must be >= 1", nil},
		{[]string{"--server-procs", "1"}, "", func(c *config) bool { return c.ServerProcs == 1 }},
		{[]string{"--server-procs", "-1"}, "--server-procs must be >= 0", nil},
		{nil, "", func(c *config) bool { return c.ClientGCPercent == 400 }},
		{[]string{"--client-gc-percent", "100"}, "", func(c *config) bool { return c.ClientGCPercent == 100 }},
		{[]string{"--client-gc-percent", "0"}, "--client-gc-percent must be >= 1", nil},
		{nil, "", func(c *config) bool {
			return c.TxnRecords == 1000 && c.TxnInterval == 100*time.Millisecond && c.IsolationPasses == 3 &&
				slices.Equal(c.Workloads, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
		}},
		{nil, "", func(c *config) bool {
			return slices.Equal(c.RebalanceMembers, []int{10, 100}) && c.RebalancePartitions == 100 &&
				c.GroupHeartbeat == 250*time.Millisecond && c.ShareRecords == 200000 &&
				slices.Equal(c.ShareMembers, []int{1, 4, 16}) && c.SharePartitions == 16
		}},
		{[]string{"--rebalance-members", "3,5", "--share-members", "2", "--share-partitions", "4"}, "", func(c *config) bool {
			return slices.Equal(c.RebalanceMembers, []int{3, 5}) && slices.Equal(c.shareRows(), []string{"11 share 1p×2", "11 share 4p×4"})
		}},
		{[]string{"--rebalance-members", "x"}, "--rebalance-members", nil},
		{[]string{"--txn-records", "5", "--txn-interval", "0", "--isolation-passes", "1", "--workloads", "8,9"}, "",
			func(c *config) bool { return c.TxnRecords == 5 && c.TxnInterval == 0 && c.IsolationPasses == 1 }},
		{[]string{"--txn-records", "0"}, "--txn-records must be >= 1", nil},
		{[]string{"--txn-interval", "-1ms"}, "--txn-interval must be >= 0", nil},
		{[]string{"--isolation-passes", "0"}, "--isolation-passes must be >= 1", nil},
		{[]string{"--workloads", "16"}, "unknown workload 16 (want 1..15)", nil},
		{[]string{"--workloads", "12", "--systems", "kafka,kafka-fsync"}, "", func(c *config) bool {
			return slices.Equal(c.Systems, []string{"kafka", "kafka-fsync"}) && slices.Equal(c.Workloads, []int{12})
		}},
		{[]string{"--systems", "kafka", "--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "PLAIN",
			"--sasl-user", "u", "--sasl-password", "p"}, "system kafka serves PLAINTEXT only", nil},
		{[]string{"--systems", "kafka-zk"}, "kgateway,kfake,kfake-durable,kafka,kafka-fsync", nil},
	} {
		cfg, err := parseFlags(tc.args)
		switch {
		case tc.wantErr != "":
			if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseFlags(%q): err %v, want %q", tc.args, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("parseFlags(%q): %v", tc.args, err)
		case !tc.check(cfg):
			t.Errorf("parseFlags(%q) = %+v", tc.args, cfg)
		}
	}
}

// kgbench is a module of its own inside the kgateway repository: from its
// directory it still finds the server's module, to build cmd/kgateway.
func TestKgatewayModuleDir(t *testing.T) {
	dir, err := kgatewayModuleDir(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cmd", "kgateway", "main.go")); err != nil {
		t.Errorf("kgatewayModuleDir(.) = %s, which holds no cmd/kgateway: %v", dir, err)
	}
	if _, err := kgatewayModuleDir(t.TempDir()); err == nil {
		t.Error("a directory outside the repository has no kgateway module, want an error")
	}
}

// TestClientGCSetsOwnProcessOnly: --client-gc-percent is kgbench's own
// GOGC, and no server child is given a GOGC of it (kfake-durable runs as
// a child of this binary, so an environment variable would reach it).
func TestClientGCSetsOwnProcessOnly(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	setClientGC(&config{ClientGCPercent: 321})
	if got := debug.SetGCPercent(100); got != 321 {
		t.Fatalf("GOGC after setClientGC = %d, want 321", got)
	}
	for _, kv := range serverEnv(&config{ClientGCPercent: 321}) {
		if strings.HasPrefix(kv, "GOGC=") && os.Getenv("GOGC") == "" {
			t.Fatalf("server environment carries %s", kv)
		}
	}
}
