package storage

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.uber.org/zap"
)

// BenchmarkIndexCommits: the index batches of a small-batch workload
// (OpenMessaging Benchmark's 100 partitions of 1 KiB records: one
// single-record entry per batch, every one raising its log's max
// timestamp), 100 entries across 100 logs per group commit (in an order
// other than key order, as a group's queue is), written to
// the index alone as fast as it takes them; the time includes the
// flushes and compactions they cause. cpu-ms/Mentries is the process's
// CPU. memtable=4MiB is pebble's default, for comparison.
func BenchmarkIndexCommits(b *testing.B) {
	for _, mem := range []uint64{4 << 20, indexMemTableBytes} {
		b.Run(fmt.Sprintf("memtable=%dMiB", mem>>20), func(b *testing.B) {
			benchIndexCommits(b, mem, 100, 100)
		})
	}
}

func benchIndexCommits(b *testing.B, memtable uint64, logs, group int) {
	po := indexOptions(Options{Logger: zap.NewNop()})
	po.MemTableSize = memtable
	db, err := pebble.Open(b.TempDir(), po)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	type logW struct {
		next  Offset
		keyed bool
		keyAt Offset
	}
	w := make([]logW, logs)
	now := time.Now().UnixMilli()
	start := cpuNow()
	b.ResetTimer()
	for g := 0; g < b.N; g++ {
		batch := db.NewBatch()
		for i := 0; i < group; i++ {
			id := LogID(((g*group + i) * 37) % logs)
			l := &w[id]
			h := EntryHeader{Offset: l.next, Records: 1, MaxTime: now + int64(g), Size: 1100,
				Cum: int64(l.next+1) * 1100, Ledger: LedgerID(id + 1), Entry: EntryID(l.next), Pos: int64(l.next) * 1128}
			_ = batch.Set(indexKey(id, h.Offset), encodeIndexValue(h), nil)
			if timeKeyDue(l.keyed, l.keyAt, h.Offset) {
				l.keyed, l.keyAt = true, h.Offset
				_ = batch.Set(timeKey(id, h.MaxTime, h.Offset), nil, nil)
			}
			l.next++
		}
		if err := batch.Commit(pebble.NoSync); err != nil {
			b.Fatal(err)
		}
		_ = batch.Close()
	}
	// Let the flushes and compactions the batches caused finish.
	for quiet := 0; quiet < 3; {
		time.Sleep(50 * time.Millisecond)
		if m := db.Metrics(); m.Compact.NumInProgress == 0 && m.Flush.NumInProgress == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
	b.StopTimer()
	var compacted uint64
	m := db.Metrics()
	for _, l := range m.Levels {
		compacted += l.TableBytesCompacted
	}
	entries := float64(b.N) * float64(group)
	b.ReportMetric((cpuNow()-start)*1e3/(entries/1e6), "cpu-ms/Mentries")
	b.ReportMetric(float64(compacted)/entries, "compacted-B/entry")
}
