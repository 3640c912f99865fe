package tier_test

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/objstore"
	"github.com/kgateway/kgateway/test/s3server"
	"github.com/kgateway/kgateway/tier"
)

// The benchmarks run once per object-store backend, as sub-benchmarks:
// "file" (a fileblob directory) and, with KGW_TIER_BENCH_S3=1, "s3" (a
// versitygw server on loopback, test/s3server, started by the benchmark).
const envBenchS3 = "KGW_TIER_BENCH_S3"

// forEachBackend runs fn as a sub-benchmark per backend; open returns a
// fresh bucket of it (nil: newEnvOn's file bucket).
func forEachBackend(b *testing.B, fn func(b *testing.B, open func(b *testing.B) *blob.Bucket)) {
	b.Run("file", func(b *testing.B) { fn(b, func(*testing.B) *blob.Bucket { return nil }) })
	if os.Getenv(envBenchS3) != "1" {
		return
	}
	b.Run("s3", func(b *testing.B) { fn(b, openS3) })
}

// openS3 starts a versitygw server for b and opens its bucket.
func openS3(b *testing.B) *blob.Bucket { return openBucket(b, s3server.Start(b)) }

// openBucket opens srv's bucket for t.
func openBucket(t testing.TB, srv *s3server.Server) *blob.Bucket {
	t.Helper()
	bk, err := objstore.Open(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bk.Close() })
	return bk
}

// Upload benchmark ledgers: 8 MiB, over the S3 SDK's 5 MiB multipart
// threshold as real ledgers (log.segment.bytes, 1 GiB) are.
const (
	benchEntryBytes = 64 << 10
	benchEntries    = 128
)

// BenchmarkUpload uploads (writes, reads back, publishes) one sealed
// ledger of 8 MiB per iteration (MB/s).
func BenchmarkUpload(b *testing.B) {
	forEachBackend(b, func(b *testing.B, open func(*testing.B) *blob.Bucket) {
		e := newEnvOn(b, tier.Options{}, open(b))
		var leds []storage.LedgerID
		for range b.N {
			leds = append(leds, e.sealBig(testLog))
		}
		b.SetBytes(benchEntries * benchEntryBytes)
		b.ResetTimer()
		for _, led := range leds {
			if _, err := e.tier.Upload(context.Background(), testLog, led); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// sealBig appends one benchmark ledger to log, seals it, and returns it.
func (e *env) sealBig(log storage.LogID) storage.LedgerID {
	payload := make([]byte, benchEntryBytes)
	for range benchEntries {
		if _, err := e.store.Append(log, 1, payload, storage.AppendOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
	if _, err := e.store.Roll(log); err != nil {
		e.t.Fatal(err)
	}
	info, err := e.store.Info(log)
	if err != nil {
		e.t.Fatal(err)
	}
	return info.Ledgers[len(info.Ledgers)-2].ID
}

// BenchmarkReadObject reads the 100 entries from offset 0 of an uploaded
// ledger from the object: with an empty cache (cold: a new Tier each
// time) and from the cache (cached); each with its pin and unpin. Against
// them: the same entries from the local file (local), and the last 100
// entries of the open ledger, where a consumer at the tail reads (tail).
// It reports p50 and p99.
func BenchmarkReadObject(b *testing.B) {
	forEachBackend(b, func(b *testing.B, open func(*testing.B) *blob.Bucket) {
		e := newEnvOn(b, tier.Options{CacheBytes: 64 << 20}, open(b))
		e.fill(1, 100)
		led := e.info().Ledgers[0].ID
		if _, err := e.tier.Upload(context.Background(), testLog, led); err != nil {
			b.Fatal(err)
		}
		e.fill(1, 100)
		info := e.info()
		tail := e.headers(info.Ledgers[len(info.Ledgers)-2].ID)
		hdrs := e.headers(led)
		c, _ := e.tier.Candidates(testLog, led)
		b.Run("cold", func(b *testing.B) {
			latencies(b, func() error {
				cold := tier.New(e.store, e.bucket, tier.NewPebbleMeta(e.store), tier.Options{})
				defer cold.Close()
				_, err := cold.Read(context.Background(), c[0], hdrs)
				return err
			})
		})
		b.Run("cached", func(b *testing.B) {
			latencies(b, func() error { _, err := e.tier.Read(context.Background(), c[0], hdrs); return err })
		})
		b.Run("local", func(b *testing.B) {
			latencies(b, func() error { _, err := e.store.ReadIndexed(testLog, hdrs); return err })
		})
		b.Run("tail", func(b *testing.B) {
			latencies(b, func() error { _, err := e.store.ReadIndexed(testLog, tail); return err })
		})
	})
}

// latencies runs read b.N times and reports its p50 and p99.
func latencies(b *testing.B, read func() error) {
	lat := make([]time.Duration, 0, b.N)
	for range b.N {
		start := time.Now()
		if err := read(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkAppendBesideUpload measures durable 16 KiB appends to one log
// (MB/s) alone and while another log's sealed ledgers are uploaded in a
// loop: what uploading costs produce throughput.
func BenchmarkAppendBesideUpload(b *testing.B) {
	forEachBackend(b, func(b *testing.B, open func(*testing.B) *blob.Bucket) {
		for _, uploading := range []bool{false, true} {
			name := "alone"
			if uploading {
				name = "uploading"
			}
			b.Run(name, func(b *testing.B) { appendBeside(b, open(b), uploading) })
		}
	})
}

func appendBeside(b *testing.B, bk *blob.Bucket, uploading bool) {
	e := newEnvOn(b, tier.Options{}, bk)
	const other = storage.LogID(8)
	if err := e.store.CreateLog(other); err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for uploading {
			select {
			case <-stop:
				return
			default:
			}
			for range 64 {
				if _, err := e.store.Append(other, 1, make([]byte, 16<<10), storage.AppendOptions{}); err != nil {
					b.Error(err)
					return
				}
			}
			if _, err := e.store.Roll(other); err != nil {
				b.Error(err)
				return
			}
			info, _ := e.store.Info(other)
			if _, err := e.tier.Upload(context.Background(), other, info.Ledgers[len(info.Ledgers)-2].ID); err != nil {
				b.Error(err)
				return
			}
		}
	}()
	payload := make([]byte, 16<<10)
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	for range b.N {
		if _, err := e.store.Append(testLog, 1, payload, storage.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	<-done
}
