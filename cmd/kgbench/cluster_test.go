package main

import (
	"context"
	"testing"
	"time"
)

// TestClusterSystem starts kgateway-cluster (three nodes, etcd, the S3
// server) and runs a produce and a consume through it: every record is
// acknowledged and read back, the system's CPU time is every process's,
// and a stop ends every process.
func TestClusterSystem(t *testing.T) {
	cfg, err := parseFlags([]string{"--systems", clusterSystem, "--workloads", "1,3", "--records", "500",
		"--workload-timeout", "2m", "--disk-probe=false"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := startSystem(ctx, newHarness(cfg, t.TempDir()), t.TempDir(), clusterSystem)
	if err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	if len(s.peers) != clusterNodes+1 {
		t.Fatalf("%d peers, want etcd, the S3 server and %d more nodes", len(s.peers), clusterNodes-1)
	}
	b := newBench(cfg, s)
	for _, w := range cfg.Workloads {
		r := b.runWorkload(ctx, w)[0]
		// 500 records read back take a few milliseconds: less than a
		// clock tick of CPU time.
		if r.Error != "" || r.Records != 500 || r.MBps <= 0 || (w == 1 && r.ServerCPUSeconds <= 0) {
			t.Errorf("workload %d: %+v", w, r)
		}
	}
	own, err := procCPUSeconds(s.procPid())
	if err != nil {
		t.Fatal(err)
	}
	if all, err := s.cpuSeconds(); err != nil || all <= own {
		t.Errorf("system CPU %.2f s (%v) is not more than node 0's own %.2f s", all, err, own)
	}
	s.stop()
	for _, p := range s.peers {
		if p.checkAlive() == nil {
			t.Errorf("%s still runs after the system's stop", p.name)
		}
	}
}
