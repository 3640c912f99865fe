package recordbatch

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// plainBatch builds an uncompressed batch of n records of valueLen bytes,
// as a producer makes them (null keys, timestamp deltas of a few ms).
func plainBatch(n, valueLen int) []byte {
	b := make([]byte, HeaderLen)
	var rec []byte
	for i := range n {
		rec = rec[:0]
		rec = append(rec, 0)                            // attributes
		rec = binary.AppendVarint(rec, int64(i/100))    // timestamp delta
		rec = binary.AppendVarint(rec, int64(i))        // offset delta
		rec = binary.AppendVarint(rec, -1)              // null key
		rec = binary.AppendVarint(rec, int64(valueLen)) // value
		for j := range valueLen {
			rec = append(rec, byte(i+j))
		}
		rec = binary.AppendVarint(rec, 0) // headers
		b = binary.AppendVarint(b, int64(len(rec)))
		b = append(b, rec...)
	}
	be := binary.BigEndian
	be.PutUint32(b[LengthOff:], uint32(len(b)-LenPrefix))
	b[MagicOff] = 2
	be.PutUint32(b[LastDeltaOff:], uint32(n-1))
	be.PutUint64(b[ProducerIDOff:], ^uint64(0))
	be.PutUint32(b[BaseSeqOff:], ^uint32(0))
	be.PutUint16(b[EpochOff:], ^uint16(0))
	be.PutUint32(b[CountOff:], uint32(n))
	be.PutUint32(b[CRCOff:], crc32.Checksum(b[AttrsOff:], Castagnoli))
	return b
}

// BenchmarkProduceChecks is what a produced uncompressed batch costs the
// checks: its CRC32C and header (Parse), then its records walked
// (ScanRecords); 1 KiB records, one ~1 MiB batch ("hot", as workload 1
// sends them) or 32 of ~512 KiB each checked one after the other, as a
// request for 32 partitions (workload 2), none of them in the cache.
func BenchmarkProduceChecks(b *testing.B) {
	for _, tc := range []struct {
		name    string
		batches int
		records int
	}{{"hot-1x1MiB", 1, 1000}, {"cold-32x512KiB", 32, 500}} {
		bs := make([][]byte, tc.batches)
		total := 0
		for i := range bs {
			bs[i] = plainBatch(tc.records, 1024)
			total += len(bs[i])
		}
		// A buffer past the cache, read between rounds.
		flush := make([]byte, 64<<20)
		for _, part := range []string{"both", "crc", "walk"} {
			b.Run(tc.name+"/"+part, func(b *testing.B) {
				b.SetBytes(int64(total))
				for range b.N {
					if tc.batches > 1 {
						b.StopTimer()
						for i := 0; i < len(flush); i += 64 {
							flush[i]++
						}
						b.StartTimer()
					}
					for _, bt := range bs {
						if _, _, err := Parse(bt); err != nil || part == "walk" {
							break
						}
					}
					for _, bt := range bs {
						if part == "crc" {
							break
						}
						if err := ScanRecords(bt, 1<<30, nil); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
