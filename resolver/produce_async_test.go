package resolver

import (
	"bytes"
	"testing"
)

// Pipelined produces: writes made one after the other get offsets in that
// order (D3) and idempotent sequences chain across them (D4) although none
// was waited for; each is acknowledged only once durable (D1), Wait is
// idempotent, and a handed-over (owned) buffer is stored as given.
func TestProduceAsyncPipelined(t *testing.T) {
	g := newGateway(t, Config{})
	g.create("t", 1, nil)
	var pend []*PendingProduce
	var sent [][]byte
	for i := range 5 {
		b := benchBatch(true, int32(16*i))
		sent = append(sent, append([]byte(nil), b...))
		var pp *PendingProduce
		var err error
		if i%2 == 0 {
			pp, err = g.r.ProduceAsync("t", 0, b)
		} else {
			var h Partition
			if h, err = g.r.Resolve("t", 0); err == nil {
				pp, err = h.ProduceAsync(ParseBatches(b), nil)
			}
		}
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		pend = append(pend, pp)
	}
	for i, pp := range pend {
		res, err := pp.Wait()
		if err != nil || res.BaseOffset != Offset(16*i) {
			t.Fatalf("produce %d: offset %d, %v", i, res.BaseOffset, err)
		}
		if _, hwm, _, _ := g.r.Bounds("t", 0); hwm < Offset(16*(i+1)) {
			t.Fatalf("produce %d acknowledged with the high watermark at %d (not durable)", i, hwm)
		}
		if again, err := pp.Wait(); err != nil || again != res {
			t.Fatalf("second Wait: %+v %v, first %+v", again, err, res)
		}
	}
	got := g.fetch("t", 0, 0, 1<<20)
	if len(got.Batches) != 5 {
		t.Fatalf("fetched %d batches", len(got.Batches))
	}
	for i, b := range got.Batches {
		// Equal but for the base offset (bytes 0..8) and the partition
		// leader epoch (12..16), which Produce stamps.
		if !bytes.Equal(b[8:12], sent[i][8:12]) || !bytes.Equal(b[16:], sent[i][16:]) {
			t.Fatalf("batch %d differs from what was produced", i)
		}
	}
	// A retry of the last batch is a duplicate with the original offset.
	pp, err := g.r.ProduceAsync("t", 0, sent[4])
	if err != nil {
		t.Fatal(err)
	}
	if res, err := pp.Wait(); err != nil || !res.Duplicate || res.BaseOffset != 64 {
		t.Fatalf("retry: %+v, %v", res, err)
	}
}
