package storage

import (
	"sync/atomic"
	"syscall"
	"testing"
)

// BenchmarkJournaledGroupCPU: groups of one entry to each of 32 logs, as
// a Produce of 32 partitions makes, with entries small enough to be
// journaled (a quarter of DefaultJournalBytes and up to it). Reports the
// process's CPU seconds (user and system) per GB of entries and the share
// of the bytes whose group was journaled.
func BenchmarkJournaledGroupCPU(b *testing.B) {
	for _, size := range []int{1 << 10, 8 << 10, 24 << 10} {
		b.Run(byteSize(size), func(b *testing.B) {
			var journaled, all atomic.Int64
			s := newStore(b, b.TempDir(), Options{JournalBytes: DefaultJournalBytes,
				BulkEntryBytes: DefaultBulkEntryBytes, OnCommit: func(st CommitStats) {
					all.Add(st.Bytes)
					if st.Journaled {
						journaled.Add(st.Bytes)
					}
				}})
			defer s.Close()
			const logs = 32
			ids := make([]LogID, logs)
			for i := range ids {
				ids[i] = LogID(i + 1)
			}
			if err := s.CreateLogs(ids...); err != nil {
				b.Fatal(err)
			}
			payload := make([]byte, size)
			ps := make([]*Pending, 0, logs)
			b.SetBytes(int64(size * logs))
			start := cpuNow()
			b.ResetTimer()
			for range b.N {
				ps = ps[:0]
				for _, id := range ids {
					p, err := s.Write(id, 1, payload, AppendOptions{})
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
			b.StopTimer()
			gb := float64(b.N*size*logs) / 1e9
			b.ReportMetric((cpuNow()-start)/gb, "cpu-s/GB")
			if n := all.Load(); n > 0 {
				b.ReportMetric(float64(journaled.Load())/float64(n), "journaled")
			}
		})
	}
}

func byteSize(n int) string {
	if n >= 1<<10 {
		return itoa(n>>10) + "KiB"
	}
	return itoa(n) + "B"
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// cpuNow is the process's user and system CPU seconds so far.
func cpuNow() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
