package resolver

import (
	"fmt"
	"testing"
	"time"
)

// gotRecord is a record as a consumer reads it back.
type gotRecord struct {
	off   Offset
	key   string
	value string
	tomb  bool
}

// readAll reads the partition from its log start to its high watermark,
// as a consumer would, checking that offsets strictly increase.
func readAll(t *testing.T, g *gateway, topic string) []gotRecord {
	t.Helper()
	start, hwm, _, err := g.r.Bounds(topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []gotRecord
	last := Offset(-1)
	for off := start; off < hwm; {
		res := g.fetch(topic, 0, off, 1<<20)
		if len(res.Batches) == 0 {
			break // a gap up to the end (reads across gaps)
		}
		for _, b := range res.Batches {
			h := decodeHeader(b)
			if h.Control() {
				off = h.BaseOffset + 1 // a marker: clients skip it
				continue
			}
			sec, err := decodeSection(b, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			recs, err := parseRecords(h, sec)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if r.off < off {
					continue // before the fetch offset: the client skips it
				}
				if r.off <= last {
					t.Fatalf("offset %d after %d: offsets must strictly increase", r.off, last)
				}
				last = r.off
				out = append(out, gotRecord{off: r.off, key: string(r.key), value: string(r.value), tomb: r.value == nil})
			}
			off = h.BaseOffset + Offset(h.LastOffsetDelta) + 1
		}
	}
	return out
}

func compactGateway(t testing.TB, c *clock, cc CleanerConfig) *gateway {
	cc.Threads = -1
	return newGateway(t, Config{RetentionCheckInterval: -1, Cleaner: cc, Ledger: ledgerNow(c)})
}

// The dedupe budget, the latest-record rewrite, compacted generations: a pass keeps the latest record of each key at its offset,
// in a new generation, and reads see it.
func TestCleanerKeepsLatestPerKey(t *testing.T) {
	c := fixedClock(1_000_000)
	g := compactGateway(t, c, CleanerConfig{})
	g.create("c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "200"})
	for i := range 20 {
		g.produce("c", 0, kvBatch(rec(fmt.Sprintf("k%d", i%3), fmt.Sprintf("v%d", i), c.millis())))
	}
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, g, "c")
	// The open ledger is never cleaned: its records stay; the sealed
	// ones keep only what no later record of the key supersedes.
	latest := map[string]Offset{}
	for _, r := range got {
		latest[r.key] = r.off
	}
	if latest["k0"] != 18 || latest["k1"] != 19 || latest["k2"] != 17 {
		t.Fatalf("latest offsets %v", latest)
	}
	info := logInfo(t, g, "c")
	if info.Ledgers[0].Gen != 1 {
		t.Fatalf("first ledger generation %d, want 1: %+v", info.Ledgers[0].Gen, info.Ledgers)
	}
	if len(got) > 3+len(info.Ledgers) {
		t.Fatalf("%d records left of 20 (%d ledgers): %+v", len(got), len(info.Ledgers), got)
	}
	if s := g.r.Passes().CleanerStats(); s.Passes == 0 || s.BytesRead == 0 || s.BytesWritten == 0 {
		t.Fatalf("stats %+v", s)
	}
	_ = time.Second
}
