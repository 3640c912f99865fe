package resolver

import (
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkCleaner cleans KGW_CLEANER_BENCH_MB (default 16) of 1 KiB
// records, 16 to a batch, whose keys are 10% of the records (so 90% of
// the log is superseded), and reports the pass's MB/s over the bytes it
// cleaned and the peak Go heap during it:
//
//	KGW_CLEANER_BENCH_MB=1024 go test -run '^$' -bench Cleaner -benchtime 1x ./resolver/
func BenchmarkCleaner(b *testing.B) {
	mb := 16
	if v, err := strconv.Atoi(os.Getenv("KGW_CLEANER_BENCH_MB")); err == nil && v > 0 {
		mb = v
	}
	records := mb << 10
	keys := max(records/10, 1)
	value := make([]byte, 1000)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := fixedClock(1_000_000)
		g := compactGateway(b, c, CleanerConfig{})
		g.create("c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": strconv.Itoa(64 << 20)})
		for r := 0; r < records; r += 16 {
			recs := make([]kv, 16)
			for j := range recs {
				recs[j] = kv{key: []byte(fmt.Sprintf("key-%08d", (r+j)%keys)), value: value, ts: c.millis()}
			}
			g.produce("c", 0, kvBatch(recs...))
		}
		rollPartition(b, g, "c")
		before := g.r.Passes().CleanerStats()
		peak, stop := sampleHeap()
		b.StartTimer()
		start := time.Now()
		if err := g.r.Passes().RunCleaner(c.now()); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		b.StopTimer()
		after := g.r.Passes().CleanerStats()
		stop()
		b.ReportMetric(float64(after.BytesRead-before.BytesRead)/d.Seconds()/(1<<20), "MB/s")
		b.ReportMetric(float64(*peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(after.BytesWritten-before.BytesWritten)/(1<<20), "written-MiB")
		g.close()
	}
}

// sampleHeap samples the live Go heap (runtime/metrics, which does not
// stop the world) every 10 ms until stop is called and keeps the largest
// value seen.
func sampleHeap() (peak *uint64, stop func()) {
	peak = new(uint64)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			*peak = max(*peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return peak, func() { close(done); wg.Wait() }
}

// BenchmarkProduceFetchBesideCleaner is produce then fetch of a 16-record
// batch of 1 KiB records on a delete-policy topic's four partitions, with
// the cleaner idle (cleaner=off) and with it cleaning a compacted topic of
// KGW_CLEANER_BENCH_MB (default 16) of 1 KiB records, 10% live keys, all
// the time (cleaner=on: each pass is made due by one new batch and
// rewrites the whole cleaned prefix). The difference is what the
// cleaner's I/O and CPU cost the other partitions:
//
//	go test -run '^$' -bench ProduceFetchBesideCleaner ./resolver/
func BenchmarkProduceFetchBesideCleaner(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "cleaner=off"
		if on {
			name = "cleaner=on"
		}
		b.Run(name, func(b *testing.B) { produceFetchBesideCleaner(b, on) })
	}
}

func produceFetchBesideCleaner(b *testing.B, on bool) {
	mb := 16
	if v, err := strconv.Atoi(os.Getenv("KGW_CLEANER_BENCH_MB")); err == nil && v > 0 {
		mb = v
	}
	c := fixedClock(1_000_000)
	g := compactGateway(b, c, CleanerConfig{})
	g.create("c", 1, map[string]string{"cleanup.policy": "compact", "segment.bytes": strconv.Itoa(8 << 20),
		"min.cleanable.dirty.ratio": "0"})
	g.create("t", 4, nil)
	value := make([]byte, 1000)
	records := mb << 10
	keys := max(records/10, 1)
	batch := func(r int) []byte {
		recs := make([]kv, 16)
		for j := range recs {
			recs[j] = kv{key: []byte(fmt.Sprintf("key-%08d", (r+j)%keys)), value: value, ts: c.millis()}
		}
		return kvBatch(recs...)
	}
	for r := 0; r < records; r += 16 {
		g.produce("c", 0, batch(r))
	}
	rollPartition(b, g, "c")
	stop, done, first := make(chan struct{}), make(chan error, 1), make(chan struct{})
	if on {
		go func() {
			defer close(first)
			for r := 0; ; r += 16 {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				if _, err := g.r.Produce("c", 0, batch(r)); err != nil {
					done <- err
					return
				}
				if err := roll(g.r, "c"); err != nil {
					done <- err
					return
				}
				if err := g.r.Passes().RunCleaner(c.now()); err != nil {
					done <- err
					return
				}
				if r == 0 {
					first <- struct{}{} // the prefill is cleaned: passes are now steady
				}
			}
		}()
		<-first
	} else {
		close(done)
	}
	before := g.r.Passes().CleanerStats().Passes
	tb := batch(0)
	b.SetBytes(int64(len(tb)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		part := int32(i % 4)
		res, err := g.r.Produce("t", part, tb)
		if err != nil {
			b.Fatal(err)
		}
		f, err := g.r.Fetch("t", part, res.BaseOffset, 1<<20, true, ReadUncommitted)
		if err != nil || len(f.Batches) != 1 {
			b.Fatalf("fetch: %v, %d batches", err, len(f.Batches))
		}
	}
	b.StopTimer()
	passes := g.r.Passes().CleanerStats().Passes - before
	close(stop)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(passes), "cleaner-passes")
}

// roll seals partition 0's open ledger (rollPartition, for goroutines
// that may not fail the benchmark themselves).
func roll(r *Resolver, topic string) error {
	p, err := r.mu.partition(topic, 0)
	if err != nil {
		return err
	}
	ml, _, err := p.ledgerAndSettings()
	if err != nil {
		return err
	}
	_, err = ml.Roll()
	return err
}
