package resolver

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// model is what a compacted partition must hold: per key, its latest
// record's offset and value.
type model map[string]gotRecord

// checkCompacted checks a fully cleaned partition against m (the dedupe budget, the latest-record rewrite, the tombstone horizon):
// every key's latest record exactly once, at its offset, with its value;
// nothing superseded; tombstones only while keepTombs.
func checkCompacted(t *testing.T, got []gotRecord, m model, keepTombs bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range got {
		want, ok := m[r.key]
		switch {
		case !ok:
			t.Fatalf("record %+v of an unknown key", r)
		case seen[r.key]:
			t.Fatalf("key %q twice (second at %d): a superseded record survived", r.key, r.off)
		case r != want:
			t.Fatalf("key %q: read %+v, latest is %+v", r.key, r, want)
		case r.tomb && !keepTombs:
			t.Fatalf("tombstone %+v survived past delete.retention.ms", r)
		}
		seen[r.key] = true
	}
	for k, want := range m {
		if !seen[k] && (!want.tomb || keepTombs) {
			t.Fatalf("key %q (latest %+v) is missing", k, want)
		}
	}
}

// The property (the dedupe budget, the latest-record rewrite, the tombstone horizon, reads across gaps): random keys, values and tombstones,
// in batches of random size, codecs and producers; after a pass every
// live key's latest value is there exactly once, superseded records are
// gone, offsets strictly increase (readAll), and tombstones go once
// delete.retention.ms has passed since the pass that first cleaned them.
func TestCleanerProperty(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { cleanerProperty(t, seed) })
	}
}

func cleanerProperty(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 42))
	c := fixedClock(1_000_000)
	// A small map in some runs: several passes (the dedupe budget).
	budget := int64(0)
	if seed%2 == 1 {
		budget = 24 * 40
	}
	g := compactGateway(t, c, CleanerConfig{DedupeBufferSize: budget})
	g.create("c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": fmt.Sprint(200 + rng.IntN(800)),
		"delete.retention.ms": "1000", "min.cleanable.dirty.ratio": "0"})
	m := model{}
	seq := int32(0)
	codecs := []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd}
	produce := func(batches int) {
		for range batches {
			n := 1 + rng.IntN(4)
			recs := make([]kv, n)
			for i := range recs {
				k := fmt.Sprintf("key-%d", rng.IntN(30))
				if rng.IntN(6) == 0 {
					recs[i] = tomb(k, c.millis())
				} else {
					recs[i] = rec(k, fmt.Sprintf("v%d", rng.Uint32()), c.millis())
				}
			}
			var b []byte
			if rng.IntN(2) == 0 {
				b = kvBatchIdem(7, 0, seq, recs...)
				seq += int32(n)
			} else {
				b = kvBatch(recs...)
			}
			b = withCodec(t, b, codecs[rng.IntN(len(codecs))])
			base := g.produce("c", 0, b).BaseOffset
			for i, r := range recs {
				m[string(r.key)] = gotRecord{off: base + Offset(i), key: string(r.key), value: string(r.value), tomb: r.tomb}
			}
			c.advance(1)
		}
	}
	produce(150)
	rollPartition(t, g, "c")
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	checkCompacted(t, readAll(t, g, "c"), m, true)
	// More, some keys superseded again, then a pass after the first
	// tombstones' horizon.
	produce(60)
	rollPartition(t, g, "c")
	c.advance(1001)
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	// The tombstones of the first 150 batches are past their horizon and
	// gone; those first cleaned now stay until theirs.
	got := readAll(t, g, "c")
	for _, r := range got {
		if r.tomb && m[r.key].off < 0 {
			t.Fatal("unreachable")
		}
	}
	c.advance(1001)
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	checkCompacted(t, readAll(t, g, "c"), m, false)
	if budget > 0 && g.r.Passes().CleanerStats().Passes < 3 {
		t.Fatalf("a map of %d keys cleaned 30 keys in %d passes", int(float64(budget/dedupeSlotBytes)*0.9), g.r.Passes().CleanerStats().Passes)
	}
	// Every offset reads: from a gap, the next entry (reads across gaps).
	start, hwm, _, _ := g.r.Bounds("c", 0)
	for off := start; off < hwm; off++ {
		res := g.fetch("c", 0, off, 1)
		for _, b := range res.Batches {
			if h := decodeHeader(b); h.BaseOffset+Offset(h.LastOffsetDelta) < off {
				t.Fatalf("fetch at %d returned a batch ending at %d", off, h.BaseOffset+Offset(h.LastOffsetDelta))
			}
		}
	}
	// And after a restart: the generations and their gaps are durable.
	g.reopen()
	checkCompacted(t, readAll(t, g, "c"), m, false)
}
