package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for kgbench when the harness
// re-executes itself as `serve-kfake`, or as workload 13's tenant A.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == floodTenantCmd {
		if err := runFloodTenant(os.Args[2:]); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == serveKfakeCmd {
		if err := serveKfake(os.Args[2:]); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestAllWorkloadsAgainstKfake runs every workload at toy sizes against both
// kfake peers: the harness must produce a number (not an error) for each.
func TestAllWorkloadsAgainstKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	cfg, err := parseFlags([]string{
		"--systems", "kfake,kfake-durable", "--records", "400", "--rate", "1",
		"--duration", "300ms", "--partitions-scale", "20", "--topics-scale", "4",
		"--big-bytes", "256KiB", "--probes", "3", "--session-partitions", "20", "--workload-timeout", "30s",
		"--txn-records", "10", "--txn-interval", "20ms", "--isolation-passes", "2",
		"--rebalance-members", "2", "--rebalance-partitions", "4",
		"--share-records", "200", "--share-members", "1,2", "--share-partitions", "2",
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := newHarness(cfg, t.TempDir())
	for _, name := range cfg.Systems {
		results := h.benchSystem(ctx, t.TempDir(), name)
		var want []string
		for _, w := range cfg.Workloads {
			want = append(want, cfg.workloadRows(w)...)
		}
		if len(results) != len(want) || len(want) != 11+1+2+2 {
			t.Fatalf("%s: %d results, want %d", name, len(results), len(want))
		}
		for i, r := range results {
			if r.Workload != want[i] {
				t.Errorf("%s: row %d is %q, want %q", name, i, r.Workload, want[i])
			}
			if r.Error != "" || r.Unsupported != "" {
				t.Errorf("%s / %s: %s%s", r.System, r.Workload, r.Error, r.Unsupported)
			}
			if r.MBps == 0 && len(r.Latency) == 0 {
				t.Errorf("%s / %s: no figures", r.System, r.Workload)
			}
		}
		if results[0].ClientCPUSeconds <= 0 {
			t.Errorf("%s: workload 1 measured no client CPU", name)
		}
		if rss := results[4].RSSBytes; rss <= 0 {
			t.Errorf("%s: metadata workload read no RSS", name)
		}
		checkTxnRow(t, results[7])
		checkIsolationRows(t, results[8], results[9])
	}
}

// checkTxnRow: workload 8 committed transactions, every committed record
// reached the read_committed consumers, and both latencies are there.
func checkTxnRow(t *testing.T, r Result) {
	t.Helper()
	if r.Workload != "8 transactions" || r.Records < 10 || r.Records%10 != 0 {
		t.Errorf("%s / %s: %d records committed", r.System, r.Workload, r.Records)
	}
	if !strings.Contains(r.Notes, fmt.Sprintf("%d records; read_committed consumers (2) got %d", r.Records, r.Records)) {
		t.Errorf("%s: consumers did not get every committed record: %s", r.System, r.Notes)
	}
	var names []string
	for _, p := range r.Latency {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"e2e p50", "e2e p99", "e2e p99.9", "commit p50", "commit p99"}) {
		t.Errorf("%s: latency %v", r.System, names)
	}
}

// checkIsolationRows: workload 9 gives each isolation level a row of its
// own, per pass, and the ratio.
func checkIsolationRows(t *testing.T, ru, rc Result) {
	t.Helper()
	if ru.Workload != isolationRows[0] || rc.Workload != isolationRows[1] {
		t.Fatalf("rows %q, %q", ru.Workload, rc.Workload)
	}
	for _, r := range []Result{ru, rc} {
		if r.Records != 400 || r.MBps <= 0 || r.Seconds <= 0 || !strings.HasPrefix(r.Notes, "2 passes of 400 records") {
			t.Errorf("%s / %s: %+v", r.System, r.Workload, r)
		}
	}
	if !strings.Contains(rc.Notes, "read_committed/read_uncommitted: MB/s ×") {
		t.Errorf("%s: no ratio in %q", rc.System, rc.Notes)
	}
}

// TestRoundsAgainstKfake runs two rounds at toy sizes: the second round
// must run the systems rotated, on new data directories that are gone once
// each system stopped, and the summary must fold both rounds per cell in
// the configured order.
func TestRoundsAgainstKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	cfg, err := parseFlags([]string{
		"--systems", "kfake,kfake-durable", "--workloads", "1,3", "--records", "200",
		"--rounds", "2", "--disk-probe=false", "--workload-timeout", "30s",
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root := t.TempDir()
	results := newHarness(cfg, root).runRounds(ctx)
	var got []string
	for _, r := range results {
		if r.Error != "" {
			t.Errorf("round %d %s / %s: %s", r.Round, r.System, r.Workload, r.Error)
		}
		got = append(got, fmt.Sprintf("%d %s %s", r.Round, r.System, r.Workload[:1]))
	}
	want := []string{
		"0 kfake 1", "0 kfake 3", "0 kfake-durable 1", "0 kfake-durable 3",
		"1 kfake-durable 1", "1 kfake-durable 3", "1 kfake 1", "1 kfake 3",
	}
	if !slices.Equal(got, want) {
		t.Errorf("results ran as\n%q\nwant\n%q", got, want)
	}
	for _, round := range []string{"round-1", "round-2"} {
		if _, err := os.Stat(filepath.Join(root, round, "kfake-durable.log")); err != nil {
			t.Errorf("%s: no server log: %v", round, err)
		}
		if _, err := os.Stat(filepath.Join(root, round, "kfake-durable-data")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: data dir left behind (stat: %v)", round, err)
		}
	}
	sum := summarize(cfg.Systems, results)
	if len(sum) != 4 || sum[0].System != "kfake" || sum[2].System != "kfake-durable" {
		t.Fatalf("summary rows %+v", sum)
	}
	for _, r := range sum {
		if !strings.Contains(r.Notes, "2 rounds: MB/s ") {
			t.Errorf("%s / %s: notes %q lack the spread", r.System, r.Workload, r.Notes)
		}
	}
}

// TestServerProcsReachesTheServer starts a real server child with
// --server-procs 1: its environment must carry GOMAXPROCS=1 (whatever
// kgbench's own says), and without the flag it must not be set by kgbench.
func TestServerProcsReachesTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	t.Setenv("GOMAXPROCS", "2")
	for _, tc := range []struct {
		flag string
		want string
	}{{"1", "GOMAXPROCS=1"}, {"0", "GOMAXPROCS=2"}} {
		cfg, err := parseFlags([]string{"--systems", "kfake", "--server-procs", tc.flag})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		s, err := startSystem(ctx, newHarness(cfg, t.TempDir()), t.TempDir(), "kfake")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", s.cmd.Process.Pid))
		s.stop()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, kv := range strings.Split(string(env), "\x00") {
			if strings.HasPrefix(kv, "GOMAXPROCS=") {
				got = append(got, kv)
			}
		}
		// exec keeps the last of duplicate keys, so exactly one survives.
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("--server-procs %s: server has %q, want [%s]", tc.flag, got, tc.want)
		}
	}
}
