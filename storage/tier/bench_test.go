package tier_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/kgateway/kgateway/storage"
	"github.com/kgateway/kgateway/storage/tier"
)

// BenchmarkUpload uploads one sealed ledger of about 1 MiB per iteration
// to a file:// bucket (MB/s).
func BenchmarkUpload(b *testing.B) {
	e := newEnv(b, tier.Options{})
	var leds []storage.LedgerID
	for range b.N {
		e.fill(1, 2000)
		info := e.info()
		leds = append(leds, info.Ledgers[len(info.Ledgers)-2].ID)
	}
	b.SetBytes(int64(2000 * len(payload(0))))
	b.ResetTimer()
	for _, led := range leds {
		if _, err := e.tier.Upload(context.Background(), testLog, led); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadObject reads the 100 entries from offset 0 of an uploaded
// ledger: from the object with an empty cache (cold), from the cache
// (cached), and from the local file (local); it reports p50 and p99.
func BenchmarkReadObject(b *testing.B) {
	e := newEnv(b, tier.Options{CacheBytes: 64 << 20})
	e.fill(1, 100)
	led := e.info().Ledgers[0].ID
	if _, err := e.tier.Upload(context.Background(), testLog, led); err != nil {
		b.Fatal(err)
	}
	hdrs := e.headers(led)
	c, _ := e.tier.Candidates(testLog, led)
	run := func(b *testing.B, read func() error) {
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
	b.Run("cold", func(b *testing.B) {
		run(b, func() error {
			cold := tier.New(e.store, e.bucket, tier.NewPebbleMeta(e.store), tier.Options{})
			defer cold.Close()
			_, err := cold.Read(context.Background(), c[0], hdrs)
			return err
		})
	})
	b.Run("cached", func(b *testing.B) {
		run(b, func() error { _, err := e.tier.Read(context.Background(), c[0], hdrs); return err })
	})
	b.Run("local", func(b *testing.B) {
		run(b, func() error { _, err := e.store.ReadIndexed(testLog, hdrs); return err })
	})
}

// BenchmarkAppendBesideUpload measures durable 16 KiB appends to one log
// (MB/s) alone and while another log's sealed ledgers are uploaded in a
// loop: what uploading costs produce throughput.
func BenchmarkAppendBesideUpload(b *testing.B) {
	for _, uploading := range []bool{false, true} {
		name := "alone"
		if uploading {
			name = "uploading"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b, tier.Options{})
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
		})
	}
}
