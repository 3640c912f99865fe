package main

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for kgbench when the harness
// re-executes itself as `serve-kfake`.
func TestMain(m *testing.M) {
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
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, name := range cfg.Systems {
		results := benchSystem(ctx, cfg, t.TempDir(), name)
		if len(results) != len(workloadNames) {
			t.Fatalf("%s: %d results, want %d", name, len(results), len(workloadNames))
		}
		for _, r := range results {
			if r.Error != "" {
				t.Errorf("%s / %s: %s", r.System, r.Workload, r.Error)
			}
			if r.MBps == 0 && len(r.Latency) == 0 {
				t.Errorf("%s / %s: no figures", r.System, r.Workload)
			}
		}
		if rss := results[4].RSSBytes; rss <= 0 {
			t.Errorf("%s: metadata workload read no RSS", name)
		}
	}
}
