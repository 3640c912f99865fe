package resolver

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/kgateway/kgateway/storage"
)

// BenchmarkProduce measures one partition's produce path (validation,
// idempotence, write, group-commit wait) with 16 KiB batches of 16 records.
func BenchmarkProduce(b *testing.B) {
	for _, tc := range []struct {
		name       string
		idempotent bool
	}{{"plain", false}, {"idempotent", true}} {
		b.Run(tc.name, func(b *testing.B) {
			g := newBenchGateway(b)
			seq := int32(0)
			b.SetBytes(int64(len(benchBatch(false, 0))))
			b.ResetTimer()
			for range b.N {
				if _, err := g.r.Produce("t", 0, benchBatch(tc.idempotent, seq)); err != nil {
					b.Fatal(err)
				}
				seq += 16
			}
		})
	}
}

// BenchmarkProduceParallel: many goroutines on one partition share group
// commits.
func BenchmarkProduceParallel(b *testing.B) {
	g := newBenchGateway(b)
	batch := benchBatch(false, 0)
	b.SetBytes(int64(len(batch)))
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := g.r.Produce("t", 0, batch); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkFetch reads 1 MiB per fetch from a filled partition: warm
// (everything in the tail cache) and cold (reopened: the cache is empty,
// every read goes to the index and the segment file). The one-batch cases
// read a single 16 KiB batch per fetch, so the cost of one partition
// read's bookkeeping (snapshot, lookups, pins) is not hidden by copying.
//
// The read_committed cases read the same log, which has no transactions:
// they must stay within noise of read_uncommitted (read_committed at no extra cost).
func BenchmarkFetch(b *testing.B) {
	for _, iso := range []Isolation{ReadUncommitted, ReadCommitted} {
		prefix := ""
		if iso == ReadCommitted {
			prefix = "read-committed/"
		}
		b.Run(prefix+"tail-cache", func(b *testing.B) { benchFetch(b, false, 1<<20, iso) })
		b.Run(prefix+"disk", func(b *testing.B) { benchFetch(b, true, 1<<20, iso) })
		b.Run(prefix+"one-batch/tail-cache", func(b *testing.B) { benchFetch(b, false, 1, iso) })
		b.Run(prefix+"one-batch/disk", func(b *testing.B) { benchFetch(b, true, 1, iso) })
	}
}

func benchFetch(b *testing.B, reopen bool, maxBytes int, iso Isolation) {
	g := newBenchGateway(b)
	const batches = 256
	for i := range batches {
		if _, err := g.r.Produce("t", 0, benchBatch(false, int32(i))); err != nil {
			b.Fatal(err)
		}
	}
	if reopen {
		g.close()
		g.open()
	}
	b.ReportAllocs()
	b.ResetTimer()
	var n int64
	for i := range b.N {
		res, err := g.r.Fetch("t", 0, Offset(i%batches)*16, maxBytes, true, iso)
		if err != nil {
			b.Fatal(err)
		}
		n += int64(res.Bytes)
	}
	b.SetBytes(n / int64(b.N))
}

func newBenchGateway(b *testing.B) *gateway {
	g := newGateway(b, Config{})
	g.create("t", 1, nil)
	return g
}

func benchBatch(idempotent bool, seq int32) []byte {
	tb := testBatch{records: 16, baseTS: 1, value: make([]byte, 1000), pid: -1, epoch: -1, seq: -1}
	if idempotent {
		tb.pid, tb.epoch, tb.seq = 1, 0, seq
	}
	return tb.encode()
}

// BenchmarkCreateTopic creates topics of 100 partitions (the metadata
// workload of cmd/kgbench creates 10,000 partitions this way).
func BenchmarkCreateTopic(b *testing.B) {
	g := newGateway(b, Config{})
	b.ResetTimer()
	for i := range b.N {
		g.create(fmt.Sprintf("t%d", i), 100, nil)
	}
}

// BenchmarkScanRecords measures the record check produce runs on every
// batch (the codec check, the record count check and the decompression bound): 64 records of 256 bytes, uncompressed and per codec.
func BenchmarkScanRecords(b *testing.B) {
	tb := plain(64, 1000)
	tb.value = make([]byte, 256)
	for i := range tb.value {
		tb.value[i] = 'a' + byte(i%16)
	}
	for _, c := range append([]Codec{CodecNone}, testCodecs...) {
		batch := compressed(b, tb, c)
		b.Run(codecName(c), func(b *testing.B) {
			b.SetBytes(int64(64 * 256))
			for range b.N {
				if err := scanRecords(batch, 1<<30, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProduceManyPartitions is one round of kgbench's workload 15
// shape: an idempotent producer writes one 1 KiB record to each of 1,000
// partitions, all written before any is waited for (as one Produce
// request's partitions are), over a store with the server's journal and
// tail cache.
func BenchmarkProduceManyPartitions(b *testing.B) {
	const parts = 1000
	g := newGatewayOpts(b, Config{}, storage.Options{JournalBytes: storage.DefaultJournalBytes, TailCacheBytes: 64 << 20})
	g.create("t", parts, nil)
	tb := testBatch{records: 1, baseTS: 1, value: make([]byte, 1024), pid: 7, epoch: 0, seq: 0}
	batch := tb.encode()
	pend := make([]*PendingProduce, parts)
	b.SetBytes(parts * int64(len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		setSequence(batch, int32(i))
		for p := range pend {
			pp, err := g.r.ProduceAsync("t", int32(p), batch)
			if err != nil {
				b.Fatal(err)
			}
			pend[p] = pp
		}
		for _, pp := range pend {
			if _, err := pp.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// setSequence rewrites a batch's base sequence and its CRC32C.
func setSequence(batch []byte, seq int32) {
	const seqOff, crcOff, attrsOff = 53, 17, 21
	binary.BigEndian.PutUint32(batch[seqOff:], uint32(seq))
	binary.BigEndian.PutUint32(batch[crcOff:], crc32.Checksum(batch[attrsOff:], crc32.MakeTable(crc32.Castagnoli)))
}
