package resolver

import (
	"sync/atomic"
	"testing"
)

// TestPartitionResolvedOnce: a request resolves a partition once
// (Resolve); its long-poll registration, reads, snapshot and write then go
// through the handle and look no binding up again, while the by-name
// calls (Fetch, Bounds) resolve once each.
func TestPartitionResolvedOnce(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 2, nil)
	g.produce("t", 1, plain(3, 1000).encode())
	var lookups atomic.Int64
	defer TraceCrossings(func(kind string) {
		if kind == "lookup" {
			lookups.Add(1)
		}
	})()

	h, err := g.r.Resolve("t", 1)
	if err != nil {
		t.Fatal(err)
	}
	w := g.r.NewWaiter()
	defer w.Close()
	h.Watch(w)
	for range 2 { // a long poll's read and re-read
		if res, err := h.Fetch(0, 1<<20, true, ReadCommitted, nil); err != nil || len(res.Batches) != 1 || res.HighWatermark != 3 {
			t.Fatalf("fetch: %+v, %v", res, err)
		}
	}
	if start, hwm, lso, err := h.Bounds(); err != nil || start != 0 || hwm != 3 || lso != 3 {
		t.Fatalf("bounds: %d %d %d, %v", start, hwm, lso, err)
	}
	pp, err := h.ProduceAsync(ParseBatches(plain(2, 2000).encode()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := pp.Wait(); err != nil || res.BaseOffset != 3 {
		t.Fatalf("produce: %+v, %v", res, err)
	}
	if n := lookups.Load(); n != 1 {
		t.Fatalf("%d lookups for one resolved partition, want 1", n)
	}
	if _, err := g.r.Fetch("t", 1, 0, 1<<20, true, ReadUncommitted); err != nil {
		t.Fatal(err)
	}
	if n := lookups.Load(); n != 2 {
		t.Fatalf("%d lookups after one Fetch by name, want 2", n)
	}
	if _, err := g.r.Resolve("t", 2); err == nil {
		t.Fatal("partition 2 of a 2-partition topic resolved")
	}
}
