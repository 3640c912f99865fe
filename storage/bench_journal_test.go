package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkJournalPasses: the first 64 MiB journaled by a store (both
// journal files' first passes), as at the start of kgbench workload 15:
// 1,000 logs, groups of one 1 KiB entry to each of 200 of them. Then the
// same after a clean Close and Open (restart). Reports the journaled
// groups' sync durations (p50, p99, max, in µs) and the groups that were
// not journaled. One iteration is the whole sequence (run with -benchtime
// 1x, several times).
func BenchmarkJournalPasses(b *testing.B) {
	for range b.N {
		dir := b.TempDir()
		var mu sync.Mutex
		var syncs []time.Duration
		perFile := 0
		opts := Options{JournalBytes: DefaultJournalBytes, OnCommit: func(st CommitStats) {
			mu.Lock()
			defer mu.Unlock()
			if st.Journaled {
				syncs = append(syncs, st.Sync)
			} else if st.Files > 1 {
				perFile++
			}
		}}
		for life, name := range []string{"first", "restart"} {
			s := newStore(b, dir, opts)
			const n = 1000
			ids := make([]LogID, n)
			for i := range ids {
				ids[i] = LogID(i + 1)
			}
			if life == 0 {
				if err := s.CreateLogs(ids...); err != nil {
					b.Fatal(err)
				}
			}
			payload := make([]byte, 1024)
			ps := make([]*Pending, 0, 200)
			for round := range 64 << 10 / 200 {
				ps = ps[:0]
				for k := range 200 {
					p, err := s.Write(ids[(round*200+k)%n], 1, payload, AppendOptions{})
					if err != nil {
						b.Fatal(err)
					}
					ps = append(ps, p)
				}
				for _, p := range ps {
					if err := p.Wait(); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			mu.Lock()
			slices.Sort(syncs)
			if len(syncs) > 0 {
				q := func(f float64) float64 { return float64(syncs[int(f*float64(len(syncs)-1))].Microseconds()) }
				b.ReportMetric(q(0.5), name+"-p50-µs")
				b.ReportMetric(q(0.99), name+"-p99-µs")
				b.ReportMetric(q(1), name+"-max-µs")
			}
			b.ReportMetric(float64(perFile), name+"-unjournaled")
			syncs, perFile = nil, 0
			mu.Unlock()
		}
	}
}

// BenchmarkJournalPaced: a fresh store's first seconds at kgbench
// workload 15's shape: 1,000 logs, 20 MB/s offered as one round of 200
// entries of 1 KiB every 10 ms, each round issued on time whether or not
// the earlier ones are answered. Reports each round's ack latency (from
// its intended start to its last entry's acknowledgement) over the first
// second and over the rest (p50, p99, max, in µs), for secs seconds.
// CreateLogs creates the logs' files; KGW_BENCH_PREWRITE=1 writes one
// entry to each before the load starts (a diagnostic).
func BenchmarkJournalPaced(b *testing.B) {
	const secs, n, per = 4, 1000, 200
	for range b.N {
		s := newStore(b, b.TempDir(), Options{JournalBytes: DefaultJournalBytes})
		ids := make([]LogID, n)
		for i := range ids {
			ids[i] = LogID(i + 1)
		}
		if err := s.CreateLogs(ids...); err != nil {
			b.Fatal(err)
		}
		payload := make([]byte, 1024)
		if os.Getenv("KGW_BENCH_PREWRITE") != "" {
			t0 := time.Now()
			var ps []*Pending
			for _, id := range ids {
				p, err := s.Write(id, 1, payload, AppendOptions{})
				if err != nil {
					b.Fatal(err)
				}
				ps = append(ps, p)
			}
			for _, p := range ps {
				_ = p.Wait()
			}
			b.ReportMetric(float64(time.Since(t0).Microseconds()), "prewrite-µs")
		}
		rounds := secs * 100
		lat := make([]time.Duration, rounds)
		var wg sync.WaitGroup
		start := time.Now()
		for r := range rounds {
			due := start.Add(time.Duration(r) * 10 * time.Millisecond)
			time.Sleep(time.Until(due))
			ps := make([]*Pending, 0, per)
			for k := range per {
				p, err := s.Write(ids[(r*per+k)%n], 1, payload, AppendOptions{})
				if err != nil {
					b.Fatal(err)
				}
				ps = append(ps, p)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, p := range ps {
					if err := p.Wait(); err != nil {
						b.Error(err)
					}
				}
				lat[r] = time.Since(due)
			}()
		}
		wg.Wait()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		for _, part := range []struct {
			name string
			l    []time.Duration
		}{{"first-s", lat[:100]}, {"rest", lat[100:]}} {
			l := slices.Clone(part.l)
			slices.Sort(l)
			q := func(f float64) float64 { return float64(l[int(f*float64(len(l)-1))].Microseconds()) }
			b.ReportMetric(q(0.5), part.name+"-p50-µs")
			b.ReportMetric(q(0.99), part.name+"-p99-µs")
			b.ReportMetric(q(1), part.name+"-max-µs")
		}
	}
}

// BenchmarkJournalFileSync: the fdatasync after each 211 KiB record (a
// group of 200 one-KiB entries) written from the start of a 64 MiB
// file, growing (as a journal file on its first pass was, before the
// files were filled) or filled with synced zeros beforehand (as now).
// Reports p50, p90, p99 and max in µs.
func BenchmarkJournalFileSync(b *testing.B) {
	for _, filled := range []bool{false, true} {
		b.Run(fmt.Sprintf("filled=%v", filled), func(b *testing.B) {
			for range b.N {
				f, err := OSFS().OpenFile(filepath.Join(b.TempDir(), "j"), os.O_RDWR|os.O_CREATE, 0o644)
				if err != nil {
					b.Fatal(err)
				}
				if filled {
					zeros := make([]byte, 4<<20)
					for off := int64(0); off < 64<<20; off += int64(len(zeros)) {
						if _, err := f.WriteAt(zeros, off); err != nil {
							b.Fatal(err)
						}
					}
					if err := f.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				rec := make([]byte, 211<<10)
				for i := range rec {
					rec[i] = byte(i)
				}
				var d []time.Duration
				for off := int64(0); off+int64(len(rec)) <= 64<<20; off += int64(len(rec)) {
					if _, err := f.WriteAt(rec, off); err != nil {
						b.Fatal(err)
					}
					t := time.Now()
					if err := f.Sync(); err != nil {
						b.Fatal(err)
					}
					d = append(d, time.Since(t))
				}
				_ = f.Close()
				slices.Sort(d)
				q := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))].Microseconds()) }
				b.ReportMetric(q(0.5), "p50-µs")
				b.ReportMetric(q(0.9), "p90-µs")
				b.ReportMetric(q(0.99), "p99-µs")
				b.ReportMetric(q(1), "max-µs")
			}
		})
	}
}
