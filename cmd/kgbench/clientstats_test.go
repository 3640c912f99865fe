package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestClientStatsCountWorkload2: --client-stats counts every Produce
// request and batch of workload 2 against a real (in-process) kfake, and
// --cpu-profile writes a profile per workload, a later round's beside
// the first's.
func TestClientStatsCountWorkload2(t *testing.T) {
	prefix := filepath.Join(t.TempDir(), "prof")
	b, _ := inProcessKfake(t, []string{"--records", "400", "--client-stats", "--cpu-profile", prefix})
	var out bytes.Buffer
	b.stats.out = &out
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 2 {
		var res Result
		if err := b.observe("kfake-w2", func() error { return b.produceManyPartitions(ctx, &res) }); err != nil {
			t.Fatal(err)
		}
	}
	// The second round's totals start from zero: 400 records, not 800.
	m := regexp.MustCompile(`produce: (\d+) batches \([\d.]+/req\), (\d+) records/batch`).FindAllStringSubmatch(out.String(), -1)
	if len(m) != 2 {
		t.Fatalf("want two produce lines, got:\n%s", out.String())
	}
	batches, _ := strconv.Atoi(m[1][1])
	perBatch, _ := strconv.Atoi(m[1][2])
	if batches == 0 || batches*perBatch > 400 || (batches+1)*perBatch < 400-batches {
		t.Errorf("%d batches of %d records for 400 records:\n%s", batches, perBatch, out.String())
	}
	if !regexp.MustCompile(`key  0: +\d+ reqs`).MatchString(out.String()) {
		t.Errorf("no Produce request count:\n%s", out.String())
	}
	for _, name := range []string{prefix + "-kfake-w2.pprof", prefix + "-kfake-w2-r2.pprof"} {
		if fi, err := os.Stat(name); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v", name, err)
		}
	}
}

// TestClientStatsOffByDefault: without the flags no hook is installed.
func TestClientStatsOffByDefault(t *testing.T) {
	cfg, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if b := newBench(cfg, &system{}); b.stats != nil || cfg.CPUProfile != "" || len(b.clientOpts()) != 6 {
		t.Errorf("instrumentation on by default: stats %v, profile %q, %d client options", b.stats, cfg.CPUProfile, len(b.clientOpts()))
	}
}
