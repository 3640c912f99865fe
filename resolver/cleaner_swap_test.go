package resolver

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/vfstest"
)

// The generation swap: fetches at random offsets run while passes swap generations; every
// record read is the one produced at its offset (offsets never change,
// the latest-record rewrite), every batch validates, and no fetch fails.
func TestCleanerConcurrentFetchesDuringSwaps(t *testing.T) {
	c := fixedClock(1_000_000)
	g := compactGateway(t, c, CleanerConfig{DedupeBufferSize: 24 * 64})
	g.create("c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "400", "min.cleanable.dirty.ratio": "0"})
	var mu sync.Mutex
	produced := map[Offset]string{} // offset -> value
	produce := func(n int) {
		for range n {
			v := fmt.Sprintf("v%d", c.millis())
			ms := c.now().UnixMilli()
			v = fmt.Sprintf("v%d", ms)
			res := g.produce("c", 0, kvBatch(rec(fmt.Sprintf("k%d", ms%40), v, ms)))
			mu.Lock()
			produced[res.BaseOffset] = v
			mu.Unlock()
			c.set(ms + 1)
		}
	}
	produce(200)
	stop := make(chan struct{})
	var reads atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, hwm, _, _ := g.r.Bounds("c", 0)
				off := Offset(rng.IntN(int(hwm)))
				res, err := g.r.Fetch("c", 0, off, 1+rng.IntN(4096), true, ReadUncommitted)
				if err != nil {
					info, _ := g.store.Info(1)
					h, ferr := g.store.Floor(1, off)
					errs <- fmt.Errorf("fetch at %d: %w (ledgers %+v, floor %+v %v)", off, err, info.Ledgers, h, ferr)
					return
				}
				for _, b := range res.Batches {
					h := decodeHeader(b)
					sec, err := decodeSection(b, 1<<20)
					if err == nil {
						var recs []cleanRecord
						if recs, err = parseRecords(h, sec); err == nil {
							for _, r := range recs {
								mu.Lock()
								want, known := produced[r.off]
								mu.Unlock()
								// (unknown: produced, not yet recorded)
								if known && string(r.value) != want {
									err = fmt.Errorf("offset %d reads %q, produced %q", r.off, r.value, want)
								}
							}
						}
					}
					if err != nil {
						errs <- err
						return
					}
				}
				reads.Add(1)
			}
		}()
	}
	for range 8 {
		produce(40)
		rollPartition(t, g, "c")
		if err := g.r.Passes().RunCleaner(c.now()); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if reads.Load() == 0 || g.r.Passes().CleanerStats().Passes < 8 {
		t.Fatalf("%d reads, %d passes", reads.Load(), g.r.Passes().CleanerStats().Passes)
	}
}

// Reads across gaps: after a swap, ListOffsets by timestamp answers the first kept
// record at or after the timestamp, and DeleteRecords to an offset in a
// gap moves the log start there; the next pass cleans above it.
func TestCleanerListOffsetsAndDeleteRecordsAfterSwap(t *testing.T) {
	c := fixedClock(1_000_000)
	g := compactGateway(t, c, CleanerConfig{})
	g.create("c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": "300", "min.cleanable.dirty.ratio": "0"})
	// Timestamps 100, 110, ...; keys a, b, a, b, ...: all but the last
	// of each key go.
	for i := range 20 {
		g.produce("c", 0, kvBatch(rec([]string{"a", "b"}[i%2], fmt.Sprint(i), int64(100+10*i))))
	}
	g.produce("c", 0, kvBatch(rec("z", "last", 400)))
	rollPartition(t, g, "c")
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, g, "c")
	if len(got) != 3 || got[0].off != 18 || got[1].off != 19 || got[2].off != 20 {
		t.Fatalf("kept %+v", got)
	}
	for ts, want := range map[int64]Offset{0: 18, 100: 18, 275: 18, 280: 18, 281: 19, 290: 19, 291: 20, 400: 20, 401: -1} {
		off, _, err := g.r.ListOffset("c", 0, ts)
		if err != nil || off != want {
			t.Fatalf("ListOffset(%d) = %d %v, want %d", ts, off, err, want)
		}
	}
	if off, _, _ := g.r.ListOffset("c", 0, -2); off != 0 {
		t.Fatalf("earliest %d: compaction never moves the log start", off)
	}
	start, err := g.r.DeleteRecords("c", 0, 7) // inside the gap
	if err != nil || start != 7 {
		t.Fatalf("DeleteRecords(7) = %d %v", start, err)
	}
	if _, err := g.r.Fetch("c", 0, 6, 1<<20, true, ReadUncommitted); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("fetch below the new start: %v", err)
	}
	if res := g.fetch("c", 0, 7, 1<<20); len(res.Batches) == 0 || baseOffsetOf(res.Batches[0]) != 18 {
		t.Fatalf("fetch at the start in a gap: %+v", res)
	}
	g.produce("c", 0, kvBatch(rec("a", "again", 500)))
	rollPartition(t, g, "c")
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	got = readAll(t, g, "c")
	if len(got) != 3 || got[0].off != 19 || got[1].off != 20 || got[2].value != "again" {
		t.Fatalf("after DeleteRecords and a pass: %+v", got)
	}
}

// The dedupe budget: a ledger holding more keys than the map is not cleaned: the pass
// fails with the reason and changes nothing.
func TestCleanerMapTooSmallForOneLedger(t *testing.T) {
	c := fixedClock(1_000_000)
	g := compactGateway(t, c, CleanerConfig{DedupeBufferSize: 24 * 4}) // 3 keys
	g.create("c", 1, map[string]string{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0"})
	for i := range 10 {
		g.produce("c", 0, kvBatch(rec(fmt.Sprint(i), "v", c.millis()), rec(fmt.Sprint(i), "w", c.millis())))
	}
	rollPartition(t, g, "c")
	if err := g.r.Passes().RunCleaner(c.now()); !errors.Is(err, errMapTooSmall) {
		t.Fatalf("RunCleaner: %v, want the map-too-small error", err)
	}
	if got := readAll(t, g, "c"); len(got) != 20 {
		t.Fatalf("%d records after a failed pass, want 20", len(got))
	}
}

// Compacted generations: a pass whose new generation cannot be synced fails, changes
// nothing and removes its file; the next pass succeeds.
func TestCleanerFailedPassChangesNothing(t *testing.T) {
	c := fixedClock(1_000_000)
	ffs := vfstest.NewFaultFS(storage.OSFS())
	g := newGatewayOpts(t, Config{RetentionCheckInterval: -1, Cleaner: CleanerConfig{Threads: -1}, Ledger: ledgerNow(c)}, storage.Options{FS: ffs})
	g.create("c", 1, map[string]string{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0"})
	for i := range 10 {
		g.produce("c", 0, kvBatch(rec(fmt.Sprint(i%2), fmt.Sprint(i), c.millis())))
	}
	rollPartition(t, g, "c")
	info := logInfo(t, g, "c")
	next := storage.SegmentFileName(info.ID, info.Ledgers[len(info.Ledgers)-1].ID+1)
	ffs.FailSync(next, errors.New("injected"))
	if err := g.r.Passes().RunCleaner(c.now()); err == nil {
		t.Fatal("a pass whose sync failed succeeded")
	}
	if segmentExists(t, g, info.ID, info.Ledgers[len(info.Ledgers)-1].ID+1) {
		t.Fatal("the failed pass left its file")
	}
	if got := readAll(t, g, "c"); len(got) != 10 {
		t.Fatalf("%d records after a failed pass, want 10", len(got))
	}
	ffs.Clear()
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, g, "c"); len(got) != 2 {
		t.Fatalf("%d records after the pass, want 2", len(got))
	}
}

// The latest-record rewrite: a batch whose records are all superseded goes, except the last
// batch of its producer id in the range, which stays empty with its
// producer id, epoch, base sequence and offsets, so that the producer's
// next sequence is still accepted after a restart that replays it.
func TestCleanerKeepsProducersLastBatch(t *testing.T) {
	c := fixedClock(1_000_000)
	g := compactGateway(t, c, CleanerConfig{})
	g.create("c", 1, map[string]string{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0"})
	g.produce("c", 0, kvBatchIdem(7, 3, 0, rec("k", "a", 1), rec("j", "a", 1))) // [0, 2): superseded
	g.produce("c", 0, kvBatchIdem(7, 3, 2, rec("k", "b", 2)))                   // [2, 3): superseded, pid 7's last
	g.produce("c", 0, kvBatch(rec("k", "c", 3), rec("j", "c", 3)))              // [3, 5)
	rollPartition(t, g, "c")
	if err := g.r.Passes().RunCleaner(c.now()); err != nil {
		t.Fatal(err)
	}
	res := g.fetch("c", 0, 0, 1<<20)
	if len(res.Batches) != 2 {
		t.Fatalf("%d batches, want pid 7's last (empty) and the live one", len(res.Batches))
	}
	h := decodeHeader(res.Batches[0])
	if h.BaseOffset != 2 || h.LastOffsetDelta != 0 || h.Records != 0 || h.ProducerID != 7 || h.ProducerEpoch != 3 || h.BaseSequence != 2 {
		t.Fatalf("kept producer batch %+v", h)
	}
	if h := decodeHeader(res.Batches[1]); h.BaseOffset != 3 || h.Records != 2 {
		t.Fatalf("live batch %+v", h)
	}
	g.crashReopen() // producer state comes back from the checkpoint and the replay
	if _, err := g.r.Produce("c", 0, kvBatchIdem(7, 3, 3, rec("k", "d", 4))); err != nil {
		t.Fatalf("pid 7's next sequence after the cleaning and a restart: %v", err)
	}
}
