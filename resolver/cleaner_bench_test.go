package resolver

import (
	"fmt"
	"os"
	"runtime"
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
		before := g.r.CleanerStats()
		peak, stop := sampleHeap()
		b.StartTimer()
		start := time.Now()
		if err := g.r.RunCleaner(c.now()); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		b.StopTimer()
		after := g.r.CleanerStats()
		stop()
		b.ReportMetric(float64(after.BytesRead-before.BytesRead)/d.Seconds()/(1<<20), "MB/s")
		b.ReportMetric(float64(*peak)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(after.BytesWritten-before.BytesWritten)/(1<<20), "written-MiB")
		g.close()
	}
}

// sampleHeap samples the Go heap every 10 ms until stop is called and
// keeps the largest value seen.
func sampleHeap() (peak *uint64, stop func()) {
	peak = new(uint64)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return peak, func() { close(done); wg.Wait() }
}
