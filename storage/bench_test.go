package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Benchmarks run on the real file system under b.TempDir() (fdatasync
// included). KGW_BENCH_BIG=1 makes BenchmarkOpen build a 5 GB store
// instead of 256 MiB.

// BenchmarkAppendDurable: Append (durable, D1) with group commit. logs=1:
// every appender writes the same log (one fdatasync per group); logs=n:
// each appender has its own log (one fdatasync per file per group).
func BenchmarkAppendDurable(b *testing.B) {
	for _, size := range []int{16 << 10, 1 << 20} {
		for _, appenders := range []int{1, 4, 16} {
			for _, own := range []bool{false, true} {
				if own && appenders == 1 {
					continue
				}
				logs := 1
				if own {
					logs = appenders
				}
				name := fmt.Sprintf("batch=%dKiB/appenders=%d/logs=%d", size>>10, appenders, logs)
				b.Run(name, func(b *testing.B) { benchAppend(b, size, appenders, logs) })
			}
		}
	}
}

func benchAppend(b *testing.B, size, appenders, logs int) {
	s := newStore(b, b.TempDir(), Options{})
	defer s.Close()
	for i := 0; i < logs; i++ {
		if err := s.CreateLog(LogID(i)); err != nil {
			b.Fatal(err)
		}
	}
	payload := make([]byte, size)
	lat := make([][]time.Duration, appenders)
	var next atomic.Int64
	b.SetBytes(int64(size))
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := 0; w < appenders; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := LogID(w % logs)
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if _, err := s.Append(id, 10, payload, AppendOptions{}); err != nil {
					b.Error(err)
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	reportLatency(b, lat)
}

// BenchmarkAppendReused: one appender's durable 16 KiB appends (about
// one produce request's group commit at 20 MB/s) into a new ledger file,
// and into one written over a spare (I8): the same log's trimmed ledger,
// as large as what the benchmark appends. The difference is the file
// system's journal commit an fdatasync after appending needs.
func BenchmarkAppendReused(b *testing.B) {
	for _, reuse := range []bool{false, true} {
		b.Run(fmt.Sprintf("reused=%v", reuse), func(b *testing.B) {
			const size = 16 << 10
			s := newStore(b, b.TempDir(), Options{})
			defer s.Close()
			if err := s.CreateLog(1); err != nil {
				b.Fatal(err)
			}
			fillLog(b, s, 1, int64(b.N+32)*size, size, 0)
			if _, err := s.Roll(1); err != nil {
				b.Fatal(err)
			}
			if reuse {
				info, _ := s.Info(1)
				if err := s.HardTrim(1, info.End); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := s.Roll(1); err != nil { // over the spare, if there is one
				b.Fatal(err)
			}
			payload := make([]byte, size)
			lat := make([]time.Duration, 0, b.N)
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := s.Append(1, 10, payload, AppendOptions{}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportLatency(b, [][]time.Duration{lat})
		})
	}
}

func reportLatency(b *testing.B, lat [][]time.Duration) {
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// fillLog appends total bytes in entries of size to log id, rolling every
// ledgerBytes, with a few concurrent writers to make it quick.
func fillLog(b *testing.B, s *Store, id LogID, total, size, ledgerBytes int64) {
	b.Helper()
	payload := make([]byte, size)
	var written int64
	for written < total {
		var ps []*Pending
		for i := 0; i < 32 && written < total; i++ {
			p, err := s.Write(id, 10, payload, AppendOptions{})
			if err != nil {
				b.Fatal(err)
			}
			ps = append(ps, p)
			written += size
		}
		for _, p := range ps {
			if err := p.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		if ledgerBytes > 0 && written%ledgerBytes < size*32 && written < total {
			if _, err := s.Roll(id); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// readAll reads the whole visible log with ReadEntries in 1 MiB requests
// and returns the payload bytes read.
func readAll(b *testing.B, s *Store, id LogID) int64 {
	first, err := s.FirstOffset(id)
	if err != nil {
		b.Fatal(err)
	}
	info, _ := s.Info(id)
	var n int64
	for off := first.Offset; off < info.End; {
		es, err := s.ReadEntries(id, off, 0, 1<<20)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range es {
			n += int64(len(e.Payload))
		}
		off = es[len(es)-1].End()
	}
	return n
}

// BenchmarkReadHot reads the open ledger's tail from the page cache.
func BenchmarkReadHot(b *testing.B) {
	for _, size := range []int64{16 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("batch=%dKiB", size>>10), func(b *testing.B) {
			s := newStore(b, b.TempDir(), Options{})
			defer s.Close()
			_ = s.CreateLog(1)
			fillLog(b, s, 1, 64<<20, size, 0)
			b.SetBytes(64 << 20)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				readAll(b, s, 1)
			}
		})
	}
}

// BenchmarkReadCold reads closed ledgers whose pages were dropped from the
// page cache (posix_fadvise DONTNEED on our own files only) before each
// pass.
func BenchmarkReadCold(b *testing.B) {
	dir := b.TempDir()
	s := newStore(b, dir, Options{})
	defer s.Close()
	_ = s.CreateLog(1)
	fillLog(b, s, 1, 128<<20, 1<<20, 16<<20)
	_, _ = s.Roll(1)
	b.SetBytes(128 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dropCache(b, filepath.Join(dir, "segments"))
		b.StartTimer()
		readAll(b, s, 1)
	}
}

func dropCache(b *testing.B, dir string) {
	names, _ := OSFS().ReadDir(dir)
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			b.Fatal(err)
		}
		// POSIX_FADV_DONTNEED = 4
		_, _, _ = syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, 4, 0, 0)
		_ = f.Close()
	}
}

// BenchmarkOpen opens a cleanly closed store holding 256 MiB (5 GB with
// KGW_BENCH_BIG=1) in 16 logs of 64 KiB entries and 128 MiB ledgers.
func BenchmarkOpen(b *testing.B) {
	total := int64(256 << 20)
	if os.Getenv("KGW_BENCH_BIG") == "1" {
		total = 5 << 30
	}
	dir := b.TempDir()
	s := newStore(b, dir, Options{})
	const logs = 16
	var wg sync.WaitGroup
	for i := 0; i < logs; i++ {
		_ = s.CreateLog(LogID(i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			fillLog(b, s, LogID(i), total/logs, 64<<10, 128<<20)
		}()
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total)/(1<<30), "GiB")
}

// BenchmarkManyLogsGroup: one entry of 1 KiB to each of 1,000 logs, then
// a wait for all of them: the group commit of a produce request that
// names every partition of a 1,000-partition topic once (kgbench
// workload 15), with one fdatasync per file or journaled (I15).
func BenchmarkManyLogsGroup(b *testing.B) {
	for _, j := range []int{0, DefaultJournalBytes} {
		b.Run(fmt.Sprintf("journal=%d", j), func(b *testing.B) {
			s := newStore(b, b.TempDir(), Options{JournalBytes: j})
			defer s.Close()
			const n = 1000
			ids := make([]LogID, n)
			for i := range ids {
				ids[i] = LogID(i + 1)
			}
			if err := s.CreateLogs(ids...); err != nil {
				b.Fatal(err)
			}
			payload := make([]byte, 1024)
			ps := make([]*Pending, n)
			b.SetBytes(n * 1024)
			b.ResetTimer()
			for range b.N {
				for i, id := range ids {
					p, err := s.Write(id, 1, payload, AppendOptions{})
					if err != nil {
						b.Fatal(err)
					}
					ps[i] = p
				}
				for _, p := range ps {
					if err := p.Wait(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
